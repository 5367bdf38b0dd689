// "Compare two endpoints": two configured endpoints (or the local server), or one endpoint with two
// models, run as one interleaved A/B (src/jobs/ab.ts, as `llm-profiler ab`): the same requests to
// both in alternating blocks, so a slow minute hurts both alike. Both runs are stored and opened side
// by side in the report's Compare, with each figure's verdict and interval.
import * as vscode from 'vscode';
import type { Target } from '../../jobs/job';
import { OptionValues, type OptionValue } from '../../jobs/values';
import { Command } from '../commands';
import type { AbOutcome } from '../jobRunner';
import type { Services } from '../services';
import type { Choice, ResolvedChoice } from '../targets';
import { registerCommand } from './register';

/** Arguments when called from code (tests, keybindings); each missing one is asked, or the `ab` default. */
export interface CompareEndpointsArgs {
  /** A configured endpoint's name, or 'local'. */
  readonly a?: string;
  readonly b?: string;
  /** Each side's model (one endpoint with two models: `b` the same as `a`, or left out). */
  readonly modelA?: string;
  readonly modelB?: string;
  /** Per side; split over the blocks. */
  readonly requests?: number;
  readonly concurrency?: number;
  readonly blocks?: number;
  readonly maxTokens?: number;
  readonly promptTokens?: number;
}

interface Side {
  readonly choice: Choice;
  readonly model?: string;
}

const ANOTHER_MODEL = '\u0000another-model';

function choiceLabel(c: Choice): string {
  return c.kind === 'configured' ? c.entry.name : c.kind === 'local' ? 'Local server' : c.url;
}

/** The endpoints to pick from: the configured ones, and the local server where it can run. */
function choices(s: Services): Choice[] {
  const out: Choice[] = s.config.current.endpoints.map((entry) => ({ kind: 'configured', entry }));
  if (!s.localServer.bundledMissing) out.push({ kind: 'local' });
  return out;
}

async function pickEndpoint(s: Services, placeHolder: string, except?: Choice): Promise<Choice | typeof ANOTHER_MODEL | undefined> {
  const items: (vscode.QuickPickItem & { choice?: Choice; another?: true })[] = choices(s)
    .filter((c) => !except || choiceLabel(c) !== choiceLabel(except))
    .map((c) => ({ label: choiceLabel(c), description: c.kind === 'configured' ? [c.entry.url, c.entry.model].filter(Boolean).join(' · ') : 'bundled llama.cpp', choice: c }));
  if (except?.kind === 'configured') items.push({ label: `${except.entry.name} with another model…`, description: 'the same endpoint, two models', another: true });
  if (!items.length) return undefined;
  const pick = await vscode.window.showQuickPick(items, { placeHolder, title: 'LLM Profiler: Compare two endpoints' });
  return pick?.another ? ANOTHER_MODEL : pick?.choice;
}

async function askModel(prompt: string, value: string | undefined, other?: string): Promise<string | undefined> {
  const model = await vscode.window.showInputBox({
    title: 'LLM Profiler: Compare two endpoints', prompt, value: value ?? '', ignoreFocusOut: true,
    validateInput: (v) => (!v.trim() ? 'Name a model the endpoint serves' : other !== undefined && v.trim() === other ? 'The other side has this model: name another' : undefined),
  });
  return model?.trim() || undefined;
}

/** Both sides, from the arguments or asked; undefined when the user cancelled or there is nothing to compare. */
async function sidesOf(s: Services, args: CompareEndpointsArgs): Promise<readonly [Side, Side] | undefined> {
  if (choices(s).length === 0) {
    void vscode.window.showInformationMessage('LLM Profiler: add an endpoint first (Add endpoint), or two to compare them.');
    return undefined;
  }
  const found = (id: string | undefined) => (id === undefined ? undefined : s.targets.find(id));
  const a = found(args.a) ?? await pickEndpoint(s, 'Side A: which endpoint?');
  if (!a || a === ANOTHER_MODEL) return undefined;
  const bArg = args.b === undefined && (args.modelB !== undefined) ? ANOTHER_MODEL : found(args.b);
  const b = bArg ?? await pickEndpoint(s, `Side B: which endpoint to compare with ${choiceLabel(a)}?`, a);
  if (!b) return undefined;
  if (b !== ANOTHER_MODEL && choiceLabel(b) !== choiceLabel(a)) return [{ choice: a, ...(args.modelA ? { model: args.modelA } : {}) }, { choice: b, ...(args.modelB ? { model: args.modelB } : {}) }];
  // one endpoint, two models
  if (a.kind !== 'configured') { void vscode.window.showErrorMessage('LLM Profiler: the local server serves one model: compare it with an endpoint.'); return undefined; }
  const modelA = args.modelA ?? await askModel(`Side A: the model of ${a.entry.name}`, a.entry.model);
  if (!modelA) return undefined;
  const modelB = args.modelB ?? await askModel(`Side B: another model of ${a.entry.name}`, undefined, modelA);
  if (!modelB) return undefined;
  if (modelA === modelB) { void vscode.window.showErrorMessage('LLM Profiler: the two sides are the same endpoint and model.'); return undefined; }
  return [{ choice: a, model: modelA }, { choice: a, model: modelB }];
}

function withModel(r: ResolvedChoice, model: string | undefined): ResolvedChoice {
  if (model === undefined || r.target.kind !== 'endpoint') return r;
  return { ...r, target: { ...r.target, model }, label: `${r.label} (${model})` };
}

/** The workload's option values, as the CLI's flags would give them; what is not given is the `ab` default of the options table. */
function abValues(s: Services, args: CompareEndpointsArgs): OptionValues {
  const v: Record<string, OptionValue | undefined> = {
    requests: args.requests, concurrency: args.concurrency, blocks: args.blocks, maxTokens: args.maxTokens, promptTokens: args.promptTokens,
    // a request's time limit is the settings', as for every run
    timeout: s.config.current.workload.timeoutMs / 1000,
  };
  return OptionValues.of(v, 'Compare two endpoints:');
}

async function compareEndpoints(s: Services, args: CompareEndpointsArgs = {}): Promise<AbOutcome | undefined> {
  if (s.jobs.busy()) return undefined;
  const sides = await sidesOf(s, args);
  if (!sides) return undefined;
  const resolved: ResolvedChoice[] = [];
  for (const side of sides) {
    const r = await s.targets.resolve(side.choice);
    if (!r) return undefined;
    resolved.push(withModel(r, side.model));
  }
  const [ra, rb] = [resolved[0]!, resolved[1]!];
  const targets: readonly [Target, Target] = [ra.target, rb.target];
  const label = `${ra.label} vs ${rb.label}`;
  return s.jobs.runAb({
    label,
    title: `Comparing ${label} (A/B, alternating blocks)`,
    failed: `comparing ${label} failed`,
    apiKeys: [ra.apiKey, rb.apiKey],
    build: (engine) => engine.buildAbJob(abValues(s, args), { targets }),
  });
}

export function registerCompareEndpointsCommand(s: Services): void {
  registerCommand(s.context, Command.CompareEndpoints, (args?: CompareEndpointsArgs) => compareEndpoints(s, args));
}
