// Profile endpoint (the Prefix cache check among its workloads), Profile with this dataset (a
// dataset's prompts, from the Explorer), the prompt CodeLens' ▶ Profile / Profile with… / Prefix
// cache check (after asking for the prompt file's variables), and Compare prefill chunk sizes: each
// picks what to run, builds the job from the same option values the CLI uses, and hands it to the job runner.
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { Prompt, PromptPulledIn, SloSpec } from '../../engine/core/types';
import type { BuildContext } from '../../jobs/build';
import { presetWorkload, trafficValues, trafficWithPromptFile } from '../../jobs/presets';
import type { PresetId, PresetInput, SweepInput } from '../../jobs/presets';
import { OptionValues } from '../../jobs/values';
import type { OptionValue } from '../../jobs/values';
import type { SyntheticPreset } from '../../localServer/presets';
import { Command } from '../commands';
import { registerCommand } from './register';
import type { JobRequest, RunOutcome } from '../jobRunner';
import { BUNDLED_MISSING } from '../bundledBackend';
import { askCustom, askFile, askSweep, askTraffic, detectApi, pickApi, pickChoice, pickPreset } from '../pickers';
import { explicitSamplingKeys, setByUser, unfilledEditorNote, varAssignments } from '../promptModel';
import { editorStateNow, fillVariables } from '../promptVariables';
import { PROMPT_REF_KEY, type PromptRef } from '../runStore';
import type { Services } from '../services';
import type { Choice, ResolvedChoice } from '../targets';
import { offerWayForward } from './localServer';

/**
 * A workload's figures; for the sweep preset also what it varies (SweepInput: `concurrencies`, `rates`
 * or `promptLengths`, one of them; none: 1, 2, 4, … up to `concurrency`).
 */
export interface WorkloadInput extends PresetInput, SweepInput {
  /** For the sweep preset: stop after a point that shows saturation (default true). */
  readonly stopOnSaturation?: boolean;
}

/** Arguments of Profile endpoint when called from code (sidebar, tests, keybindings). */
export interface ProfileArgs {
  /** A configured endpoint's name, a URL, or 'local'. */
  readonly endpoint?: string;
  readonly preset?: PresetId;
  readonly workload?: WorkloadInput;
}

/** Arguments of Compare prefill chunk sizes; each has the CLI's `prefill-dial` default (the options table). */
export interface PrefillDialArgs {
  readonly batchSizes?: readonly number[];
  readonly durationS?: number;
  readonly parallel?: number;
  readonly decodeStreams?: number;
  readonly shortPromptTokens?: number;
  readonly shortMaxTokens?: number;
  readonly longPromptTokens?: number;
  readonly longMaxTokens?: number;
  readonly longRate?: number;
  /** The synthetic model (default: llmProfiler.localServer.preset); ignored with a modelPath. */
  readonly preset?: SyntheticPreset;
}

interface PromptExtras {
  readonly prompt: Prompt;
  readonly ref: PromptRef;
  readonly slo?: SloSpec;
  /** The values the prompt was filled with (answers, the editor's): recorded in the run file as `--var` would. */
  readonly vars?: Readonly<Record<string, string>>;
  /** What its file pulled in (files, environment variables): recorded in the run file as the CLI's read would. */
  readonly pulledIn?: PromptPulledIn;
}

/** The prompt file and its variables' values, as the CLI's --prompt-file and --var give them. */
function promptFileValues(prompt: PromptExtras): Record<string, OptionValue | undefined> {
  const assignments = prompt.vars ? varAssignments(prompt.vars) : [];
  return { promptFile: prompt.ref.file, var: assignments.length > 0 ? assignments : undefined };
}

