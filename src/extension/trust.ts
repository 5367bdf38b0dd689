// Workspace trust for endpoints: one defined by an untrusted workspace's settings is never sent a
// stored key and never fired without a modal confirmation that shows its URL.
import * as vscode from 'vscode';
import type { EndpointEntry } from './configModel';

export type ConfirmUntrusted = (endpoint: Pick<EndpointEntry, 'name' | 'url'>) => Promise<boolean>;

export class TrustGate {
  #trustOverride: boolean | undefined;
  #confirmOverride: ConfirmUntrusted | undefined;

  isTrusted(): boolean {
    return this.#trustOverride ?? vscode.workspace.isTrusted;
  }

  isRestricted(endpoint: Pick<EndpointEntry, 'origin'>): boolean {
    return endpoint.origin === 'workspace' && !this.isTrusted();
  }

  /** Resolves true when the user agreed to send requests to this endpoint (always true when not restricted). */
  async allow(endpoint: EndpointEntry): Promise<boolean> {
    if (!this.isRestricted(endpoint)) return true;
    if (this.#confirmOverride) return this.#confirmOverride(endpoint);
    const send = 'Send requests';
    const pick = await vscode.window.showWarningMessage(
      `Profile "${endpoint.name}"? It is defined by this workspace's settings, and the workspace is not trusted.`,
      {
        modal: true,
        detail: `Requests will be sent to:\n${endpoint.url}\n\nNo stored API key or environment variable will be sent to it. Trust the workspace to use keys with it.`,
      },
      send,
    );
    return pick === send;
  }

  /** Test hooks (exposed only in extension test mode): stand in for the trust state and the modal. */
  setTrustOverride(trusted: boolean | undefined): void { this.#trustOverride = trusted; }
  setConfirmOverride(fn: ConfirmUntrusted | undefined): void { this.#confirmOverride = fn; }
}
