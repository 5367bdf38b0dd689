// The quick picks and input boxes of "Profile endpoint": which endpoint, which workload, the custom
// figures, and which API a server speaks when no probe can tell. UI only: what they return is turned
// into a job elsewhere.
import * as vscode from 'vscode';
import { API_TABLE, type ApiKind } from '../engine/core/apis';
import { REACH_TIMEOUT_MS } from '../engine/core/types';
import { inputProblem, option } from '../jobs/options';
import { chatInput, chatSpec, parseSweepValues, presetWorkload, rampInput, rampSpec, SWEEP_PROMPT_LENGTHS, SWEEP_RATES, sweepConcurrencies, TRAFFIC_DEFAULTS } from '../jobs/presets';
import type { PresetId, PresetInput, SweepAxis, SweepInput, TrafficInput, WorkloadDefaults } from '../jobs/presets';
import { formatMs } from '../present/units';
import type { SidebarFilePurpose } from '../shared/protocol';
import { Command } from './commands';
import type { ConfigService } from './config';
import { loadEngine } from './lazy';
import type { LocalServerManager } from './localServerManager';
import type { NetworkSettings } from './proxySettings';
import type { RunsModel } from './runsModel';
import { choiceId, type Choice, type Targets } from './targets';
import type { TrustGate } from './trust';
import { askUrl } from './urlBox';
import { notFoundQuestion, unreachableText, urlProblem } from './urlInput';

export interface PickerServices {
  readonly config: ConfigService;
  readonly trust: TrustGate;
  readonly runs: RunsModel;
  readonly localServer: LocalServerManager;
  readonly targets: Pick<Targets, 'last' | 'find'>;
  readonly network: NetworkSettings;
}

/** The API pick's items: each API's id, and what it is (the table's label). */
export function apiItems(current?: string): { label: string; description: string; picked: boolean; api: ApiKind }[] {
  return API_TABLE.map((r) => ({ label: r.id, description: r.label, picked: r.id === current, api: r.id }));
}

/** What probing a URL for its API came to: the API; or `undetected` (it answered, no probe told: what it answered); or `failed` (why it could not be asked). */
export type Detection = { readonly api: ApiKind } | { readonly undetected: string; readonly notFound?: boolean } | { readonly failed: string };

/** Probes a URL for its API, as a run with `auto` does (the engine's detectApi, through the proxy the settings name). */
export async function detectApi(s: { readonly network: NetworkSettings }, url: string,
  o: { readonly apiKey?: string; readonly apiKeyHeader?: string; readonly headers?: Readonly<Record<string, string>> } = {}): Promise<Detection> {
  const engine = await loadEngine();
  const network = await s.network.forProbe(engine, url);
  if (network === null) return { failed: 'the proxy or certificate settings cannot be used (see the log)' };
  try {
    const api = await engine.detectApi(url, {
      timeoutMs: 5000,
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      ...(o.apiKeyHeader ? { apiKeyHeader: o.apiKeyHeader } : {}),
      ...(o.headers ? { headers: { ...o.headers } } : {}),
      ...(network ? { network } : {}),
    });
    return { api };
  } catch (err) {
    const e = err as Error & { apiUndetected?: boolean; seen?: string; notFound?: boolean };
    return e.apiUndetected ? { undetected: e.seen ?? '', ...(e.notFound ? { notFound: true } : {}) } : { failed: e.message };
  }
}

/** Which API a server speaks, when no probe could tell: a pick of the kinds, saying what the server answered. */
export async function pickApi(title: string, url: string, answered: string, current?: ApiKind): Promise<ApiKind | undefined> {
  const items = apiItems(current);
  if (current) items.sort((a, b) => Number(b.api === current) - Number(a.api === current));
  const pick = await vscode.window.showQuickPick(items, {
    title,
    // the question first: a long placeholder is cut at the box's end
    placeHolder: `Which API does ${url} speak? No probe could tell${answered ? ` (it answered GET ${answered})` : ''}`,
    matchOnDescription: true,
    ignoreFocusOut: true,
  });
  return pick?.api;
}

