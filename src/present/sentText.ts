// What a run's prompts were sent with, in words, for every surface: the one line of the CLI's
// result, the report's header and the log ("max 256 tokens (from the file), temperature 0.2 (set by
// you)"), the report's "Sent with" rows per prompt, and the notes of what an API could not take.
// Read from RunFile.prompts (what was sent), never from the workload's defaults alone. Pure.
import { promptRecord, PromptRecords, recordsPrompt, resolveSampling } from '../engine/core/sentWith';
import { SAMPLING_KEYS } from '../engine/core/types';
import type { ParamSource, Prompt, PromptRecord, ResponseFormat, RunFile, SamplingKey, SamplingParams, ToolDefinition, WorkloadSpec } from '../engine/core/types';
import { toolNames } from '../engine/core/toolDefinitions';

/** Where a value came from, as every surface says it. */
export const FROM_TEXT: Readonly<Record<ParamSource, string>> = { workload: 'set by you', file: 'from the file', default: 'default' };

/** Each setting's name as the report's rows show it. */
const SETTING_LABELS: Readonly<Record<SamplingKey, string>> = {
  maxTokens: 'max tokens',
  temperature: 'temperature',
  topP: 'top_p',
  stop: 'stop',
  frequencyPenalty: 'frequency penalty',
  presencePenalty: 'presence penalty',
  responseFormat: 'response format',
  tools: 'tools',
};

/** The settings the one-line summary names (the rest are in the per-prompt rows). */
const LINE_KEYS: readonly SamplingKey[] = ['maxTokens', 'temperature', 'topP', 'responseFormat', 'tools'];

function formatText(f: ResponseFormat): string {
  if (f.type === 'text') return 'text';
  if (f.type === 'json_object') return 'JSON';
  const name = f.json_schema.name;
  return typeof name === 'string' && name !== '' ? `JSON schema "${name}"` : 'JSON schema';
}

/** A value as a row shows it: "256", "0.2", "\"###\", \"END\"", "JSON schema \"answer\"". */
export function valueText(key: SamplingKey, value: SamplingParams[SamplingKey]): string {
  if (value === undefined) return '–';
  if (key === 'responseFormat') return formatText(value as ResponseFormat);
  if (key === 'tools') return (value as readonly ToolDefinition[]).length > 0 ? toolNames(value as readonly ToolDefinition[]) : 'none';
  if (key === 'stop') return (value as readonly string[]).map((s) => JSON.stringify(s)).join(', ');
  return String(value);
}

/** A setting and its value in a sentence: "max 256 tokens", "temperature 0.2", "top_p 0.9", "JSON output". */
function phrase(key: SamplingKey, value: string): string {
  switch (key) {
    case 'maxTokens':
      return `max ${value} tokens`;
    case 'responseFormat':
      return `${value} output`;
    default:
      return `${SETTING_LABELS[key]} ${value}`;
  }
}

/** One setting over every prompt: its value (a range or "per prompt" when they differ) and where it came from. */
function settingPhrase(key: SamplingKey, records: readonly PromptRecord[]): string | undefined {
  const sent = records.filter((r) => r.sent[key] !== undefined);
  if (sent.length === 0) return undefined;
  const values = [...new Set(sent.map((r) => JSON.stringify(r.sent[key])))];
  const sources = [...new Set(sent.map((r) => r.from[key]).filter((x): x is ParamSource => x !== undefined))];
  const from = sources.length === 1 && sent.length === records.length ? FROM_TEXT[sources[0]!] : 'per prompt';
  if (values.length === 1) return `${phrase(key, valueText(key, sent[0]!.sent[key]))} (${from})`;
  const numbers = sent.map((r) => r.sent[key]).filter((v): v is number => typeof v === 'number');
  if (numbers.length === sent.length) return `${phrase(key, `${Math.min(...numbers)}–${Math.max(...numbers)}`)} (per prompt)`;
  return `${SETTING_LABELS[key]} per prompt`;
}

/**
 * What the run's requests were sent with, in one line: from RunFile.prompts when the run has them
 * ("max 256 tokens (from the file), temperature 0.2 (set by you)"), else the workload's values
 * ("max 128 tokens"; a dataset's lines may carry their own: "max tokens per dataset line, else 128").
 */
