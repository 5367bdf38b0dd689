// What each prompt is sent with. The rule: a value the user set on purpose (a CLI flag, a workload
// setting: WorkloadSpec.explicit) beats the prompt file's own; the file's beats the workload's
// defaults. The run file records the result per prompt (RunFile.prompts), and every surface shows
// that, never the workload's default. Pure: the runner, the job text and the tests share it.
import { SAMPLING_KEYS } from './types';
import type { ParamSource, Prompt, PromptRecord, SamplingKey, SamplingParams, WorkloadSpec } from './types';

export type SentParams = PromptRecord['sent'];

export interface ResolvedSampling {
  readonly sent: SentParams;
  readonly from: PromptRecord['from'];
}

/** What of the workload the precedence reads. */
export type SamplingWorkload = Pick<WorkloadSpec, 'maxTokens' | 'temperature' | 'topP' | 'responseFormat' | 'tools' | 'explicit'>;

/** The workload's own value of a key: max tokens always, temperature, top_p, the response format and tools when set; the rest come only from prompt files. */
function workloadValue(w: SamplingWorkload, key: SamplingKey): SamplingParams[SamplingKey] {
  switch (key) {
    case 'maxTokens':
      return w.maxTokens;
    case 'temperature':
      return w.temperature;
    case 'topP':
      return w.topP;
    case 'responseFormat':
      return w.responseFormat;
    case 'tools':
      return w.tools;
    default:
      return undefined;
  }
}

/**
 * The values a prompt is sent with, key by key: the workload's when `explicit` lists the key (and
 * the workload has a value), else the prompt's own ('file': a prompt file's, a dataset line's
 * max_tokens), else the workload's ('default'). A key with none of the three is not sent (the server's default),
 * nor a response format or tools that `explicit` lists without a value (`--response-format none`).
 */
export function resolveSampling(w: SamplingWorkload, own: SamplingParams): ResolvedSampling {
  const sent: { [K in SamplingKey]?: SamplingParams[K] } = {};
  const from: { [K in SamplingKey]?: ParamSource } = {};
  const set = <K extends SamplingKey>(key: K, value: SamplingParams[K], source: ParamSource): void => {
    sent[key] = value;
    from[key] = source;
  };
  for (const key of SAMPLING_KEYS) {
    const mine = workloadValue(w, key);
    const theirs = own[key];
    if (mine !== undefined && w.explicit?.includes(key)) set(key, mine, 'workload');
    // `--response-format none`, `--tools none`: set on purpose to nothing, so not the file's either
    else if (mine === undefined && w.explicit?.includes(key) && (key === 'responseFormat' || key === 'tools')) continue;
    else if (theirs !== undefined) set(key, theirs, 'file');
    else if (mine !== undefined) set(key, mine, 'default');
  }
  return { sent: { ...sent, maxTokens: sent.maxTokens ?? w.maxTokens }, from };
}

/**
 * Whether a prompt gets a record in RunFile.prompts: a prompt file's or a caller's (a CodeLens
 * prompt) does. Synthetic prompts (one per request, no settings of their own) and a dataset's
 * (thousands of lines, only a max_tokens each) do not: the workload says what they were sent with.
 */
export function recordsPrompt(w: Pick<WorkloadSpec, 'prompt'>, p: Prompt): boolean {
  if (w.prompt.kind === 'dataset') return false;
  return !(p.source !== undefined && /^synthetic\b/.test(p.source));
}

export function promptRecord(p: Prompt, r: ResolvedSampling, notes?: readonly string[]): PromptRecord {
  return {
    ...(p.source !== undefined ? { source: p.source } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
    sent: r.sent,
    from: r.from,
    ...(notes && notes.length > 0 ? { notes } : {}),
  };
}

/**
 * RunFile.prompts as it grows: a record equal in every field to one already there is that one (the
 * cache check's leads, a sweep's points and testData rows with the same settings share it), so
 * each index says one thing a prompt was sent with, in the order first sent.
 */
export class PromptRecords {
  readonly #list: PromptRecord[] = [];
  readonly #byKey = new Map<string, number>();

  /** The record's index (`promptRef`). */
  add(record: PromptRecord): number {
    const key = JSON.stringify(record);
    const known = this.#byKey.get(key);
    if (known !== undefined) return known;
    this.#list.push(record);
    this.#byKey.set(key, this.#list.length - 1);
    return this.#list.length - 1;
  }

  /** Adds another run's list (a sweep's point); returns where each of its indexes went. */
  merge(list: readonly PromptRecord[] | undefined): (ref: number) => number {
    const map = (list ?? []).map((r) => this.add(r));
    return (ref) => map[ref] ?? ref;
  }

  get list(): readonly PromptRecord[] {
    return this.#list;
  }
}