/** The option values of a preset's workload, as the CLI's flags would give them. */
function workloadValues(s: Services, preset: PresetId, input: WorkloadInput | undefined, prompt: PromptExtras | undefined): Record<string, OptionValue | undefined> {
  const w = presetWorkload(preset, s.config.current.workload, input);
  // conversations, a trace, a ramp: the CLI's Traffic flags (and of the rest only what goes with them)
  if ((preset === 'custom' || preset === 'traffic') && input?.traffic) {
    const values = trafficValues(input.traffic, w, s.config.current.prefixCache);
    // a ramp of a prompt file: the file's prompt and its own max tokens, unless the caller gave them; of a dataset: its prompts
    const file = prompt ? { ...promptFileValues(prompt), promptTokens: undefined, maxTokens: input.maxTokens }
      : input.dataset !== undefined && input.traffic.kind === 'ramp' ? { dataset: input.dataset, promptTokens: undefined } : {};
    return { ...values, ...file, respectRetryAfter: s.config.current.respectRetryAfter || undefined };
  }
  if (preset === 'cache-check') {
    // the check sets its own load; the prompt is this one, or a synthetic one of the check's length
    return { ...(prompt ? promptFileValues(prompt) : { promptTokens: w.promptTokens }), maxTokens: w.maxTokens, timeout: w.timeoutMs / 1000 };
  }
  const sweep = preset === 'sweep';
  // a sweep's list, as the CLI's --concurrency, --rate or --prompt-tokens gives it
  const list = (l: readonly number[] | undefined) => (sweep && l?.length ? [...l] : undefined);
  const [concurrencies, rates, lengths] = [list(input?.concurrencies), list(input?.rates), list(input?.promptLengths)];
  return {
    ...(sweep
      ? {
          concurrency: concurrencies,
          rate: rates,
          concurrencyLimit: concurrencies || rates || lengths ? undefined : w.concurrency,
          noEarlyStop: input?.stopOnSaturation === false ? true : undefined,
        }
      : { concurrency: w.concurrency }),
    requests: w.requests,
    warmup: w.warmup,
    maxTokens: w.maxTokens,
    // the prompts: a prompt file's, a dataset's (--dataset), or synthetic ones of a length
    ...(prompt ? promptFileValues(prompt) : input?.dataset !== undefined ? { dataset: input.dataset } : { promptTokens: lengths ?? w.promptTokens }),
    timeout: w.timeoutMs / 1000,
    prefixCache: s.config.current.prefixCache,
    respectRetryAfter: s.config.current.respectRetryAfter || undefined,
  };
}

/**
 * An endpoint whose API is 'auto' (a typed URL, a configured entry) is probed first: where the server
 * answers and no probe tells its API, the user picks it (the CLI would say "pass --api"). Otherwise the
 * run detects it itself (and says why a server cannot be reached). Undefined: the user cancelled.
 */
async function withApi(s: Services, resolved: ResolvedChoice): Promise<ResolvedChoice | undefined> {
  const t = resolved.target;
  if (t.kind !== 'endpoint' || t.api !== 'auto') return resolved;
  const found = await detectApi(s, t.url, { ...(resolved.apiKey ? { apiKey: resolved.apiKey } : {}), ...(t.apiKeyHeader ? { apiKeyHeader: t.apiKeyHeader } : {}), ...(t.headers ? { headers: t.headers } : {}) });
  if (!('undetected' in found)) return resolved;
  s.log.info(`could not tell which API ${t.url} speaks (GET ${found.undetected}): asking`);
  const api = await pickApi(`Profile ${resolved.label}: API`, t.url, found.undetected);
  return api ? { ...resolved, target: { ...t, api } } : undefined;
}

