// Prompty's parser's two patterns over the rendered text, matched as its regular expressions match
// but in linear time: the text comes from an untrusted template, and the expressions backtrack.
// - Role lines (`system:`, `# user:`, `user[name="Alice"]:`):
//     ^\s*#?\s*(system|user|assistant|developer)(\[((?:\w+\s*=\s*"?[^"]*"?\s*,?\s*)+)\])?\s*:\s*$   (any case)
//   whose nested repetition backtracks exponentially on a line such as `user[a= a= a= … x` (30
//   pairs: minutes). The attribute list is matched by walking the positions where a pair may start.
// - Images, `![alt](url "title")`: (!\[[^\]]*\])\(([^\s)]+)(?:\s+[^)]*)?\) with the g flag, whose
//   every failed start scans to the end (`![` repeated: quadratic). Each search here resumes where the
//   last one stopped.

export interface RoleLine {
  readonly role: string;
  /** The text between the brackets ('' when none). */
  readonly attributes: string;
}

/** Longer lines are never role lines (Prompty's are a word and a few attributes). */
const MAX_ROLE_LINE = 4096;
const HEAD = /^\s*#?\s*(system|user|assistant|developer)/i;

/** The role line `line` is (as Prompty reads it), or undefined. */
export function roleLine(line: string): RoleLine | undefined {
  if (line.length > MAX_ROLE_LINE) return undefined;
  const head = HEAD.exec(line);
  if (!head) return undefined;
  let rest = line.slice(head[0].length).trimEnd();
  if (!rest.endsWith(':')) return undefined;
  rest = rest.slice(0, -1).trimEnd();
  if (rest === '') return { role: head[1]!, attributes: '' };
  if (!rest.startsWith('[') || !rest.endsWith(']')) return undefined;
  const attributes = rest.slice(1, -1);
  return attributeList(attributes) ? { role: head[1]!, attributes } : undefined;
}

const WORD = /\w/;
const SPACE = /\s/;

/**
 * Whether `s` is one or more of `\w+\s*=\s*"?[^"]*"?\s*,?\s*`, in linear time. The positions where a
 * pair may start are marked left to right; a value without quotes may end anywhere in the quote-free
 * run it starts in, so each run is marked from its lowest start once.
 */
function attributeList(s: string): boolean {
  const n = s.length;
  const nextQuote = new Int32Array(n + 1);
  const afterWord = new Int32Array(n + 1);
  const afterSpace = new Int32Array(n + 1);
  nextQuote[n] = afterWord[n] = afterSpace[n] = n;
  for (let i = n - 1; i >= 0; i--) {
    const c = s[i]!;
    nextQuote[i] = c === '"' ? i : nextQuote[i + 1]!;
    afterWord[i] = WORD.test(c) ? afterWord[i + 1]! : i;
    afterSpace[i] = SPACE.test(c) ? afterSpace[i + 1]! : i;
  }
  const starts = new Uint8Array(n + 1);
  // the lowest position marked so far in the run that ends at a quote (or at n)
  const lowest = new Map<number, number>();
  const run = (from: number) => {
    const end = nextQuote[from]!;
    const low = lowest.get(end) ?? end + 1;
    if (from < low) {
      starts.fill(1, from, low);
      lowest.set(end, from);
    }
  };
  // after a closing quote: `\s*,?\s*` (once per quote)
  const afterDone = new Uint8Array(n + 1);
  const after = (p: number) => {
    if (afterDone[p]) return;
    afterDone[p] = 1;
    const q = afterSpace[p]!;
    starts.fill(1, p, q + 1);
    if (s[q] === ',') starts.fill(1, q + 1, afterSpace[q + 1]! + 1);
  };
  starts[0] = 1;
  for (let i = 0; i < n; i++) {
    if (!starts[i] || afterWord[i] === i) continue;
    const eq = afterSpace[afterWord[i]!]!;
    if (s[eq] !== '=') continue;
    const j = eq + 1;
    run(j);
    const quote = nextQuote[j]!;
    if (quote === n) continue;
    after(quote + 1);
    if (afterSpace[j]! !== quote) continue;
    run(quote + 1);
    if (nextQuote[quote + 1]! < n) after(nextQuote[quote + 1]! + 1);
  }
  return n > 0 && starts[n] === 1;
}

export interface ImageRef {
  readonly index: number;
  readonly length: number;
  readonly alt: string;
  readonly url: string;
}

/** The first match of `re` (global) at or after a position, for positions that only grow: each character is read once. */
export function forwardSearch(s: string, re: RegExp): (from: number) => number {
  let found = -2;
  return (from) => {
    if (found === -1 || found >= from) return found;
    re.lastIndex = from;
    found = re.exec(s)?.index ?? -1;
    return found;
  };
}

/** The images in `text`, as `text.matchAll(/(!\[[^\]]*\])\(([^\s)]+)(?:\s+[^)]*)?\)/g)` finds them. */
export function images(text: string): ImageRef[] {
  const closeBracket = forwardSearch(text, /\]/g);
  const urlEnd = forwardSearch(text, /[\s)]/g);
  const closeParen = forwardSearch(text, /\)/g);
  const out: ImageRef[] = [];
  for (let i = text.indexOf('!['); i >= 0; ) {
    const bracket = closeBracket(i + 2);
    const end = bracket < 0 || text[bracket + 1] !== '(' ? -1 : urlEnd(bracket + 2);
    // the url is one or more characters, then `)` or whitespace, a title and `)`
    const close = end <= bracket + 2 ? -1 : text[end] === ')' ? end : closeParen(end);
    if (close < 0) {
      i = text.indexOf('![', i + 1);
      continue;
    }
    out.push({ index: i, length: close + 1 - i, alt: text.slice(i + 2, bracket), url: text.slice(bracket + 2, end) });
    i = text.indexOf('![', close + 1);
  }
  return out;
}
