// The CLI reference of docs/cli.md, written from the options table and the commands' usage texts, so
// the page cannot disagree with what the parser takes (test/unit/cliReference.test.ts). Pure text.
import { OPTION_GROUPS, OPTIONS, option } from '../jobs/options';
import type { CommandName, OptionSpec } from '../jobs/options';
import { usage } from './usage';


/** Text as a table cell or list item: no raw `|`, `*`, `<` or line break (backticked spans are kept). */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|').replaceAll('*', '\\*').replaceAll('<', '&lt;');
}

function valueText(v: number | string | boolean | readonly number[]): string {
  return Array.isArray(v) ? v.join(',') : String(v);
}

/** The defaults by command ("10", or "run 10, sweep 16" where they differ), then the note on defaults that depend on other options. */
export function defaultCell(o: OptionSpec): string {
  const byCommand = o.kind === 'boolean' ? [] : o.commands.flatMap((c) => (o.defaults?.[c] !== undefined ? [[c, valueText(o.defaults[c]!)] as const] : []));
  const same = byCommand.length > 0 && byCommand.every(([, v]) => v === byCommand[0]![1]);
  const values = same && byCommand.length === o.commands.length ? [byCommand[0]![1]] : byCommand.map(([c, v]) => `${c}: ${v}`);
  return cell([...values, ...(o.defaultNote ? [o.defaultNote] : [])].join('; '));
}

function settingCell(o: OptionSpec): string {
  if (!o.setting) return '';
  const d = o.defaults?.settings;
  const scale = o.setting.scale ?? 1;
  const shown = d === undefined ? '' : ` (${typeof d === 'number' ? d * scale : valueText(d)})`;
  return `\`llmProfiler.${o.setting.key}\`${cell(shown)}`;
}

function flagCell(o: OptionSpec): string {
  const names = `${o.short ? `${o.short}, ` : ''}${o.flag}${o.value ? ` ${o.value}` : ''}`;
  return `\`${names.replaceAll('|', '\\|')}\``;
}

/** What a value may be: its kind and bounds, as the parser checks them. */
function rangeText(o: OptionSpec): string {
  if (o.kind !== 'int' && o.kind !== 'number') return '';
  const what = o.kind === 'int' ? 'A whole number' : 'A number';
  if (o.min !== undefined && o.max !== undefined) return ` ${what} from ${o.min} to ${o.max}.`;
  if (o.positive) return ` ${what} above 0.`;
  return o.min !== undefined ? ` ${what} ≥ ${o.min}.` : ` ${what}.`;
}

function meaningCell(o: OptionSpec): string {
  const choices = o.kind === 'enum' && o.choices!.length > 1 ? ` One of ${o.choices!.map((c) => `\`${c}\``).join(', ')}.` : '';
  const lists = o.commands.filter((c) => o.list?.includes(c));
  const list = lists.length ? ` A comma-separated list on ${lists.map((c) => `\`${c}\``).join(', ')}.` : '';
  const repeat = o.repeatable && !/repeatable/i.test(o.help) ? ' Repeatable.' : '';
  return `${cell(o.help)}.${rangeText(o)}${choices}${list}${repeat}`.replace(/\.\.(?=\s|$)/g, '.');
}

function optionRow(o: OptionSpec): string {
  const commands = o.commands.map((c) => `\`${c}\``).join(' ');
  return `| ${flagCell(o)} | ${commands} | ${defaultCell(o)} | ${settingCell(o)} | ${meaningCell(o)} |`;
}

/** Each command's usage line and what it does, read from its help text (src/cli/usage.ts). */
function commandLines(commands: readonly CommandName[]): string[] {
  return commands.map((c) => {
    const [first = '', , ...rest] = usage(c).split('\n');
    const end = rest.indexOf('');
    const about = (end < 0 ? rest : rest.slice(0, end)).join(' ');
    return `- \`${first.replace(/^Usage: /, '')}\`: ${cell(about)}`;
  });
}

/**
 * The reference as markdown: the commands, then one table per group of options (flag, commands,
 * default, setting, meaning). `options`: the table to write (the real one unless a test passes another).
 */
export function cliReference(options: readonly OptionSpec[] = OPTIONS): string {
  const commands = option('help').commands;
  const out = ['### Commands', '', ...commandLines(commands)];
  for (const group of OPTION_GROUPS) {
    const rows = options.filter((o) => o.group === group);
    if (rows.length === 0) continue;
    out.push('', `### ${group}`, '', '| flag | commands | default | setting | meaning |', '|---|---|---|---|---|', ...rows.map(optionRow));
  }
  return `${out.join('\n')}\n`;
}