/** Why nothing answers at a URL (the reachability check's words, through the proxy the settings name), or undefined when something does. */
export async function unreachableAt(s: { readonly network: NetworkSettings }, url: string): Promise<string | undefined> {
  const engine = await loadEngine();
  const network = await s.network.forProbe(engine, url);
  if (network === null) return undefined; // the settings' problem is said by the run
  return unreachableText(await engine.checkReach(url, REACH_TIMEOUT_MS, network));
}

/**
 * Which API a URL speaks when no probe told: where every probe got 404 under the URL's path, the path
 * is asked about first ('fix-url': back to the URL step); otherwise the API pick.
 */
export async function pickApiOrFixUrl(title: string, url: string, found: { readonly undetected: string; readonly notFound?: boolean }, current?: ApiKind): Promise<ApiKind | 'fix-url' | undefined> {
  const question = notFoundQuestion(url, found);
  if (question === undefined) return pickApi(title, url, found.undetected, current);
  type Item = vscode.QuickPickItem & { api?: ApiKind };
  const items: Item[] = [
    { label: '$(edit) Fix the URL', description: `back to the URL (${url})` },
    { label: 'or keep this URL, with its API', kind: vscode.QuickPickItemKind.Separator },
    ...apiItems(current),
  ];
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: question, matchOnDescription: true, ignoreFocusOut: true });
  if (!pick) return undefined;
  return pick.api ?? 'fix-url';
}

/** The URL of "Enter a URL…", checked as it is typed; nothing answering there keeps the step open. */
function askProfileUrl(s: PickerServices, value?: string): Promise<string | undefined> {
  return askUrl({
    title: 'Profile endpoint',
    prompt: 'Base URL of an OpenAI-compatible, Ollama or llama.cpp server (no key is sent; host:port is taken as http://)',
    placeHolder: 'http://127.0.0.1:8000',
    ...(value !== undefined ? { value } : {}),
    problem: urlProblem,
    unreachable: (url) => unreachableAt(s, url),
    whenUnreachable: 'block',
  });
}

export async function pickChoice(s: PickerServices): Promise<Choice | undefined> {
  type Item = vscode.QuickPickItem & { choice?: Choice; enterUrl?: boolean; add?: boolean };
  const last = s.targets.last;
  const items: Item[] = [];
  for (const e of s.config.current.endpoints) {
    const restricted = s.trust.isRestricted(e);
    const lastRun = s.runs.latestForUrl(e.url);
    items.push({
      label: `$(globe) ${e.name}`,
      description: e.url,
      detail: [e.model, e.api === 'auto' ? undefined : e.api, restricted ? 'from an untrusted workspace: asks first, no key' : undefined,
        lastRun?.ttftP50Ms !== undefined ? `last TTFT p50 ${formatMs(lastRun.ttftP50Ms)}` : undefined].filter(Boolean).join(' · ') || undefined,
      choice: { kind: 'configured', entry: e },
    });
  }
  const ls = s.localServer;
  const missing = ls.bundledMissing;
  const local: Item = missing
    ? { label: '$(server-process) Local server', description: 'not bundled on this platform', detail: 'Needs a llama-server binary (llama.cpp\'s server): pick this to set one, or add an endpoint', choice: { kind: 'local' } }
    : {
      label: '$(server-process) Local server',
      description: ls.handle ? ls.handle.url : 'starts it',
      detail: ls.handle ? `running: ${ls.handle.model}` : `llama.cpp on this machine (${ls.config.modelPath ? ls.config.modelPath : `synthetic ${ls.config.preset}`})`,
      choice: { kind: 'local' },
    };
  const enterUrl: Item = { label: '$(link) Enter a URL…', enterUrl: true };
  const add: Item = { label: '$(add) Add endpoint…', description: 'to your settings', add: true };
  // Where the bundled server cannot run here, it is never the first (or the only) thing offered.
  items.push(...(missing ? [enterUrl, add, local] : [local, enterUrl, add]));
  const lastAt = last === undefined ? -1 : items.findIndex((i) => i.choice && choiceId(i.choice) === last && !(missing && i.choice.kind === 'local'));
  if (lastAt > 0) items.unshift(...items.splice(lastAt, 1));
  if (lastAt >= 0) items[0] = { ...items[0]!, description: `${items[0]!.description ?? ''} · last used`.replace(/^ · /, '') };
  const pick = await vscode.window.showQuickPick(items, { title: 'Profile endpoint', placeHolder: 'Which endpoint?', matchOnDescription: true });
  if (!pick) return undefined;
  if (pick.add) {
    const name = await vscode.commands.executeCommand<string | undefined>(Command.AddEndpoint, { then: 'return' });
    return name !== undefined ? s.targets.find(name) : undefined;
  }
  if (!pick.enterUrl) return pick.choice;
  let typed: string | undefined;
  for (;;) {
    const url = await askProfileUrl(s, typed);
    if (!url) return undefined;
    // the API step, where no probe can tell it (a server that cannot be reached is reported by the run)
    const found = await detectApi(s, url);
    if (!('undetected' in found)) return { kind: 'url', url };
    const api = await pickApiOrFixUrl('Profile endpoint: API', url, found);
    if (api === 'fix-url') { typed = url; continue; }
    return api ? { kind: 'url', url, api } : undefined;
  }
}

