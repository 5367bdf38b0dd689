// The one command-line parser: Node's util.parseArgs cuts argv into tokens by the options table
// (src/jobs/options.ts); this file checks them strictly, so that a typo is an error naming the flag
// (exit 2) rather than a silently different run.
import { parseArgs } from 'node:util';
import { displayUrl } from '../engine/core/redact';
import { UsageError } from '../jobs/errors';
import { numberProblem, OPTIONS, optionsOf, orList, takesList } from '../jobs/options';
import type { CommandName, OptionSpec } from '../jobs/options';
import { OptionValues, withoutCredentials } from '../jobs/values';
import type { OptionValue } from '../jobs/values';

type Value = OptionValue;

/** A value as a usage error may repeat it: never a user:password@ (any value may be a URL typed in the wrong place). */
const shown = (text: string): string => JSON.stringify(displayUrl(text));

function suggest(name: string, command: CommandName): string {
  const bare = name.replace(/^-+/, '');
  const elsewhere = OPTIONS.find((o) => o.flag === `--${bare}`);
  if (elsewhere) return ` (${elsewhere.flag} is an option of ${orList(elsewhere.commands.map(String))})`;
  if (bare.length < 3) return '';
  const mine = optionsOf(command).find((o) => o.flag.slice(2).startsWith(bare.slice(0, 4)));
  return mine ? ` (did you mean ${mine.flag}?)` : '';
}

function convertNumber(o: OptionSpec, text: string): number {
  const t = text.trim();
  const whole = o.kind === 'int';
  const n = Number(t);
  if (t === '' || (whole ? !/^-?\d+$/.test(t) : !Number.isFinite(n))) {
    throw new UsageError(`${o.flag} must be ${whole ? 'a whole number' : 'a number'}, got ${shown(text)}`, o.flag);
  }
  const problem = numberProblem(o, n);
  if (problem) throw new UsageError(`${o.flag} ${problem}`, o.flag);
  return n;
}

function convertList(o: OptionSpec, text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const out: number[] = [];
  for (const p of parts) {
    const t = p;
    const n = Number(t);
    const whole = o.kind === 'int';
    if (t === '' || (whole ? !/^-?\d+$/.test(t) : !Number.isFinite(n)) || numberProblem(o, n) !== undefined) {
      const what = o.min !== undefined && o.min >= 0 && !o.positive ? `${whole ? 'whole numbers' : 'numbers'} within ${o.min}..${o.max ?? '∞'}` : `positive ${whole ? 'whole numbers' : 'numbers'}`;
      throw new UsageError(`${o.flag} must list ${what} separated by commas, got ${shown(text)}`, o.flag);
    }
    out.push(n);
  }
  return out;
}

function convert(o: OptionSpec, command: CommandName, text: string): Value {
  if (o.kind === 'int' || o.kind === 'number') return takesList(o, command) ? convertList(o, text) : convertNumber(o, text);
  if (text.trim() === '') throw new UsageError(`${o.flag} needs a value`, o.flag);
  if (o.kind === 'enum' && !o.choices!.includes(text)) throw new UsageError(`${o.flag} must be ${orList(o.choices!)}, got ${shown(text)}`, o.flag);
  const taken = o.normalize?.(text) ?? text;
  const problem = o.check?.(taken);
  if (problem) throw new UsageError(`${o.flag}${problem.startsWith(':') ? '' : ' '}${withoutCredentials(problem, taken)}`, o.flag);
  return taken;
}

/** Option rules across flags: the conflicts and needs the table declares. */
function checkRules(given: ReadonlyMap<string, Value>, command: CommandName): void {
  for (const o of optionsOf(command)) {
    if (!given.has(o.key)) continue;
    for (const c of o.conflicts ?? []) {
      if (!given.has(c.key)) continue;
      const other = OPTIONS.find((x) => x.key === c.key)!;
      throw new UsageError(c.why ? `${o.flag} ${c.why}` : `${other.flag} and ${o.flag} cannot be used together`, o.flag);
    }
    if (o.needs && !given.has(o.needs.key)) {
      const other = OPTIONS.find((x) => x.key === o.needs!.key)!;
      throw new UsageError(`${o.flag} ${o.needs.why ?? `needs ${other.flag}`}`, o.flag);
    }
  }
}

/**
 * The files (positionals) of a command that takes them (`import FILE…`, `compare BASE NEW`) apart from
 * its flags: a flag that takes a value takes the next token with it; after `--`, everything is a file.
 */
export function splitFiles(command: CommandName, argv: readonly string[]): { files: string[]; flags: string[] } {
  const takesValue = new Set<string>(optionsOf(command).filter((o) => o.kind !== 'boolean').flatMap((o) => [o.flag, ...(o.short ? [o.short] : [])]));
  const files: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      files.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('-') && a !== '-') {
      flags.push(a);
      if (takesValue.has(a) && i + 1 < argv.length) flags.push(argv[++i]!);
    } else files.push(a);
  }
  return { files, flags };
}

/** Parses `command`'s argv (after the command name). Throws UsageError naming the flag. */
export function parseCommandLine(command: CommandName, argv: readonly string[]): OptionValues {
  const mine = optionsOf(command);
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const o of mine) {
    config[o.flag.slice(2)] = { type: o.kind === 'boolean' ? 'boolean' : 'string', ...(o.short ? { short: o.short.slice(1) } : {}), ...(o.repeatable ? { multiple: true } : {}) };
  }
  // strict: false hands back unknown flags and missing values as tokens, which are reported here
  // with the flag's name (strict mode would also refuse a negative number as a value).
  const { tokens } = parseArgs({ args: [...argv], options: config, strict: false, allowPositionals: true, tokens: true });
  const byFlag = new Map(mine.map((o) => [o.flag.slice(2), o]));
  const given = new Map<string, Value>();
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') throw new UsageError(`unexpected argument ${shown(t.value)} (flags start with --)`);
    const o = byFlag.get(t.name);
    if (!o) throw new UsageError(`unknown flag ${t.rawName}${suggest(t.rawName, command)}`, t.rawName);
    if (o.kind === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`${o.flag} takes no value`, o.flag);
      if (given.has(o.key)) throw new UsageError(`${o.flag} given more than once`, o.flag);
      given.set(o.key, true);
      continue;
    }
    // A value that is the next flag is a missing value; a negative number is a value.
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('--') && t.value.length > 2)) {
      throw new UsageError(`${o.flag} needs a value`, o.flag);
    }
    const value = convert(o, command, t.value);
    if (o.perSide?.includes(command)) {
      // once for both sides, or twice: side A's, then side B's
      const before = (given.get(o.key) as readonly string[] | undefined) ?? [];
      if (before.length >= 2) throw new UsageError(`${o.flag} given more than twice (once for both sides, or twice: A then B)`, o.flag);
      given.set(o.key, [...before, value as string]);
    } else if (o.repeatable) {
      given.set(o.key, [...((given.get(o.key) as readonly string[] | undefined) ?? []), value as string]);
    } else {
      if (given.has(o.key)) throw new UsageError(`${o.flag} given more than once`, o.flag);
      given.set(o.key, value);
    }
  }
  // ab sends to endpoints only (it starts no local server), so --url is what the others' rules lean on
  if (command === 'ab' && !given.has('url') && !given.has('help') && !given.has('version')) throw new UsageError('needs --url: once for one endpoint (with --model twice), or twice for two endpoints', '--url');
  checkRules(given, command);
  return new OptionValues(given);
}