async function profile(s: Services, choice: Choice, preset: PresetId, input: WorkloadInput | undefined, prompt?: PromptExtras): Promise<RunOutcome | undefined> {
  if (choice.kind === 'local' && s.localServer.bundledMissing) {
    s.log.warn(`run not started: ${BUNDLED_MISSING}`);
    void offerWayForward(s, BUNDLED_MISSING);
    return undefined;
  }
  if ((prompt || input?.dataset !== undefined) && preset === 'sweep' && input?.promptLengths?.length) {
    void vscode.window.showErrorMessage(`LLM Profiler: a prompt-length sweep sends synthetic prompts of each length: it cannot sweep ${prompt ? 'a prompt of a file' : "a dataset's prompts"}. Sweep concurrency or request rate instead.`);
    return undefined;
  }
  const own = prompt && input?.traffic ? trafficWithPromptFile(input.traffic) : undefined;
  if (own) {
    void vscode.window.showErrorMessage(`LLM Profiler: ${own}: it cannot send a prompt of a file. Use a ramp, or profile the endpoint (LLM Profiler: Profile endpoint).`);
    return undefined;
  }
  const first = await s.targets.resolve(choice);
  if (!first) return undefined;
  const resolved = await withApi(s, first);
  if (!resolved) return undefined;
  const sweep = preset === 'sweep';
  const check = preset === 'cache-check';
  const settingMaxTokens = vscode.workspace.getConfiguration('llmProfiler').inspect<number>('workload.maxTokens');
  const sentMaxTokens = presetWorkload(preset, s.config.current.workload, input).maxTokens;
  const ctx: BuildContext = {
    target: resolved.target,
    // only the values the user set beat the prompt file's own; the presets' are defaults
    // traffic: what its values set, as the CLI takes it from its flags
    ...(input?.traffic ? {} : { explicit: explicitSamplingKeys(preset, sentMaxTokens, { value: s.config.current.workload.maxTokens, setByUser: setByUser(settingMaxTokens) }, input) }),
    ...(prompt ? { prompts: [prompt.prompt] } : {}),
    ...(prompt?.pulledIn ? { pulledIn: prompt.pulledIn } : {}),
    ...((prompt?.slo ?? s.config.current.slo) ? { slo: prompt?.slo ?? s.config.current.slo } : {}),
  };
  const request: JobRequest = {
    label: resolved.label,
    title: `${check ? 'Checking the prefix cache of' : sweep ? 'Sweeping' : 'Profiling'} ${resolved.label}`,
    ...(resolved.apiKey !== undefined ? { apiKey: resolved.apiKey } : {}),
    ...(prompt ? { extras: { [PROMPT_REF_KEY]: prompt.ref } } : {}),
    live: !sweep && !check,
    build: async (engine) => {
      const values = OptionValues.of(workloadValues(s, preset, input, prompt), 'the workload:');
      if (check) return engine.buildCacheCheckJob(values, ctx);
      return sweep ? engine.buildSweepJob(values, ctx) : engine.buildRunJob(values, ctx);
    },
  };
  const outcome = await s.jobs.run(request);
  // whatever path ran it (the palette, the sidebar, a prompt's lens): ▶ Profile and the pickers start from it
  const t = resolved.target;
  if (outcome) await s.targets.remember(choice.kind === 'url' && t.kind === 'endpoint' && t.api !== 'auto' ? { ...choice, api: t.api } : choice);
  return outcome;
}

/**
 * The workload: the preset given or picked, then what it asks (Custom…'s figures and prompts, a
 * sweep's axis and values, the traffic). `promptFile`: a prompt of a file is profiled; `dataset`: the
 * prompts are this dataset's (Profile with this dataset): neither is offered a workload of its own prompts.
 */
async function chooseWorkload(s: Services, preset: PresetId | undefined, input: WorkloadInput | undefined, opts: { readonly promptFile?: boolean; readonly dataset?: string } = {}): Promise<{ preset: PresetId; input?: WorkloadInput } | undefined> {
  const { promptFile = false, dataset } = opts;
  const w = s.config.current.workload;
  const p = preset ?? (await pickPreset(w, { promptFile, dataset: dataset !== undefined }));
  if (!p) return undefined;
  const given = { ...input, ...(dataset !== undefined ? { dataset } : {}) };
  if (p === 'traffic' && !input?.traffic) {
    const asked = await askTraffic(w, { promptFile, ...(dataset !== undefined ? { dataset } : {}) });
    // a ramp sends the dataset's prompts; its conversations (--multi-turn) are the traffic itself
    return asked ? { preset: p, input: { ...(asked.traffic?.kind === 'ramp' ? given : input), ...asked } } : undefined;
  }
  if (p === 'custom' && !input) {
    const custom = await askCustom(w, { promptFile, ...(dataset !== undefined ? { dataset } : {}) });
    return custom ? { preset: p, input: custom } : undefined;
  }
  if (p === 'sweep' && !input) {
    const sweep = await askSweep(w, { promptFile: promptFile || dataset !== undefined });
    return sweep ? { preset: p, input: { ...given, ...sweep } } : undefined;
  }
  return { preset: p, ...(Object.keys(given).length ? { input: given } : {}) };
}

function findChoice(s: Services, id: string): Choice | undefined {
  const choice = s.targets.find(id);
  if (!choice) void vscode.window.showErrorMessage(`LLM Profiler: no endpoint named "${id}" in llmProfiler.endpoints.`);
  return choice;
}

