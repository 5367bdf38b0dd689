// Whether two runs can be compared at all, and what to say before their figures. A different load,
// prompt length or output length is a different workload: the difference would be the workload's,
// not the change's, so `compare` refuses it (unless forced). A warm cache on one side, a buffering
// proxy on one side, a changed model, failures or a cancelled run are said first: the comparison
// stands, but the reader should know.
import type { RunFile, WorkloadSpec } from '../core/types';

export type ComparableProblem = {
  readonly kind: 'load' | 'prompts' | 'max-tokens' | 'ignore-eos' | 'api' | 'structured' | 'sweep' | 'cache' | 'buffering' | 'model' | 'prompt-length' | 'failures' | 'cancelled' | 'interrupted' | 'imported';
  /** `refuse`: not the same workload (compare only with --force); `warn`: said before the figures. */
  readonly severity: 'refuse' | 'warn';
  readonly message: string;
};

export interface ComparableOptions {
  /** Both sides were sent the very same requests (an `ab` run): the endpoints and APIs differ on purpose, and so do a response format and tools given per side. */
  readonly sameRequests?: boolean;
}

function loadOf(w: WorkloadSpec): string {
  const m = w.mode;
  if (m.kind === 'closed') return `concurrency ${m.concurrency}`;
  if (m.kind === 'trace') return `the trace's timestamps at ×${m.speed}`;
  if (m.ramp) return `a ${m.ramp.kind} ramp ${m.ramp.start}→${m.rate}/s (burstiness ${m.burstiness})`;
  return `rate ${m.rate}/s (burstiness ${m.burstiness}${m.maxConcurrency !== undefined ? `, at most ${m.maxConcurrency} in flight` : ''})`;
}

function promptsOf(w: WorkloadSpec): string {
  const p = w.prompt;
  if (p.kind === 'synthetic') return `synthetic prompts of ${p.tokens} tokens${p.groups ? ` in ${p.groups.count} groups sharing ${p.groups.prefixTokens}` : p.sharedPrefix ? ' sharing a prefix' : ''}`;
  if (p.kind === 'chat') return `synthetic ${p.turns}-turn chats of ${p.userTokens}-token turns`;
  return `${p.kind === 'file' ? 'the prompt file' : p.kind === 'trace' ? 'the trace' : p.multiTurn ? 'the conversations' : 'the dataset'} ${p.path}`;
}

/** What the workload sends every request with: its response format and tools, in words, and as a key to compare. */
function sentWithOf(w: WorkloadSpec): { readonly text: string; readonly key: string } {
  const f = w.responseFormat === undefined || w.responseFormat.type === 'text' ? undefined : w.responseFormat;
  const format = f === undefined ? 'no response format' : f.type === 'json_object' ? 'JSON output' : `the JSON schema ${JSON.stringify(f.json_schema.name ?? 'response')}`;
  const tools = w.tools !== undefined && w.tools.length > 0 ? `tools ${w.tools.map((t) => t.function.name).join(', ')}` : 'no tools';
  return { text: `${format}, ${tools}`, key: JSON.stringify([f ?? null, w.tools ?? []]) };
}

/** The workload differences that make two runs different experiments. */
function workloadProblems(a: RunFile, b: RunFile, options: ComparableOptions): ComparableProblem[] {
  const out: ComparableProblem[] = [];
  const refuse = (kind: ComparableProblem['kind'], what: string, x: string, y: string): void => {
    out.push({ kind, severity: 'refuse', message: `${what} differs: BASE ${x}, NEW ${y}` });
  };
  const wa = a.workload;
  const wb = b.workload;
  if (a.sweep === undefined && b.sweep === undefined && loadOf(wa) !== loadOf(wb)) refuse('load', 'the load', loadOf(wa), loadOf(wb));
  if (promptsOf(wa) !== promptsOf(wb) && !(wa.prompt.kind === 'file' && wb.prompt.kind === 'file')) refuse('prompts', 'the prompts', promptsOf(wa), promptsOf(wb));
  if (wa.maxTokens !== wb.maxTokens) refuse('max-tokens', 'max tokens', String(wa.maxTokens), String(wb.maxTokens));
  if (wa.ignoreEos !== wb.ignoreEos) refuse('ignore-eos', 'ignore_eos', String(wa.ignoreEos), String(wb.ignoreEos));
  if (a.endpoint.api !== b.endpoint.api) {
    const message = `the API differs: BASE ${a.endpoint.api}, NEW ${b.endpoint.api}`;
    out.push(options.sameRequests ? { kind: 'api', severity: 'warn', message } : { kind: 'api', severity: 'refuse', message: `${message} (the requests sent are not the same)` });
  }
  const [sa, sb] = [sentWithOf(wa), sentWithOf(wb)];
  if (sa.key !== sb.key) {
    const message = `what every request is sent with differs: BASE ${sa.text}, NEW ${sb.text}${sa.text === sb.text ? ' (not the same definitions)' : ''}`;
    // an A/B run given --response-format (or --tools) per side asks exactly this
    out.push(options.sameRequests ? { kind: 'structured', severity: 'warn', message: `${message}: the difference is what that costs` } : { kind: 'structured', severity: 'refuse', message });
  }
  if ((a.sweep?.dimension ?? 'none') !== (b.sweep?.dimension ?? 'none')) {
    refuse('sweep', 'what is swept', a.sweep?.dimension ?? 'nothing (a single run)', b.sweep?.dimension ?? 'nothing (a single run)');
  }
  return out;
}

