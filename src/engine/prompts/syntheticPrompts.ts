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
 * The words synthetic prompts are made of, and their index spelled in (their tag): the short WORDS
 * that are one token each in the common tokenizers and whole words in the bundled server's
 * vocabulary. Every request's tag then counts the same tokens whatever its index, and a prompt's count
 * grows by about the same with each word (a length sized in steps of words can meet the one asked).
 */
export const SHORT_WORDS: readonly string[] = (
  'the of and to in is was for on that with as by at from his her he she it they we you are be this ' +
  'have has had but or an all were one what so up out if who get when make can like time just him know ' +
  'take year your good some them see than then now look only come over also back use two how our work ' +
  'well way even new want any give day most us man find here many long tell very hand high old life ' +
  'part same last own home big end line side room city name next tree land form food sun door road ' +
  'book star word game open red blue cold warm hot dark late full low plan rain snow wind fire wood ' +
  'gold ship car bird fish dog farm town map page song face eye head body mind sea east west'
).split(' ');

/**
 * The words a request's index is spelled in: those of SHORT_WORDS with four letters, so that a
 * tokenizer that splits words by their letters (the bundled server's for words it lacks, a test
 * server's) counts every tag alike too.
 */
const TAG_WORDS: readonly string[] = SHORT_WORDS.filter((w) => w.length === 4);

/** Tag words a request's index is spelled in: |TAG_WORDS|^4 indexes (about 6.5 × 10^7) before a tag grows a word. */
const TAG_WIDTH = 4;

/** `i` in `width` (or more) base-|TAG_WORDS| digits, least significant first (`word` spells a digit): distinct numbers part at the first word. */
function tagDigits(i: number, width: number, word: (d: number) => string = (d) => TAG_WORDS[d]!): string[] {
  const base = TAG_WORDS.length;
  const out: string[] = [];
  for (let rest = Math.max(0, Math.floor(i)); out.length < width || rest > 0; rest = Math.floor(rest / base)) out.push(word(rest % base));
  return out;
}

/** Tag digit `d` capitalised ("That"): one token too in the common tokenizers, a whole word in the bundled server's vocabulary. */
function capitalTag(d: number): string {
  const w = TAG_WORDS[d]!;
  return w[0]!.toUpperCase() + w.slice(1);
}

/** `count` words of the run's bag (drawn once from `bagSeed`: every prompt holds the same words), in an order of their own (Fisher–Yates, seeded by `orderSeed`). */
function shuffledBag(count: number, bagSeed: number, orderSeed: number): string[] {
  const body = drawnBag(count, bagSeed).slice();
  const order = new Rng(orderSeed);
  for (let i = body.length - 1; i > 0; i--) {
    const j = order.int(i + 1);
    [body[i], body[j]] = [body[j]!, body[i]!];
  }
  return body;
}

/** The bags drawn lately (a run's requests share one; sizing tries a few lengths): drawn once each, not per request. */
const BAGS = new Map<string, readonly string[]>();

/** `count` words drawn from SHORT_WORDS by a generator seeded by `bagSeed`. */
function drawnBag(count: number, bagSeed: number): readonly string[] {
  const key = `${bagSeed}:${count}`;
  let bag = BAGS.get(key);
  if (!bag) {
    const rng = new Rng(bagSeed);
    const words: string[] = [];
    while (words.length < count) words.push(SHORT_WORDS[rng.int(SHORT_WORDS.length)]!);
    if (BAGS.size >= 32) BAGS.clear();
    BAGS.set(key, (bag = words));
  }
  return bag;
}

/**
 * A synthetic prompt of `tokens` words (≈ tokens). Without sharedPrefix every request's text is
 * different from its first word (led by its index spelled in tag words, least significant first,
 * then the run's words in an order of its own, shuffled by a generator seeded by seed and index), so
 * no prefix cache, block-hashed (vLLM) or longest-common-prefix (llama.cpp), can skip any of its
 * prefill. Every request counts alike, so that a length sized on one request holds for all: the same
 * words (drawn once from the seed), and a tag of fixed width in words of one token each. With
 * sharedPrefix every request shares the same text and differs only in its last few words (the tag,
 * most significant first): what a prefix cache is good at.
 */
export function syntheticPrompt(index: number, tokens: number, options: { seed?: number; sharedPrefix?: boolean; estimatedTokens?: number } = {}): Prompt {
  const seed = options.seed ?? 0;
  const n = Math.max(1, Math.floor(tokens));
  const tag = tagDigits(index, TAG_WIDTH);
  const words: string[] = [];
  if (options.sharedPrefix) {
    const rng = new Rng(seed * 7919 + 17);
    const bodyLength = Math.max(0, n - tag.length);
    for (let i = 0; i < bodyLength; i++) words.push(SHORT_WORDS[rng.int(SHORT_WORDS.length)]!);
    words.push(...tag.reverse().slice(0, n - words.length));
  } else {
    words.push(...tag.slice(0, n));
    words.push(...shuffledBag(n - words.length, seed * 1_000_003 + 104_723, seed * 1_000_003 + index * 7 + 1));
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
 * group's number in tag words, least significant first, so groups part at the first word) and the
 * question the rest of `tokens` (led by the request's index in capitalised tag words, so two requests
 * of a group part right after the prefix); both the same words in every group and request (drawn
 * once from `seed`, in an order of each one's own), so that every request counts alike. `index`: the
 * request's, as syntheticPrompt's; the caller picks its group (request k: group k mod the groups' count).
 */
export function groupPrompt(index: number, group: number, tokens: number, prefixTokens: number, seed = 0, estimatedTokens?: number): Prompt {
  const n = Math.max(2, Math.floor(tokens));
  const shared = Math.min(n - 1, Math.max(1, Math.floor(prefixTokens)));
  const lead = (digits: string[], length: number, bagSeed: number, orderSeed: number): string => {
    const words = digits.slice(0, length);
    return [...words, ...shuffledBag(length - words.length, bagSeed, orderSeed)].join(' ');
  };
  const prefix = lead(tagDigits(group, 2), shared, seed * 7919 + 104_729, seed * 7919 + 104_729 * (group + 2));
  const question = lead(tagDigits(index, TAG_WIDTH, capitalTag), n - shared, seed * 1_000_003 + 5, seed * 1_000_003 + index * 7 + 5);
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