/** The whole interactive flow of Profile endpoint; args skip the pickers they answer. */
async function profileEndpoint(s: Services, args: ProfileArgs | undefined): Promise<RunOutcome | undefined> {
  // one run at a time: said before the pickers, not after them
  if (s.jobs.busy()) return undefined;
  const choice = args?.endpoint ? findChoice(s, args.endpoint) : await pickChoice(s);
  if (!choice) return undefined;
  const w = await chooseWorkload(s, args?.preset, args?.workload);
  if (!w) return undefined;
  const outcome = await profile(s, choice, w.preset, w.input);
  return outcome;
}

/**
 * Profile with this dataset (the Explorer's menu on a .json or .jsonl file, or the palette with a file
 * picker): its prompts, one per line (ShareGPT, `{"prompt"}`, `{"messages"}`), under the load picked;
 * or its conversations, each a session. A file that is not a dataset is refused by the run, naming its line.
 */
async function profileDataset(s: Services, uri: vscode.Uri | undefined): Promise<RunOutcome | undefined> {
  // one run at a time: said before the file dialog and the pickers (also when reached from the import's toast)
  if (s.jobs.busy()) return undefined;
  const path = uri?.scheme === 'file' ? uri.fsPath : uri ? undefined : await askFile('prompts');
  if (path === undefined) {
    if (uri) void vscode.window.showErrorMessage(`LLM Profiler: ${uri.toString(true)} is not a file on this machine: only a local file can be sent as a dataset.`);
    return undefined;
  }
  const choice = await pickChoice(s);
  if (!choice) return undefined;
  const w = await chooseWorkload(s, undefined, undefined, { dataset: path });
  if (!w) return undefined;
  return profile(s, choice, w.preset, w.input);
}

/** Says why a prompt cannot be profiled: the file's refusal first, with its line; a button opens it there. */
function cannotProfile(doc: vscode.TextDocument, message: string, line: number | undefined): void {
  const where = line !== undefined ? `${basename(doc.fileName)}:${line + 1}: ` : `${basename(doc.fileName)}: `;
  void vscode.window.showErrorMessage(`LLM Profiler: cannot profile this prompt: ${where}${message}`, ...(line !== undefined ? ['Go to line'] : [])).then((pick) => {
    if (pick) void vscode.window.showTextDocument(doc, { selection: new vscode.Range(line!, 0, line!, 0) });
  });
}

/**
 * ▶ Profile (the last target, a quick check) or Profile with… (pick both) on the prompt at a line,
 * after asking for the file's variables (▶ Profile: only those never answered; Profile with…: all).
 */
async function profilePrompt(s: Services, uri: vscode.Uri | undefined, range: vscode.Range | undefined, choose: boolean, args?: ProfileArgs): Promise<RunOutcome | undefined> {
  const docUri = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!docUri) return undefined;
  if (s.jobs.busy()) return undefined;
  // the editor's variables as they are when the command starts, before any input box
  const editor = editorStateNow(docUri);
  const doc = await vscode.workspace.openTextDocument(docUri);
  const line = range?.start.line ?? vscode.window.activeTextEditor?.selection.active.line ?? 0;
  const filled = await fillVariables(s.promptReader, s.promptAnswers, doc, choose ? 'all' : 'missing', editor);
  if (!filled) return undefined;
  const parsed = filled.parse;
  const found = parsed.prompts.find((p) => p.range.startLine === line) ?? parsed.prompts.find((p) => p.range.startLine <= line && line <= p.range.endLine);
  if (!found) {
    if (parsed.refusal) cannotProfile(doc, parsed.refusal.message, parsed.refusal.line);
    else cannotProfile(doc, 'there is no prompt at this line', line);
    return undefined;
  }
  const name = basename(doc.fileName);
  for (const w of parsed.warnings) s.log.warn(`${name}${w.line !== undefined ? `:${w.line + 1}` : ''}: ${w.message}`);
  if (filled.unfilledEditor.length > 0) {
    const notes = filled.unfilledEditor.map((v) => `${name}:${v.line + 1}: ${unfilledEditorNote(v)}`);
    for (const n of notes) s.log.warn(n);
    void vscode.window.showWarningMessage(`LLM Profiler: ${notes.join('; ')}`);
  }
  const remembered = args?.endpoint ?? (choose ? undefined : s.targets.last);
  const choice = (remembered ? s.targets.find(remembered) : undefined) ?? (await pickChoice(s));
  if (!choice) return undefined;
  const w = await chooseWorkload(s, args?.preset ?? (choose ? undefined : 'quick'), args?.workload, { promptFile: true });
  if (!w) return undefined;
  const ref: PromptRef = { file: doc.uri.fsPath, startLine: found.range.startLine, ...(found.name !== undefined ? { name: found.name } : {}) };
  const outcome = await profile(s, choice, w.preset, w.input, { prompt: found.prompt, ref, vars: filled.vars, ...(parsed.slo ? { slo: parsed.slo } : {}), ...(parsed.pulledIn ? { pulledIn: parsed.pulledIn } : {}) });
  return outcome;
}

