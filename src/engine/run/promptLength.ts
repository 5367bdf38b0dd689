// Sizing synthetic prompts to the length asked, as the server counts it (workload `prompt.sizing:
// 'server'`): the arithmetic, pure (the run's side, which asks the server, is sizing.ts). A synthetic
// prompt is words chosen to be one token each in the common tokenizers, and every request of a run
// counts alike (syntheticPrompts.ts: the same words, a tag of fixed width; plan.ts: a nonce of fixed
// width); but the server's count also holds the chat template, the nonce and any word its tokenizer
// splits: a "256-token prompt" could be 345 tokens to it. A count is a line in the words: the template
// and nonce its intercept, the tokens a word its slope. So the words are fitted to the server's
// tokenizer where it has one, and once the warmup's replies are in, to what their usage counted: one
// length moves the words by the slope when the tokenizer gave it; without one, a second length fits
// the line. The run file says which way was used (RunFile.promptLength) and what the server counted.
import type { PromptLength, RequestRecord, SizingMethod, TokenizerKind, WorkloadSpec } from '../core/types';
import { sentCounts } from '../core/promptTokens';
import { median } from '../core/stats';

/** At most this many counts of the fit (each one or two small requests to the tokenizer). */
const MAX_PROBES = 8;
/** Words are never more than this many times the tokens asked, whatever a count says (a tokenizer that counts far too few). */
const MAX_WORDS_PER_TOKEN = 4;
/** A usage count more than this many times the tokenizer's (or under its inverse) overrules the tokenizer. */
const OVERRULE_FACTOR = 2;
/** A slope under this is not a tokenizer's: the count does not grow with the text. */
const MIN_SLOPE = 0.05;

/** The synthetic prompt of a workload that asks for sizing, or undefined. */
export function sizedPrompt(w: WorkloadSpec): Extract<WorkloadSpec['prompt'], { kind: 'synthetic' }> | undefined {
  return w.prompt.kind === 'synthetic' && w.prompt.sizing === 'server' ? w.prompt : undefined;
}

/** The workload without sizing: what runs in segments sends (an A/B's two sides send the very same text). */
export function unsized(w: WorkloadSpec): WorkloadSpec {
  if (w.prompt.kind !== 'synthetic' || w.prompt.sizing === undefined) return w;
  const { sizing: _sizing, words: _words, ...prompt } = w.prompt;
  return { ...w, prompt };
}

/** The workload with its synthetic prompts `words` long (recorded in the run file as sent). */
export function withWords(w: WorkloadSpec, words: number): WorkloadSpec {
  if (w.prompt.kind !== 'synthetic') return w;
  return { ...w, prompt: { ...w.prompt, words } };
}

/** Where the sizing stands: the words, how they were found, and the tokens a word is worth (for a correction). */
export interface Sizing {
  readonly words: number;
  readonly method: SizingMethod;
  /** The tokenizer that answered (with method `usage`: one the usage overruled). */
  readonly tokenizer?: TokenizerKind;
  readonly usageCorrected?: boolean;
  /** Server tokens per word, the slope of counts at two lengths (the tokenizer's or the usage's); absent: not known yet. */
  readonly tokensPerWord?: number;
  /** (tokenize) The tokenizer's count at `words`: a usage that says the same leaves nothing to move. */
  readonly counted?: number;
  /** Warmup requests added at a second length (RunFile.promptLength.addedWarmup). */
  readonly addedWarmup?: number;
  /** The words are at their fewest and the count still over the length asked: the template alone is longer. */
  readonly shortest?: boolean;
}

/** The server's count of a prompt of `words` words (a tokenizer's answer, or a reply's usage). */
export interface Counted {
  readonly words: number;
  readonly count: number;
}

/** Whether a count is the length asked, within 2 %. */
export function withinAsked(count: number, asked: number): boolean {
  return Math.abs(count - asked) <= 0.02 * asked;
}

/** Words from 1 to MAX_WORDS_PER_TOKEN × asked. */
function clampWords(words: number, asked: number): number {
  return Math.min(Math.max(1, Math.round(MAX_WORDS_PER_TOKEN * asked)), Math.max(1, Math.round(words)));
}