/**
 * `promptFile`: a prompt of a file is profiled (conversations and traces bring their own prompts: only
 * a ramp is offered); `dataset`: a dataset's prompts are (no prefix cache check of a synthetic prompt;
 * its conversations or a ramp as traffic).
 */
export async function pickPreset(w: WorkloadDefaults, opts: { readonly promptFile?: boolean; readonly dataset?: boolean } = {}): Promise<PresetId | undefined> {
  const q = presetWorkload('quick', w);
  const l = presetWorkload('load', w);
  const s = presetWorkload('sweep', w);
  const c = presetWorkload('cache-check', w);
  const items: (vscode.QuickPickItem & { id: PresetId })[] = [
    { id: 'quick', label: 'Quick check', description: `${q.requests} requests, one at a time, ${q.maxTokens} tokens out` },
    { id: 'load', label: 'Load test', description: `${l.requests} requests, ${l.concurrency} concurrent, ${l.maxTokens} tokens out` },
    { id: 'custom', label: 'Custom…', description: opts.promptFile || opts.dataset ? 'choose concurrency and requests' : 'choose concurrency, requests and the prompts (synthetic, or a dataset file)' },
    { id: 'sweep', label: 'Sweep', description: `${opts.promptFile || opts.dataset ? 'concurrency or request rate' : 'concurrency, request rate or prompt length'}, ${s.requests} requests each: throughput against latency, the operating point` },
    ...(opts.dataset ? [] : [{ id: 'cache-check' as const, label: 'Prefix cache check', description: `a ${c.promptTokens}-token prompt (or this prompt) cold, again and varied, ${c.requests / 3} rounds: does the server cache prompts?` }]),
    opts.promptFile
      ? { id: 'traffic', label: 'Ramp…', description: 'an open loop whose request rate rises over the run, linear or exponential' }
      : opts.dataset
        ? { id: 'traffic', label: 'Conversations or ramp…', description: "this file's conversations, each a session (--multi-turn), or its prompts at a rising request rate" }
        : { id: 'traffic', label: 'Conversations, trace or ramp…', description: 'multi-turn sessions (synthetic or a dataset), a trace replayed at its timestamps, or a rising request rate' },
  ];
  const pick = await vscode.window.showQuickPick(items, { title: opts.dataset ? 'Profile with this dataset: workload' : 'Profile endpoint: workload', placeHolder: 'Which workload?' });
  return pick?.id;
}

/**
 * Custom…: concurrency, requests, then the prompts: synthetic ones of the settings' length, or a
 * dataset file's (the CLI's --dataset). `promptFile` or `dataset`: the prompts are given, not asked.
 */
