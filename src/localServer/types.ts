// The contract of the local server launcher, used by the CLI and the extension.
import type { SyntheticPreset } from './presets';

/** The shape of a synthetic llama-architecture model (synthetic.ts makes the file). */
export interface ModelShape {
  readonly layers: number;
  /** n_embd; a multiple of 32 and of heads. */
  readonly width: number;
  readonly heads: number;
  readonly kvHeads: number;
  /** feed_forward_length; a multiple of 32. */
  readonly ffn: number;
  readonly vocab: number;
  readonly type: 'f16' | 'q8_0';
  /** llama.context_length (per sequence). */
  readonly contextLength: number;
}

export interface LocalServerOptions {
  /** 'bundled' (node-llama-cpp, our own process) or 'llama-server' (a real llama.cpp server binary). */
  readonly backend?: 'bundled' | 'llama-server';
  /** A GGUF file of the user's, or a synthetic preset made and cached on first use. */
  readonly model?:
    | { readonly kind: 'preset'; readonly preset: SyntheticPreset }
    | { readonly kind: 'file'; readonly path: string }
    /** A synthetic model of a custom shape (see parseShapeSpec in synthetic.ts), made and cached on first use. */
    | { readonly kind: 'shape'; readonly shape: ModelShape };
  /** 0 picks a free port. Always bound to 127.0.0.1. */
  readonly port?: number;
  readonly parallel?: number;
  /** Prefill chunk (tokens per engine step): the chunked-prefill dial. */
  readonly batchSize?: number;
  readonly threads?: number;
  /** Total context over all slots (llama-server's -c); it beats slotContext. */
  readonly ctxSize?: number;
  /** Without ctxSize: the context each slot gets (ctxSize = slotContext × parallel); default DEFAULT_SLOT_CONTEXT. */
  readonly slotContext?: number;
  readonly llamaServerPath?: string;
  readonly readyTimeoutMs?: number;
  readonly onLog?: (line: string) => void;
  /** Added: bundled backend only; false turns off the full-batch fix to show node-llama-cpp's own batching. */
  readonly fullBatches?: boolean;
}

export interface LocalServerHandle {
  readonly url: string;
  readonly pid: number;
  /** The model name the server answers to. */
  readonly model: string;
  readonly backend: 'bundled' | 'llama-server';
  /** Resolves with the exit code when the server process exits for any reason. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
  /** Added: the server's last log lines (stdout and stderr), oldest first. */
  readonly logTail?: () => readonly string[];
  /** Added: the context each slot holds, in tokens (as the bundled server reports it; else ctxSize / parallel). */
  readonly slotContext?: number;
  /** Added: the slots it was started with. */
  readonly parallel?: number;
}
