// Sizing synthetic prompts to the length asked, as the server counts it (workload `prompt.sizing:
// 'server'`). A synthetic prompt is words chosen to be one token each in the common tokenizers, but
// the server's count also holds the chat template, the cold-cache nonce and any word its tokenizer
// splits: a "256-token prompt" could be 345 tokens to it. So the words are fitted before the run to
// the server's own tokenizer where it has one (transport/tokenize.ts), and, once the warmup's replies
// are in, moved by what their usage counted beyond the length asked (the template a text-only
// tokenizer does not see, or all of it without a tokenizer). The run file says which way was used
// (RunFile.promptLength) and what the server counted for the measured requests.
import type { EndpointSpec, NetworkSpec, Prompt, PromptLength, RequestRecord, WorkloadSpec } from '../core/types';
import { tokenCounter, type TokenizerKind } from '../transport/tokenize';

/** At most this many counts of the fit (each one or two small requests to the tokenizer). */
const MAX_PROBES = 8;

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
  readonly method: PromptLength['method'];
  readonly tokenizer?: TokenizerKind;
  readonly usageCorrected?: boolean;
  /** Server tokens per word, from the tokenizer's fit (1 without one: the words are chosen so). */
  readonly tokensPerWord: number;
}

/**
 * The words whose prompt the server counts closest to `asked`: a line through two counts (the
 * template and nonce are its intercept, the tokens a word its slope), then steps along it until the
 * count is exact or stops moving. Undefined when the counter stops answering, or its counts do not
 * follow the words (a count that does not grow with the text is not a tokenizer's).
 */
export async function fitWords(asked: number, count: (words: number) => Promise<number | undefined>): Promise<{ words: number; tokensPerWord: number } | undefined> {
  const seen = new Map<number, number>();
  const probe = async (words: number): Promise<number | undefined> => {
    const known = seen.get(words);
    if (known !== undefined) return known;
    const c = await count(words);
    if (c !== undefined) seen.set(words, c);
    return c;
  };
  const w0 = Math.max(1, Math.round(asked));
  const c0 = await probe(w0);
  if (c0 === undefined) return undefined;
  let rate = 1;
  if (c0 !== asked) {
    const w1 = w0 > 8 ? Math.round(w0 / 2) : w0 + 8;
    const c1 = await probe(w1);
    if (c1 === undefined) return undefined;
    const slope = (c0 - c1) / (w0 - w1);
    if (!(slope > 0.05 && Number.isFinite(slope))) return undefined;
    rate = slope;
    let w = Math.max(1, Math.round(w0 + (asked - c0) / rate));
    while (seen.size < MAX_PROBES && !seen.has(w)) {
      const c = await probe(w);
      if (c === undefined || c === asked) break;
      const step = Math.round((asked - c) / rate) || Math.sign(asked - c);
      w = Math.max(1, w + step);
    }
  }
  let best = w0;
  for (const [words, c] of seen) if (Math.abs(c - asked) < Math.abs(seen.get(best)! - asked) || (Math.abs(c - asked) === Math.abs(seen.get(best)! - asked) && words < best)) best = words;
  // far off still (a template longer than the length asked): not sized by this
  if (Math.abs(seen.get(best)! - asked) > Math.max(2, 0.1 * asked)) return undefined;
  return { words: best, tokensPerWord: rate };
}

/**
 * Sizes with the server's tokenizer, before anything is sent: `sample(words)` is the prompt a
 * measured request sends with that many words (its nonce included). Without a tokenizer: the words
 * asked, to be corrected from the warmup's usage (method 'estimate' until then).
 */
export async function sizeWithTokenizer(endpoint: EndpointSpec, asked: number, sample: (words: number) => Prompt, options: { readonly apiKey?: string; readonly network?: NetworkSpec }): Promise<Sizing> {
  const counter = await tokenCounter(endpoint, sample(asked), options);
  if (!counter) return { words: asked, method: 'estimate', tokensPerWord: 1 };
  try {
    const fit = await fitWords(asked, (words) => counter.count(sample(words)));
    if (!fit) return { words: asked, method: 'estimate', tokensPerWord: 1 };
    return { words: fit.words, method: 'tokenize', tokenizer: counter.kind, tokensPerWord: fit.tokensPerWord };
  } finally {
    await counter.close();
  }
}

/** The prompt tokens a reply's usage reported (not the client's estimate), for a request that succeeded. */
function serverCounted(r: RequestRecord): number | undefined {
  return r.error === undefined && !r.promptTokensEstimated && r.promptTokens !== undefined ? r.promptTokens : undefined;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The sizing after the warmup: the words moved by the median difference between the length asked
 * and what the warmup's replies counted (usage). Unchanged when none reported usage, when the
 * difference is within two tokens or 1 % (a request's own nonce and index words differ by about
 * that), or when the count is less than half or more than twice what was asked: a count that
 * does not follow the prompt (a server that reports a fixed number, a template far longer than the
 * prompt) is not one to size by.
 */
export function correctFromUsage(sizing: Sizing, asked: number, warmup: readonly RequestRecord[]): Sizing {
  const counted = warmup.map(serverCounted).filter((n): n is number => n !== undefined);
  if (counted.length === 0) return sizing;
  const m = median(counted);
  if (m < asked / 2 || m > asked * 2) return sizing;
  const diff = asked - m;
  const step = Math.abs(diff) <= Math.max(2, 0.01 * asked) ? 0 : Math.round(diff / sizing.tokensPerWord);
  const method = sizing.method === 'estimate' ? 'usage' : sizing.method;
  if (step === 0) return { ...sizing, method };
  return { ...sizing, method, words: Math.max(1, sizing.words + step), usageCorrected: true };
}

/** The run file's record: how the prompts were sized, and what the server counted for the measured requests. */
export function promptLengthRecord(sizing: Sizing, asked: number, requests: readonly RequestRecord[]): PromptLength {
  const counted = requests.filter((r) => !r.warmup).map(serverCounted).filter((n): n is number => n !== undefined);
  return {
    method: sizing.method,
    asked,
    words: sizing.words,
    ...(sizing.tokenizer ? { tokenizer: sizing.tokenizer } : {}),
    ...(sizing.usageCorrected ? { usageCorrected: true } : {}),
    ...(counted.length > 0 ? { sent: { p50: median(counted), min: counted.reduce((a, x) => Math.min(a, x)), max: counted.reduce((a, x) => Math.max(a, x)), requests: counted.length } } : {}),
  };
}