export async function askCustom(w: WorkloadDefaults, opts: { readonly promptFile?: boolean; readonly dataset?: string } = {}): Promise<PresetInput | undefined> {
  const steps = opts.promptFile || opts.dataset !== undefined ? 2 : 3;
  const c = await vscode.window.showInputBox({ title: `Custom workload (1/${steps})`, prompt: 'Concurrent requests', value: String(w.concurrency), validateInput: (v) => inputProblem('concurrency', v) });
  if (c === undefined) return undefined;
  const r = await vscode.window.showInputBox({ title: `Custom workload (2/${steps})`, prompt: 'Measured requests', value: String(w.requests), validateInput: (v) => inputProblem('requests', v) });
  if (r === undefined) return undefined;
  const figures = { concurrency: Number(c), requests: Number(r) };
  if (steps === 2) return opts.dataset !== undefined ? { ...figures, dataset: opts.dataset } : figures;
  type Item = vscode.QuickPickItem & { from: 'synthetic' | 'dataset' };
  const items: Item[] = [
    { from: 'synthetic', label: 'Synthetic prompts', description: `${w.promptTokens} tokens each (llmProfiler.workload.promptTokens)` },
    { from: 'dataset', label: 'From a dataset file…', description: 'one prompt per line: ShareGPT, {"prompt"} or {"messages"} (JSON Lines or a JSON list)' },
  ];
  const pick = await vscode.window.showQuickPick(items, { title: 'Custom workload (3/3)', placeHolder: 'Which prompts?' });
  if (!pick) return undefined;
  if (pick.from === 'synthetic') return figures;
  const dataset = await askFile('prompts');
  return dataset === undefined ? undefined : { ...figures, dataset };
}

/**
 * What a sweep varies and over which values: concurrency (1, 2, 4, … as today), request rate (the
 * CLI's `sweep --rate`) or prompt length (`sweep --prompt-tokens`; not for a prompt of a file, whose
 * length is its own). Each list is checked value by value against the options table.
 */
export async function askSweep(w: WorkloadDefaults, opts: { readonly promptFile?: boolean } = {}): Promise<SweepInput | undefined> {
  const s = presetWorkload('sweep', w);
  const concurrencies = sweepConcurrencies(s.concurrency);
  type Item = vscode.QuickPickItem & { axis: SweepAxis; values: readonly number[]; unit: string };
  const items: Item[] = [
    { axis: 'concurrency', values: concurrencies, unit: 'requests in flight', label: 'Concurrency', description: `${concurrencies.join(', ')} requests in flight (closed loop): where latency starts to climb` },
    { axis: 'rate', values: SWEEP_RATES, unit: 'requests per second', label: 'Request rate', description: `${SWEEP_RATES.join(', ')} requests/s (open loop, Poisson arrivals): the load it keeps up with` },
  ];
  if (!opts.promptFile) {
    items.push({ axis: 'promptTokens', values: SWEEP_PROMPT_LENGTHS, unit: 'prompt tokens', label: 'Prompt length', description: `${SWEEP_PROMPT_LENGTHS.join(', ')} tokens, one request at a time: what prefill costs per token` });
  }
  const pick = await vscode.window.showQuickPick(items, { title: 'Sweep: what to vary', placeHolder: 'Sweep over which dimension?' });
  if (!pick) return undefined;
  const problem = (v: string) => { const r = parseSweepValues(pick.axis, v); return 'problem' in r ? r.problem : undefined; };
  const text = await vscode.window.showInputBox({
    title: `Sweep: ${pick.label.toLowerCase()}`,
    prompt: `The ${pick.unit} of each point, separated by commas (${s.requests} requests each)`,
    value: pick.values.join(', '),
    validateInput: problem,
  });
  if (text === undefined) return undefined;
  const r = parseSweepValues(pick.axis, text);
  if ('problem' in r) return undefined;
  return pick.axis === 'concurrency' ? { concurrencies: r.values } : pick.axis === 'rate' ? { rates: r.values } : { promptLengths: r.values };
}

// ---- Traffic: conversations, trace replays, ramps ----

type Step<T> = Promise<T | undefined>;