/** Cached prompt tokens the server reported, over the measured requests. */
function cachedTokens(run: RunFile): number {
  return run.summary.server?.cachedTokens ?? run.summary.prefixCache?.cachedTokens ?? 0;
}

function meanPromptTokens(run: RunFile): number | undefined {
  const s = run.summary;
  return s.completed > 0 && s.totalInputTokens > 0 ? s.totalInputTokens / s.completed : undefined;
}

/** What to say before the figures. */
function warnings(a: RunFile, b: RunFile): ComparableProblem[] {
  const out: ComparableProblem[] = [];
  const warn = (kind: ComparableProblem['kind'], message: string): void => {
    out.push({ kind, severity: 'warn', message });
  };
  const ma = a.workload.prefixCache ?? 'warm';
  const mb = b.workload.prefixCache ?? 'warm';
  if (ma !== mb) warn('cache', `BASE was measured ${ma} and NEW ${mb} (prefix cache): TTFT differs by the cache as much as by any change`);
  else if ((cachedTokens(a) > 0) !== (cachedTokens(b) > 0)) {
    warn('cache', `the server reported cached prompt tokens on ${cachedTokens(a) > 0 ? 'BASE' : 'NEW'} only: one side's prefill was partly served from the prefix cache`);
  }
  const ba = a.summary.buffering?.detected === true;
  const bb = b.summary.buffering?.detected === true;
  if (ba !== bb) warn('buffering', `${ba ? 'BASE' : 'NEW'}'s stream was buffered on its way (a proxy or gateway): its TTFT and ITL are the buffer's, not the server's`);
  if ((a.endpoint.model ?? '') !== (b.endpoint.model ?? '')) warn('model', `the model differs: BASE ${a.endpoint.model ?? '(not named)'}, NEW ${b.endpoint.model ?? '(not named)'}`);
  const pa = meanPromptTokens(a);
  const pb = meanPromptTokens(b);
  if (pa !== undefined && pb !== undefined && Math.abs(pb - pa) > 0.1 * pa) {
    warn('prompt-length', `the prompts are ${Math.round(pa)} tokens a request on BASE and ${Math.round(pb)} on NEW (as the server counted): TTFT follows prompt length`);
  }
  for (const [name, run] of [['BASE', a], ['NEW', b]] as const) {
    if (run.summary.failed > 0) warn('failures', `${name} has ${run.summary.failed} failed request${run.summary.failed === 1 ? '' : 's'}: only the ${run.summary.completed} that succeeded are compared`);
    if (run.cancelled) warn('cancelled', `${name} was cancelled: only what finished is compared`);
    if (run.interrupted) warn('interrupted', `${name} stopped mid-run (recovered from its journal): only what finished is compared`);
    if (run.importedFrom && run.importedFrom.missing?.length) warn('imported', `${name} was imported from ${run.importedFrom.tool}, which does not record everything (${run.importedFrom.missing[0]})`);
  }
  return out;
}

/** Every reason not to compare two runs (severity refuse) and everything to say first (warn). */
export function comparability(base: RunFile, next: RunFile, options: ComparableOptions = {}): ComparableProblem[] {
  return [...workloadProblems(base, next, options), ...warnings(base, next)];
}