/** The "N variables to fill" lens: asks for the file's variables never answered, and remembers the answers. */
async function fillPromptVariables(s: Services, uri: vscode.Uri | undefined): Promise<boolean> {
  const docUri = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!docUri) return false;
  const editor = editorStateNow(docUri);
  const doc = await vscode.workspace.openTextDocument(docUri);
  return (await fillVariables(s.promptReader, s.promptAnswers, doc, 'missing', editor)) !== undefined;
}

/**
 * The chunked-prefill dial: the same mixed workload (short decodes plus an occasional long prompt)
 * on the local server at each prefill chunk size, one server per size, stored as one run.
 */
async function prefillDial(s: Services, args: PrefillDialArgs = {}): Promise<RunOutcome | undefined> {
  if (s.localServer.bundledMissing) {
    s.log.warn(`the prefill dial was not started: ${BUNDLED_MISSING}`);
    void offerWayForward(s, `the prefill dial runs on the local server, and ${BUNDLED_MISSING}`);
    return undefined;
  }
  if (s.jobs.busy()) return undefined;
  const cfg = s.config.current;
  const ls = cfg.localServer;
  return s.jobs.run({
    label: 'prefill dial (local server)',
    title: 'Comparing prefill chunk sizes',
    failed: 'the prefill dial failed',
    build: (engine) => engine.buildDialJob(OptionValues.of({
      batchSizes: args.batchSizes ? [...args.batchSizes] : undefined,
      duration: args.durationS,
      parallel: args.parallel,
      decodeStreams: args.decodeStreams,
      shortPromptTokens: args.shortPromptTokens,
      shortMaxTokens: args.shortMaxTokens,
      longPromptTokens: args.longPromptTokens,
      longMaxTokens: args.longMaxTokens,
      longRate: args.longRate,
      ...(ls.modelPath ? { modelFile: ls.modelPath } : { preset: args.preset ?? ls.preset }),
      backend: ls.backend,
      llamaServer: ls.llamaServerPath,
      timeout: cfg.workload.timeoutMs / 1000,
      slo: cfg.sloText || undefined,
    }, 'the prefill dial:')),
  });
}

/** The palette's "Cancel run" (shown while a run is in progress): what the notification's Cancel does. */
function cancelRun(s: Services): boolean {
  const a = s.jobs.active;
  if (!a) {
    void vscode.window.showInformationMessage('LLM Profiler: no run is in progress.');
    return false;
  }
  s.log.info(`run ${a.runId}: cancel asked (LLM Profiler: Cancel run)`);
  s.jobs.cancel();
  return true;
}

export function registerProfileCommands(s: Services): void {
  registerCommand(s.context, Command.CancelRun, () => cancelRun(s));
  registerCommand(s.context, Command.ProfileEndpoint, (args?: ProfileArgs) => profileEndpoint(s, args));
  registerCommand(s.context, Command.ProfileDataset, (uri?: vscode.Uri) => profileDataset(s, uri));
  registerCommand(s.context, Command.ProfilePrompt, (uri?: vscode.Uri, range?: vscode.Range, args?: ProfileArgs) => profilePrompt(s, uri, range, false, args));
  registerCommand(s.context, Command.ProfilePromptWith, (uri?: vscode.Uri, range?: vscode.Range, args?: ProfileArgs) => profilePrompt(s, uri, range, true, args));
  registerCommand(s.context, Command.FillPromptVariables, (uri?: vscode.Uri) => fillPromptVariables(s, uri));
  registerCommand(s.context, Command.ComparePrefillChunks, (args?: PrefillDialArgs) => prefillDial(s, args));
}