/** An input box checked as its option (the options table), the value a number; undefined: cancelled. `optional`: blank is allowed (undefined value, `blank` returned). */
async function askNumber(title: string, prompt: string, key: string, value: number | undefined, optional = false): Step<number | 'blank'> {
  const text = await vscode.window.showInputBox({
    title, prompt, value: value === undefined ? '' : String(value),
    validateInput: (v) => (optional && v.trim() === '' ? undefined : inputProblem(key, v)),
  });
  if (text === undefined) return undefined;
  return optional && text.trim() === '' ? 'blank' : Number(text);
}

/** Each file a run can send, as its open dialog asks for it (the pickers' and the sidebar form's Browse…): title and filters. */
const FILE_DIALOGS: Readonly<Record<SidebarFilePurpose, { readonly title: string; readonly filters: Readonly<Record<string, string[]>> }>> = {
  dataset: { title: 'The conversations to send', filters: { 'Conversations (JSON Lines, JSON)': ['jsonl', 'json'], 'All files': ['*'] } },
  trace: { title: 'The trace to replay', filters: { 'Traces (Mooncake JSONL, Azure CSV)': ['jsonl', 'json', 'csv'], 'All files': ['*'] } },
  prompts: { title: 'The dataset whose prompts to send', filters: { 'Datasets (JSON Lines, JSON)': ['jsonl', 'json'], 'All files': ['*'] } },
};

/** A file to send (a dataset of conversations, a trace, a dataset of prompts), from an open dialog. */
export async function askFile(purpose: SidebarFilePurpose): Step<string> {
  const { title, filters } = FILE_DIALOGS[purpose];
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false, canSelectFolders: false, filters: { ...filters }, title,
    ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
  });
  return picked?.[0]?.fsPath;
}

/** Sessions (blank: every conversation of a dataset), sessions in flight, think time: what a conversation asks after its source. */
async function askSessions(title: string, w: WorkloadDefaults, sessions: number | undefined): Step<{ sessions?: number; concurrency: number; thinkTimeMs: number }> {
  const n = await askNumber(`${title} (sessions)`, sessions === undefined ? 'Sessions to run (blank: every conversation of the file)' : 'Sessions to run, each sending all its turns', 'sessions', sessions, sessions === undefined);
  if (n === undefined) return undefined;
  const c = await askNumber(`${title} (in flight)`, 'Sessions in flight at once (a session sends its next turn when its last reply ended)', 'concurrency', Math.min(w.concurrency, typeof n === 'number' ? n : w.concurrency));
  if (c === undefined || c === 'blank') return undefined;
  const think = await askNumber(`${title} (think time)`, 'Think time between a reply and the next turn, ms (0: none)', 'thinkTime', TRAFFIC_DEFAULTS.chat.thinkTimeMs);
  if (think === undefined || think === 'blank') return undefined;
  return { ...(typeof n === 'number' ? { sessions: n } : {}), concurrency: c, thinkTimeMs: think };
}

async function askChat(w: WorkloadDefaults): Step<PresetInput> {
  const title = 'Conversations';
  const check = (v: string) => option('chat').check?.(v.trim())?.replace(/^must be/, 'Enter');
  const text = await vscode.window.showInputBox({ title: `${title} (turns)`, prompt: 'Turns per session, tokens per user message, and the longest reply', value: chatSpec(TRAFFIC_DEFAULTS.chat), validateInput: check });
  const shape = text === undefined ? undefined : chatInput(text.trim());
  if (!shape) return undefined;
  const rest = await askSessions(title, w, TRAFFIC_DEFAULTS.chat.sessions);
  if (!rest) return undefined;
  return { concurrency: rest.concurrency, traffic: { kind: 'chat', ...shape, sessions: rest.sessions ?? TRAFFIC_DEFAULTS.chat.sessions, thinkTimeMs: rest.thinkTimeMs } };
}

