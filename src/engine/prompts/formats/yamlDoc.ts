// YAML as prompt files hold it (a whole .prompt.yml, or the front matter of a .prompty / .prompt.md),
// with the file line of every key, so that each problem is reported where it is. A syntax error
// refuses the file in every format, with its line and column: a half-read file would send a prompt
// its author did not write.
import { LineCounter, parseDocument, isMap, isScalar } from 'yaml';
import type { Document, Node as YamlNode, Pair } from 'yaml';
import type { PromptFileRange } from './types';
import type { Reader } from './reader';

/** Aliases a document may expand (a "billion laughs" file stops here instead of filling memory). */
const MAX_ALIASES = 100;

export interface Yaml {
  readonly doc: Document.Parsed;
  readonly value: Record<string, unknown>;
  /** 0-based file line of an offset into the YAML text. */
  line(offset: number): number;
}

/** Parses YAML that starts at file line `lineOffset`; undefined, with the file refused, when it is not a usable mapping. */
export function parseYaml(r: Reader, yamlText: string, lineOffset: number, what: string): Yaml | undefined {
  const lc = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lc, prettyErrors: false, uniqueKeys: false });
  const line = (offset: number) => lc.linePos(Math.max(0, Math.min(offset, yamlText.length))).line - 1 + lineOffset;
  const first = doc.errors[0];
  if (first) {
    const pos = lc.linePos(Math.max(0, Math.min(first.pos[0], yamlText.length)));
    const message = first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    r.refuse(`${what} is not valid YAML (line ${pos.line + lineOffset}, column ${pos.col}): ${message}`, pos.line - 1 + lineOffset, pos.col - 1);
    return undefined;
  }
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    r.refuse(`${what}: ${(e as Error).message}`, lineOffset);
    return undefined;
  }
  if (js === null || js === undefined) return { doc, value: {}, line };
  if (typeof js !== 'object' || Array.isArray(js)) {
    r.refuse(`${what} must be a mapping of keys to values`, lineOffset);
    return undefined;
  }
  return { doc, value: js as Record<string, unknown>, line };
}

export function pairOf(doc: Document.Parsed, path: readonly (string | number)[]): Pair | undefined {
  let node: unknown = doc.contents;
  let pair: Pair | undefined;
  for (const key of path) {
    if (typeof key === 'number') {
      const items = (node as { items?: unknown[] } | undefined)?.items;
      node = Array.isArray(items) ? items[key] : undefined;
      continue;
    }
    if (!isMap(node)) return undefined;
    pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key) as Pair | undefined;
    if (!pair) return undefined;
    node = pair.value;
  }
  return pair;
}

/** The file line of a key (the fallback when absent). */
export function keyLine(y: Yaml | undefined, path: readonly (string | number)[], fallback: number): number {
  if (!y) return fallback;
  const k = pairOf(y.doc, path)?.key as YamlNode | undefined;
  return k?.range ? y.line(k.range[0]) : fallback;
}

export function nodeRange(y: Yaml, node: YamlNode | undefined, fallback: PromptFileRange): PromptFileRange {
  if (!node?.range) return fallback;
  const start = y.line(node.range[0]);
  const end = y.line(Math.max(node.range[0], node.range[1] - 1));
  return { startLine: start, endLine: Math.max(start, end) };
}

export interface FrontMatter {
  /** Absent when the file has none; undefined value with the file refused when it is broken. */
  readonly yaml?: Yaml;
  readonly present: boolean;
  /** First body line (0-based). */
  readonly bodyStart: number;
}

/** Splits `---` front matter from the body; a broken one refuses the file. */
export function frontMatter(r: Reader): FrontMatter {
  const lines = r.lines;
  // blank lines may come first (Prompty's split allows them)
  let open = 0;
  while (open < lines.length && lines[open]!.trim() === '') open++;
  if (open >= lines.length || lines[open]!.trim() !== '---') return { present: false, bodyStart: 0 };
  for (let i = open + 1; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t === '---' || t === '...') {
      const yaml = parseYaml(r, lines.slice(open + 1, i).join('\n'), open + 1, 'the front matter');
      return { ...(yaml ? { yaml } : {}), present: true, bodyStart: i + 1 };
    }
  }
  r.refuse('the front matter is not closed: add a line with --- after it', open);
  return { present: true, bodyStart: lines.length };
}

/** A mapping-valued key of a YAML object, or {} (with a warning when it is there but not a mapping). */
export function mapping(r: Reader, y: Yaml | undefined, value: unknown, path: readonly string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  r.warn(`${path.join('.')} must be a mapping: ignored`, keyLine(y, path, 0));
  return {};
}