/** The closest count to `asked` among those made (fewer words on a tie). */
function closest(seen: ReadonlyMap<number, number>, asked: number): { words: number; counted: number } | undefined {
  let best: { words: number; counted: number } | undefined;
  for (const [words, counted] of seen) {
    const d = Math.abs(counted - asked) - (best ? Math.abs(best.counted - asked) : Infinity);
    if (d < 0 || (d === 0 && best !== undefined && words < best.words)) best = { words, counted };
  }
  return best;
}

/** The second length a line is fitted through: half the words (a cheaper request), or 8 more for a short prompt. */
export function secondLength(words: number): number {
  return words > 8 ? Math.round(words / 2) : words + 8;
}

export interface Fit {
  readonly words: number;
  /** The server's count at those words. */
  readonly counted: number;
  readonly tokensPerWord: number;
  readonly shortest?: boolean;
}

/**
 * The words whose prompt the server counts closest to `asked`: the counts at two lengths give a
 * line, then steps along it until the count is exact or stops moving, the words kept from 1 to 4×
 * asked (a tokenizer that counts far too few cannot make the prompt huge). `known`: counts made
 * already (the one that told the tokenizer's shape). The closest is kept even when it is not close
 * (a template longer than the length asked: `shortest`). Undefined when the counter answers less
 * than two lengths (it stopped, the deadline passed) or its counts do not grow with the words (a count
 * that does not follow the text is not a tokenizer's).
 */
export async function fitWords(asked: number, count: (words: number) => Promise<number | undefined>, known: readonly Counted[] = []): Promise<Fit | undefined> {
  const seen = new Map<number, number>(known.map((c) => [c.words, c.count]));
  const probe = async (words: number): Promise<number | undefined> => {
    const w = clampWords(words, asked);
    const c = seen.get(w) ?? (await count(w));
    if (c !== undefined) seen.set(w, c);
    return c;
  };
  const w0 = clampWords(asked, asked);
  const w1 = secondLength(w0);
  const c0 = await probe(w0);
  const c1 = c0 === undefined ? undefined : await probe(w1);
  if (c0 === undefined || c1 === undefined) return undefined;
  const slope = (c0 - c1) / (w0 - w1);
  if (!(Number.isFinite(slope) && slope > MIN_SLOPE)) return undefined;
  let w = clampWords(w0 + (asked - c0) / slope, asked);
  while (seen.size < MAX_PROBES && !seen.has(w)) {
    const c = await probe(w);
    if (c === undefined || c === asked) break;
    w = clampWords(w + (Math.round((asked - c) / slope) || Math.sign(asked - c)), asked);
  }
  const best = closest(seen, asked)!;
  const shortest = best.words === 1 && best.counted > asked && !withinAsked(best.counted, asked);
  return { ...best, tokensPerWord: slope, ...(shortest ? { shortest: true } : {}) };
}

/** The sizing settled at `words` by the warmup's usage. */
function moved(sizing: Sizing, method: SizingMethod, words: number, extra: Partial<Sizing> = {}): Sizing {
  const { shortest: _s, tokensPerWord: _t, counted: _c, ...rest } = sizing;
  const slope = extra.tokensPerWord ?? sizing.tokensPerWord;
  return { ...rest, method, words, ...(slope !== undefined ? { tokensPerWord: slope } : {}), ...(words !== sizing.words || sizing.usageCorrected ? { usageCorrected: true } : {}), ...extra };
}

/** The median count at each length counted. */
function byLength(counted: readonly Counted[]): Map<number, number> {
  const at = new Map<number, number[]>();
  for (const c of counted) at.set(c.words, [...(at.get(c.words) ?? []), c.count]);
  return new Map([...at].map(([w, cs]) => [w, median(cs)]));
}

/** The words the line through the two counts closest to `asked` says count it (a secant: each new count nearer, the next step shorter); undefined when they do not grow with the words. */
function secant(points: ReadonlyMap<number, number>, asked: number): { words: number; counted: number; slope: number } | undefined {
  const [a, b] = [...points].sort((x, y) => Math.abs(x[1] - asked) - Math.abs(y[1] - asked) || x[0] - y[0]);
  if (!a || !b) return undefined;
  const slope = (a[1] - b[1]) / (a[0] - b[0]);
  if (!(Number.isFinite(slope) && slope > MIN_SLOPE)) return undefined;
  const words = clampWords(a[0] + (asked - a[1]) / slope, asked);
  return { words, counted: a[1] + slope * (words - a[0]), slope };
}

