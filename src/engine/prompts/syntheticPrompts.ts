// Synthetic prompts of a given length, and a rough token estimate for prompts the server does not count.
import type { Prompt } from '../core/types';
import { Rng } from '../core/random';

// Short, common English words: each is one token (with its leading space) in the GPT, Llama, Mistral
// and Qwen tokenizers, so N words ≈ N prompt tokens whatever the model.
export const WORDS: readonly string[] = (
  'the of and to in is was for on that with as by at from his her he she it they we you are be this ' +
  'have has had not but or an all were their which one would there what so up out if about who get ' +
  'when make can like time just him know take people into year your good some could them see other ' +
  'than then now look only come its over think also back after use two how our work first well way ' +
  'even new want because any these give day most us man find here thing many long tell very hand ' +
  'high old great life part place same little world last school still own point right home while big ' +
  'house small end line group side number water again room city mother night name next sound light ' +
  'tree land form food sun door road book star word friend game river paper music field open red ' +
  'green blue black white cold warm hot dark short late early young strong clear full late low plan ' +
  'rain snow wind fire stone wood glass gold ship car train bird fish dog cat horse farm town map ' +
  'page story song voice face eye head heart body mind color shape table chair window wall floor ' +
  'garden bridge hill lake sea island north south east west spring summer winter morning evening'
)
  .split(' ')
  .filter((w, i, all) => w !== '' && all.indexOf(w) === i);

/**
 * A synthetic prompt of `tokens` words (≈ tokens). Without sharedPrefix every request's text is
 * different from its first word (led by the index itself spelled in words, then the run's words in
 * an order of its own, shuffled by a generator seeded by seed and index), so no prefix cache,
 * block-hashed (vLLM) or longest-common-prefix (llama.cpp), can skip any of its prefill; every
 * request holds the same words (drawn once from the seed), so that a tokenizer that splits some of
 * them counts every request alike, and a length sized on one request holds for all. With
 * sharedPrefix every request shares the same text and differs only in its last few words: what a
 * prefix cache is good at.
 */
export function syntheticPrompt(index: number, tokens: number, options: { seed?: number; sharedPrefix?: boolean; estimatedTokens?: number } = {}): Prompt {
  const seed = options.seed ?? 0;
  const n = Math.max(1, Math.floor(tokens));
  const tag = indexWords(index);
  const words: string[] = [];
  if (options.sharedPrefix) {
    const rng = new Rng(seed * 7919 + 17);
    const bodyLength = Math.max(0, n - tag.length);
    for (let i = 0; i < bodyLength; i++) words.push(WORDS[rng.int(WORDS.length)]!);
    words.push(...tag.slice(0, n - words.length));
  } else {
    words.push(...tag.slice(0, n));
    // the run's words (the seed's), in this request's order (Fisher–Yates, seeded by seed and index)
    const bag = new Rng(seed * 1_000_003 + 104_723);
    const body: string[] = [];
    while (words.length + body.length < n) body.push(WORDS[bag.int(WORDS.length)]!);
    const order = new Rng(seed * 1_000_003 + index * 7 + 1);
    for (let i = body.length - 1; i > 0; i--) {
      const j = order.int(i + 1);
      [body[i], body[j]] = [body[j]!, body[i]!];
    }
    words.push(...body);
  }
  return {
    messages: [{ role: 'user', content: words.join(' ') }],
    source: options.sharedPrefix ? 'synthetic (shared prefix)' : 'synthetic',
    estimatedTokens: options.estimatedTokens ?? n,
  };
}

/**
 * SGLang's generated shared prefix (bench_serving.py `sample_generated_shared_prefix_requests`): each
 * group has a "system prompt" of its own and each request a "question" of its own after it, joined
 * by a blank line as SGLang joins them. Here the group's prefix is `prefixTokens` words (led by the
 * group's number in words, least significant first, so groups part at the first word) and the
 * question the rest of `tokens` (led by the request's index in capitalised words, so two requests of
 * a group part right after the prefix); both seeded by `seed`. `index`: the request's, as
 * syntheticPrompt's; the caller picks its group (request k: group k mod the groups' count).
 */
export function groupPrompt(index: number, group: number, tokens: number, prefixTokens: number, seed = 0, estimatedTokens?: number): Prompt {
  const n = Math.max(2, Math.floor(tokens));
  const shared = Math.min(n - 1, Math.max(1, Math.floor(prefixTokens)));
  const base = WORDS.length;
  const lead = (i: number, word: (d: number) => string): string[] => {
    const out: string[] = [];
    for (let rest = Math.max(0, Math.floor(i)); out.length < 2 || rest > 0; rest = Math.floor(rest / base)) out.push(word(rest % base));
    return out;
  };
  const fill = (words: string[], length: number, rng: Rng): string => {
    while (words.length < length) words.push(WORDS[rng.int(base)]!);
    return words.slice(0, length).join(' ');
  };
  const prefix = fill(lead(group, (d) => WORDS[d]!), shared, new Rng(seed * 7919 + 104_729 * (group + 1)));
  const question = fill(lead(index, (d) => WORDS[d]![0]!.toUpperCase() + WORDS[d]!.slice(1)), n - shared, new Rng(seed * 1_000_003 + index * 7 + 5));
  return {
    messages: [{ role: 'user', content: `${prefix}\n\n${question}` }],
    source: 'synthetic (shared-prefix groups)',
    estimatedTokens: estimatedTokens ?? n,
  };
}

/** A whole number spelled in base-|WORDS| digits, most significant first: distinct numbers, distinct words. */
export function numberWords(n: number): string[] {
  const base = WORDS.length;
  const out: string[] = [];
  let i = Math.max(0, Math.floor(n));
  do {
    out.unshift(WORDS[i % base]!);
    i = Math.floor(i / base);
  } while (i > 0);
  return out;
}

/** The index spelled in words, at least two: a unique, cache-busting lead. */
function indexWords(index: number): string[] {
  const out = numberWords(index);
  while (out.length < 2) out.unshift('request');
  return out;
}

/**
 * A rough count of tokens in text (BPE tokenizers): a short word is one token, a long one about one
 * per four letters, each digit, punctuation mark or non-Latin character one. Used only when the
 * server reports no usage; the run file says which (tokenSource).
 */
export function estimateTokens(text: string): number {
  // a loop over character codes, not a match object per token: prompt files are untrusted and up to 8 MiB
  let n = 0;
  let word = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) {
      word++;
      continue;
    }
    if (word > 0) n += word <= 7 ? 1 : Math.ceil(word / 4);
    word = 0;
    if (!isSpace(c)) n++;
  }
  return n;
}

/** Whether a UTF-16 code unit is whitespace to a regular expression's \s. */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The estimate for a whole prompt (all messages, plus a few tokens of chat template per message). */
export function estimatePromptTokens(messages: Prompt['messages']): number {
  let n = 0;
  for (const m of messages) n += estimateTokens(m.content) + 4;
  return n;
}