async function askRamp(w: WorkloadDefaults): Step<PresetInput> {
  type Item = vscode.QuickPickItem & { shape: 'linear' | 'exponential' };
  const shapes: Item[] = [
    { shape: 'linear', label: 'Linear', description: 'the rate rises by the same step over the run' },
    { shape: 'exponential', label: 'Exponential', description: 'the rate rises by the same factor over the run' },
  ];
  const shape = await vscode.window.showQuickPick(shapes, { title: 'Ramp (shape)', placeHolder: 'How the request rate rises from the first value to the last' });
  if (!shape) return undefined;
  const check = (v: string) => { const r = rampInput(v); return r ? option('ramp').check?.(rampSpec({ shape: shape.shape, ...r }))?.replace(/^must be/, 'Enter') : 'Enter FROM-TO in requests per second, e.g. 1-8'; };
  const text = await vscode.window.showInputBox({ title: 'Ramp (rates)', prompt: 'From and to, requests per second (an open loop: arrivals do not wait for replies)', value: `${TRAFFIC_DEFAULTS.ramp.from}-${TRAFFIC_DEFAULTS.ramp.to}`, validateInput: check });
  const rates = text === undefined ? undefined : rampInput(text);
  if (!rates) return undefined;
  const requests = await askNumber('Ramp (requests)', 'Measured requests over the ramp', 'requests', w.requests);
  if (requests === undefined || requests === 'blank') return undefined;
  return { requests, traffic: { kind: 'ramp', shape: shape.shape, ...rates } };
}

/**
 * Conversations (synthetic, or a dataset's with --multi-turn), a trace replayed at its timestamps, or a
 * ramp: which, then its figures, each checked as the CLI's flag is. Only a ramp with a prompt of a file.
 */
export async function askTraffic(w: WorkloadDefaults, opts: { readonly promptFile?: boolean; readonly dataset?: string } = {}): Step<PresetInput> {
  type Kind = TrafficInput['kind'];
  const items: (vscode.QuickPickItem & { traffic: Kind })[] = [
    { traffic: 'chat', label: 'Conversations', description: `synthetic chats: ${TRAFFIC_DEFAULTS.chat.sessions} sessions of ${TRAFFIC_DEFAULTS.chat.turns} turns, each carrying the history (--chat)` },
    { traffic: 'dataset', label: 'Conversations from a file…', description: 'ShareGPT conversations or {session_id, turns} lines, each a session (--dataset --multi-turn)' },
    { traffic: 'trace', label: 'Trace replay…', description: 'a Mooncake JSONL or Azure CSV trace, sent at its timestamps (--trace)' },
    { traffic: 'ramp', label: 'Ramp', description: 'an open loop whose request rate rises over the run (--ramp)' },
  ];
  // a prompt of a file: a ramp only; a dataset (Profile with this dataset): its conversations, or its prompts in a ramp
  const offered = opts.promptFile ? items.filter((i) => i.traffic === 'ramp')
    : opts.dataset !== undefined ? items.filter((i) => i.traffic === 'ramp' || i.traffic === 'dataset').map((i) => (i.traffic === 'dataset' ? { ...i, label: "This file's conversations" } : i)) : items;
  const pick = offered.length === 1 ? offered[0] : await vscode.window.showQuickPick(offered, { title: 'Profile endpoint: traffic', placeHolder: 'Which traffic?' });
  if (!pick) return undefined;
  switch (pick.traffic) {
    case 'chat': return askChat(w);
    case 'ramp': return askRamp(w);
    case 'dataset': {
      const path = opts.dataset ?? await askFile('dataset');
      if (path === undefined) return undefined;
      const rest = await askSessions('Conversations from a file', w, undefined);
      return rest ? { concurrency: rest.concurrency, traffic: { kind: 'dataset', path, ...(rest.sessions !== undefined ? { sessions: rest.sessions } : {}), thinkTimeMs: rest.thinkTimeMs } } : undefined;
    }
    case 'trace': {
      const path = await askFile('trace');
      if (path === undefined) return undefined;
      const speed = await askNumber('Trace replay (speed)', 'How many times faster than recorded (2: half the gaps)', 'traceSpeed', TRAFFIC_DEFAULTS.traceSpeed);
      return speed === undefined || speed === 'blank' ? undefined : { traffic: { kind: 'trace', path, speed } };
    }
  }
}