export function sentLine(run: { readonly workload: Pick<WorkloadSpec, 'maxTokens' | 'temperature' | 'topP'> & Partial<Pick<WorkloadSpec, 'prompt' | 'explicit' | 'responseFormat' | 'tools'>>; readonly prompts?: readonly PromptRecord[] | undefined }): string {
  const records = run.prompts ?? [];
  if (records.length === 0) {
    const w = run.workload;
    // a dataset line's max_tokens (or a ShareGPT reply's length) is its own, unless --max-tokens was given
    const perLine = (w.prompt?.kind === 'dataset' || w.prompt?.kind === 'trace') && !w.explicit?.includes('maxTokens');
    return [
      perLine ? `max tokens per ${w.prompt!.kind} line, else ${w.maxTokens}` : `max ${w.maxTokens} tokens`,
      ...(w.temperature !== undefined ? [`temperature ${w.temperature}`] : []),
      ...(w.topP !== undefined ? [`top_p ${w.topP}`] : []),
      ...(w.responseFormat !== undefined && w.responseFormat.type !== 'text' ? [phrase('responseFormat', valueText('responseFormat', w.responseFormat))] : []),
      ...(w.tools !== undefined && w.tools.length > 0 ? [phrase('tools', valueText('tools', w.tools))] : []),
    ].join(', ');
  }
  return LINE_KEYS.map((k) => settingPhrase(k, records)).filter((x): x is string => x !== undefined).join(', ');
}

/** One prompt's row of the report's "Sent with": its name, and each setting sent with its value and source. */
export interface SentWithRow {
  readonly name: string;
  readonly settings: readonly { readonly key: SamplingKey; readonly label: string; readonly value: string; readonly from: string }[];
}

/** The name a prompt goes by: its own, else its file's base name, else its position. */
function promptName(r: PromptRecord, i: number): string {
  if (r.name) return r.name;
  if (r.source) return r.source.split(/[\\/]/).pop() || r.source;
  return `prompt ${i + 1}`;
}

export function sentWithRows(run: Pick<RunFile, 'prompts'>): SentWithRow[] {
  return (run.prompts ?? []).map((r, i) => ({
    name: promptName(r, i),
    settings: SAMPLING_KEYS.filter((k) => r.sent[k] !== undefined).map((k) => ({
      key: k,
      label: SETTING_LABELS[k],
      value: valueText(k, r.sent[k]),
      from: FROM_TEXT[r.from[k] ?? 'default'],
    })),
  }));
}

/** Each prompt on a line, for the CLI: "summarize: max 256 tokens (from the file), temperature 0.2 (set by you)"; only when the prompts differ. */
export function sentPerPromptLines(run: Pick<RunFile, 'prompts'>, most = 8): string[] {
  const records = run.prompts ?? [];
  if (records.length < 2) return [];
  const lines = records.slice(0, most).map((r, i) => `${promptName(r, i)}: ${sentLine({ workload: { maxTokens: r.sent.maxTokens }, prompts: [r] })}`);
  if (new Set(lines.map((l) => l.slice(l.indexOf(': ') + 2))).size === 1 && records.length <= most) return [];
  if (records.length > most) lines.push(`… and ${records.length - most} more (the run file's "prompts")`);
  return lines;
}

/** What an API could not take of the run's prompts, each said once ("images are not sent: the llamacpp API takes text only"). */
export function sentNotes(run: Pick<RunFile, 'prompts'>): string[] {
  return [...new Set((run.prompts ?? []).flatMap((r) => r.notes ?? []))];
}

/**
 * What a job's prompts will be sent with, before it runs (the same rule as the runner's planner,
 * without the API's notes): for describing a job that carries its prompts.
 */
export function plannedSent(w: WorkloadSpec, prompts: readonly Prompt[] | undefined): readonly PromptRecord[] {
  const records = new PromptRecords();
  for (const p of prompts ?? []) if (recordsPrompt(w, p)) records.add(promptRecord(p, resolveSampling(w, p)));
  return records.list;
}
