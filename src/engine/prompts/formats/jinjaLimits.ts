// What a Jinja render checks besides its steps (renderBudget.ts): the few operations of the library's
// interpreter that cost more than a step in one call. Filters and methods that multiply their input
// by an argument (join with a long separator, indent by a huge width, replace with a longer text,
// split into many pieces, tojson with a deep indent) are checked from their evaluated arguments
// before they run; printing or serialising a list or mapping weighs it first, counting shared parts
// each time they would be written (a list doubled thirty times holds 2^30 items, in 30 steps).
import type { RenderBudget } from './renderBudget';

/** A value of the library's interpreter (its classes are not exported). */
export interface RuntimeValueLike {
  readonly type: string;
  readonly value: unknown;
}

export interface Weight {
  /** Characters of the strings and keys inside. */
  readonly chars: number;
  /** Values inside, the value itself included. */
  readonly nodes: number;
  readonly depth: number;
}

/** The characters and values `v` prints as, shared parts counted each time, counted until past `limit`. */
function weigh(v: RuntimeValueLike, limit: number): Weight {
  let chars = 0;
  let nodes = 0;
  let depth = 0;
  const stack: [RuntimeValueLike, number][] = [[v, 0]];
  while (stack.length > 0 && chars + nodes <= limit) {
    const [x, d] = stack.pop()!;
    nodes++;
    depth = Math.max(depth, d);
    if (typeof x.value === 'string') chars += x.value.length;
    else if (Array.isArray(x.value)) {
      // counted when met, so that the stack never holds more than one list past the limit
      nodes += x.value.length;
      for (const c of x.value as RuntimeValueLike[]) stack.push([c, d + 1]);
    } else if (x.value instanceof Map) {
      nodes += x.value.size;
      for (const [k, c] of x.value as Map<string, RuntimeValueLike>) {
        chars += k.length;
        stack.push([c, d + 1]);
      }
    }
  }
  return { chars, nodes, depth };
}

export const isContainer = (v: RuntimeValueLike): boolean => Array.isArray(v.value) || v.value instanceof Map;

/** Weighs a value about to be printed or serialised whole; throws when it is too large to. */
export function guardWhole(budget: RenderBudget, v: RuntimeValueLike): Weight {
  const w = weigh(v, budget.limits.chars);
  budget.chars(w.chars + w.nodes);
  budget.step(w.nodes + (w.chars >> 6));
  return w;
}

/** Occurrences of `sub` in `s` (without overlap), counted up to just past `cap`. */
function occurrences(s: string, sub: string, cap: number): number {
  if (sub === '') return s.length + 1;
  let n = 0;
  for (let at = s.indexOf(sub); at >= 0 && n <= cap; at = s.indexOf(sub, at + sub.length)) n++;
  return n;
}

const text = (v: RuntimeValueLike | undefined): string | undefined => (typeof v?.value === 'string' ? v.value : undefined);
const int = (v: RuntimeValueLike | undefined): number | undefined => (v?.type === 'IntegerValue' ? (v.value as number) : undefined);

/** `s.replace(old, new[, count])` (the filter and the method): the length it would make. */
function replaceGuard(budget: RenderBudget, s: string, args: readonly RuntimeValueLike[], kwargs: ReadonlyMap<string, RuntimeValueLike>): void {
  const [from, to] = [text(args[0]), text(args[1])];
  if (from === undefined || to === undefined || to.length <= from.length) return;
  const growth = to.length - from.length;
  const room = Math.floor((budget.limits.chars - s.length) / growth);
  const count = int(args[2]) ?? int(kwargs.get('count'));
  const n = Math.min(occurrences(s, from, room), count !== undefined && count >= 0 ? count : Infinity);
  budget.step(s.length >> 6);
  budget.chars(s.length + n * growth);
}

/** `s.split(sep)`: the pieces it would make. */
function splitGuard(budget: RenderBudget, s: string, args: readonly RuntimeValueLike[]): void {
  const sep = text(args[0]);
  budget.step(s.length >> 6);
  if (sep !== undefined) return budget.items(occurrences(s, sep, budget.limits.items) + 1);
  let n = 0;
  for (const re = /\S+/g; re.exec(s) !== null && n <= budget.limits.items; ) n++;
  budget.items(n);
}

/** Before a filter called with arguments runs: what it would make, from its operand and arguments. */
export function guardFilter(budget: RenderBudget, name: string, operand: RuntimeValueLike, args: readonly RuntimeValueLike[], kwargs: ReadonlyMap<string, RuntimeValueLike>): void {
  const s = text(operand);
  if (name === 'join') {
    const w = guardWhole(budget, operand);
    const sep = text(args[0] ?? kwargs.get('separator')) ?? '';
    const n = s !== undefined ? s.length : Array.isArray(operand.value) ? operand.value.length : 0;
    budget.chars(w.chars + n * sep.length);
  } else if (name === 'indent' && s !== undefined) {
    const width = int(args[0] ?? kwargs.get('width')) ?? 4;
    budget.chars(s.length + (occurrences(s, '\n', budget.limits.chars) + 1) * Math.max(0, width));
  } else if (name === 'replace' && s !== undefined) {
    replaceGuard(budget, s, args, kwargs);
  } else if (name === 'tojson') {
    const w = guardWhole(budget, operand);
    const indent = Math.max(0, int(kwargs.get('indent')) ?? 0);
    const separators = kwargs.get('separators');
    const sep = Array.isArray(separators?.value) ? (separators.value as RuntimeValueLike[]).reduce((n, x) => n + (text(x)?.length ?? 0), 0) : 4;
    budget.chars(w.chars + w.nodes * (2 + sep + indent * (w.depth + 1)));
  }
}

/** Before a string's method runs: replace and split, the two that can make much more than they read. */
export function guardMethod(budget: RenderBudget, name: string, s: string, args: readonly RuntimeValueLike[], kwargs: ReadonlyMap<string, RuntimeValueLike>): void {
  if (name === 'replace') replaceGuard(budget, s, args, kwargs);
  else if (name === 'split') splitGuard(budget, s, args);
}
