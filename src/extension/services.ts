// What activate builds once and hands to each area's registrations: no singletons, no module state.
import type * as vscode from 'vscode';
import type { BaselineService } from './baselineService';
import type { ConfigService } from './config';
import type { JobRunner } from './jobRunner';
import type { LocalServerManager } from './localServerManager';
import type { Log } from './log';
import type { NetworkSettings } from './proxySettings';
import type { PromptAnswers } from './promptVariables';
import type { PromptReader } from './promptWorker/client';
import type { ReportPanels } from './reportPanel';
import type { RunsModel } from './runsModel';
import type { ApiKeys } from './secrets';
import type { Targets } from './targets';
import type { TrustGate } from './trust';

export interface Services {
  readonly context: vscode.ExtensionContext;
  readonly log: Log;
  readonly config: ConfigService;
  readonly keys: ApiKeys;
  readonly trust: TrustGate;
  readonly targets: Targets;
  readonly runs: RunsModel;
  readonly localServer: LocalServerManager;
  readonly reports: ReportPanels;
  readonly jobs: JobRunner;
  /** The proxy and certificates of each job and probe (VS Code's http.* settings, llmProfiler.tls.*, the environment). */
  readonly network: NetworkSettings;
  /** Where run files are kept (per workspace, else global storage). */
  readonly runsDir: string;
  /** Answers to prompt files' variables, remembered per file (workspace state). */
  readonly promptAnswers: PromptAnswers;
  /** Reads prompt files off the extension host's thread (its worker thread stops when the extension does). */
  readonly promptReader: PromptReader;
  /** Runs pinned as baselines of their endpoint or prompt file, and each run against its baseline. */
  readonly baselines: BaselineService;
}
