// Option values by key (src/jobs/options.ts), as a command line gives them or as the extension
// builds them from its settings and arguments: the job builders read only this.
import { displayUrl } from '../engine/core/redact';
import { UsageError } from './errors';
import { numberProblem, option, orList } from './options';

/** A value as an error repeats it: a string never with its user:password@. */
const shown = (value: unknown): string => JSON.stringify(typeof value === 'string' ? displayUrl(value) : value);

/** A check's message with the value it quotes freed of user:password@ (the checks of flags that take no URL quote it as given). */
export function withoutCredentials(message: string, value: string): string {
  const safe = displayUrl(value);
  return safe === value ? message : message.split(value).join(safe);
}

export type OptionValue = string | number | boolean | readonly number[] | readonly string[];

export class OptionValues {
  readonly #values: ReadonlyMap<string, OptionValue>;

  constructor(values: ReadonlyMap<string, OptionValue>) {
    this.#values = values;
  }

  /**
   * Values given as an object (the extension's settings, presets and command arguments), checked
   * against the table: a bad one is a UsageError naming `where` and the field. Undefined fields are
   * left out.
   */
  static of(values: Readonly<Record<string, OptionValue | undefined>>, where = 'argument'): OptionValues {
    const map = new Map<string, OptionValue>();
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue;
      const o = option(key);
      const nums = typeof value === 'number' ? [value] : Array.isArray(value) && value.every((x) => typeof x === 'number') ? (value as number[]) : undefined;
      if ((o.kind === 'int' || o.kind === 'number') && nums) {
        for (const n of nums) {
          const problem = numberProblem(o, n);
          if (problem) throw new UsageError(`${where} ${key} ${problem}`);
        }
      } else if (o.kind === 'enum' && !(typeof value === 'string' && o.choices!.includes(value))) {
        throw new UsageError(`${where} ${key} must be ${orList(o.choices!)}, got ${shown(value)}`);
      } else if (o.kind === 'boolean' && typeof value !== 'boolean') {
        throw new UsageError(`${where} ${key} must be true or false, got ${shown(value)}`);
      } else if (o.kind === 'string') {
        // one value, or a list (a repeatable option's, or an A/B option's two sides), each as taken (normalize)
        const taken: string[] = [];
        for (const text of typeof value === 'string' ? [value] : Array.isArray(value) ? value : []) {
          if (typeof text !== 'string') throw new UsageError(`${where} ${key} must be text, got ${shown(text)}`);
          const t = o.normalize?.(text) ?? text;
          const problem = o.check?.(t);
          if (problem) throw new UsageError(`${where} ${key}${problem.startsWith(':') ? '' : ' '}${withoutCredentials(problem, t)}`);
          taken.push(t);
        }
        if (o.normalize) { map.set(key, typeof value === 'string' ? taken[0]! : taken); continue; }
      }
      map.set(key, value);
    }
    return new OptionValues(map);
  }

  has(key: string): boolean {
    return this.#values.has(key);
  }

  /** A text option; of an option given per side (`ab --url A --url B`), side A's. */
  str(key: string): string | undefined {
    const v = this.#values.get(key);
    return Array.isArray(v) ? (v[0] as string | undefined) : (v as string | undefined);
  }

  /** An option given per side (`ab --url A --url B`): none, one for both sides, or A's then B's. */
  sides(key: string): readonly string[] {
    const v = this.#values.get(key);
    return v === undefined ? [] : Array.isArray(v) ? (v as readonly string[]) : [v as string];
  }

  /** A number option (the first value where a list was given). */
  num(key: string): number | undefined {
    const v = this.#values.get(key);
    return Array.isArray(v) ? (v as number[])[0] : (v as number | undefined);
  }

  /** A list option; a single value is a list of one. */
  nums(key: string): readonly number[] | undefined {
    const v = this.#values.get(key);
    return v === undefined ? undefined : Array.isArray(v) ? (v as number[]) : [v as number];
  }

  strs(key: string): readonly string[] {
    return (this.#values.get(key) as readonly string[] | undefined) ?? [];
  }

  flag(key: string): boolean {
    return this.#values.get(key) === true;
  }
}