/**
 * The sizing once warmup replies are in (`counted`: their usage, each at the words its request was
 * sent with; `sizing`: as it stood before the warmup), and the words of one more warmup request
 * while another is allowed (`canAskMore`) and the length asked is not met. A count within 2 % of the
 * length asked settles it. Counts at two lengths: the line through the two nearest (its words, tried
 * by the next request while allowed). One length: moved by the tokenizer's tokens a word (what a
 * text-only tokenizer did not count: its template, the same for every length); without one, the next
 * request is at one token a word fewer or more (the synthetic words are so to the common tokenizers),
 * which is also where it settles when no more are allowed. A usage count more than twice the length
 * asked, or under half, overrules the tokenizer (method `usage`, the next request at the words cut in
 * proportion); without a tokenizer a count under half is not one that follows the prompt (a server
 * that reports a fixed number) and changes nothing. Counts at two lengths that do not grow with the
 * words change nothing either.
 */
export function correctFromUsage(sizing: Sizing, asked: number, counted: readonly Counted[], canAskMore = false): { readonly sizing: Sizing; readonly more?: number } {
  const points = byLength(counted);
  if (points.size === 0) return { sizing };
  const m = points.get(sizing.words);
  // a count under half the words is no tokenizer's (a server that reports a fixed number); far over is a long template
  const follows = m !== undefined && m >= asked / OVERRULE_FACTOR;
  const overruled = sizing.method === 'tokenize' && m !== undefined && (m < asked / OVERRULE_FACTOR || m > asked * OVERRULE_FACTOR);
  const method: SizingMethod = sizing.method === 'estimate' || overruled ? 'usage' : sizing.method;
  const best = closest(points, asked)!;
  const shortest = (words: number, count: number) => (words === 1 && count > asked && !withinAsked(count, asked) ? { shortest: true } : {});
  // one length and the tokenizer's tokens a word: what it did not count (a template) is the same at every length, so the step is sure
  if (points.size === 1 && m !== undefined && sizing.tokensPerWord !== undefined && !overruled) {
    // the usage says what the tokenizer said: it counted all of it, and its fit is the nearest the words can come
    if (m === sizing.counted) return { sizing };
    return { sizing: moved(sizing, method, clampWords(sizing.words + Math.round((asked - m) / sizing.tokensPerWord), asked)) };
  }
  if (withinAsked(best.counted, asked)) return { sizing: moved(sizing, method, best.words) };
  if (points.size >= 2) {
    const line = secant(points, asked);
    // counts at two lengths that do not grow with the words: not a count to size by (the tokenizer's stands)
    if (!line) return { sizing };
    if (canAskMore && !points.has(line.words)) return { sizing: { ...sizing, method }, more: line.words };
    const at = points.has(line.words) ? best : line;
    return { sizing: moved(sizing, method, at.words, { tokensPerWord: line.slope, ...shortest(at.words, at.counted) }) };
  }
  if (m === undefined || (!follows && !overruled)) return { sizing };
  const step = clampWords(overruled ? (sizing.words * asked) / m : sizing.words + asked - m, asked);
  const guess = step !== sizing.words ? step : clampWords(sizing.words + Math.sign(asked - m), asked);
  if (canAskMore && guess !== sizing.words) return { sizing: { ...sizing, method }, more: guess };
  return overruled ? { sizing } : { sizing: moved(sizing, method, guess) };
}

/** The run file's record: how the prompts were sized, and what the server counted for the measured requests. */
export function promptLengthRecord(sizing: Sizing, asked: number, requests: readonly RequestRecord[]): PromptLength {
  const sent = sentCounts(requests);
  return {
    method: sizing.method,
    asked,
    words: sizing.words,
    ...(sizing.tokenizer ? { tokenizer: sizing.tokenizer } : {}),
    ...(sizing.usageCorrected ? { usageCorrected: true } : {}),
    ...(sizing.addedWarmup ? { addedWarmup: sizing.addedWarmup } : {}),
    ...(sizing.shortest ? { shortest: true } : {}),
    ...(sent ? { sent } : {}),
  };
}
