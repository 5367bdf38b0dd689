// Each command's help, written from the options table, so the help can never disagree with what
// the parser takes.
import { OPTION_GROUPS, optionsOf } from '../jobs/options';
import type { CommandName, OptionSpec } from '../jobs/options';
import { IMPORT_TOOL_ROWS } from '../engine/core/types';
import { latenciesFor } from '../present/metricCatalogue';

const WIDTH = 100;
const COLUMN = 28;
/** What a run measures, from the metric catalogue: "TTFT, TTFO, TPOT, ITL, E2E, throughput, goodput, stalls". */
const MEASURED = `${latenciesFor('cli').map((m) => m.label).join(', ')}, throughput, goodput, stalls`;

const ABOUT: Readonly<Record<CommandName, { usage: string; about: string }>> = {
  run: {
    usage: 'llm-profiler run [--url URL] [options]',
    about: `Profile a streaming LLM endpoint: ${MEASURED}.`,
  },
  sweep: {
    usage: 'llm-profiler sweep [--url URL] (--concurrency 1,2,4,8 | --rate 1,2,4 | --prompt-tokens 128,512,2048) [options]',
    about: 'Run one workload at several concurrencies, request rates or prompt lengths and fit the trade-off:\nTPOT(B) = base + k·B, the knee, the operating point (highest goodput meeting every SLO).',
  },
  'prefill-dial': {
    usage: 'llm-profiler prefill-dial [options]',
    about: 'Compare prefill chunk sizes on the local server: the same mixed workload (short decodes plus\nlong prompts at a seeded schedule) at each --batch-size, side by side.',
  },
  'cache-check': {
    usage: 'llm-profiler cache-check [--url URL] [--prompt-file F | --prompt-tokens N] [options]',
    about: "Does the server answer a prompt it has seen from its prefix cache? Each round sends a prompt led by a\nnew unique prefix (cold), the same text again (warm), then a variant that differs in its last words,\none request at a time; prints TTFT cold vs warm, the cached tokens the server reported, and the verdict.",
  },
  import: {
    usage: 'llm-profiler import FILE… [--out run.json | --out-dir DIR] [options]',
    about: wrap(
      `Turn another benchmark tool's per-request results into an llm-profiler run: ${IMPORT_TOOL_ROWS.map((t) => `${t.label}'s ${t.reads}`).join(', ')}. ` +
      'Prints the same table as run (or sweep), with what the source does not record. The format is told from the content; ' +
      "the statistics are recomputed from the requests, the tool's own beside them.", 0).join('\n'),
  },
  compare: {
    usage: 'llm-profiler compare BASE NEW [options]   or   llm-profiler compare RUN [--detect PCT]',
    about: wrap(
      'Is NEW slower than BASE? Two run files (or imported results, or two sweeps point by point): TTFT, TPOT, ITL and E2E at p50, p90, p99 and the mean, ' +
      'and output throughput, each with the difference, its 95% bootstrap confidence interval (blocks of consecutive requests resampled; repetitions first when the runs have them) ' +
      'and a verdict: slower, faster, or no difference these samples could detect, with the smallest change they could have. ' +
      'With one run: how many requests two runs like it need to tell a --detect % change from noise.', 0).join('\n'),
  },
  ab: {
    usage: 'llm-profiler ab --url A [--url B] [--model MA [--model MB]] [options]',
    about: wrap(
      'Compare two endpoints (or one endpoint with two models) under the same load in one run: A and B take turns in blocks, ' +
      'so a slow minute hurts both sides alike, then the comparison of `compare` is printed (B against A).', 0).join('\n'),
  },
  recover: {
    usage: 'llm-profiler recover [JOURNAL | RUN.json | DIR] [--out run.json]',
    about: wrap(
      'Turn the journal a run or sweep left when its process died (kill -9, a crash, a closed laptop) into a run file: every request that finished, ' +
      'each finished repetition and sweep point (the sweep fitted over them), marked interrupted with when the journal was last written and how many requests were in flight. ' +
      'Without a path: the journals in the journal home ($XDG_STATE_HOME/llm-profiler/journals) and in this folder; RUN.json: the journals a run with --out RUN.json left. ' +
      'The run file goes to --out, else where the run was to write it, else RUN_ID.json here; the journal is removed once it is written.', 0).join('\n'),
  },
  serve: {
    usage: 'llm-profiler serve [options]',
    about: 'Start a local llama.cpp server (OpenAI-compatible, on 127.0.0.1) and keep it running until Ctrl+C.',
  },
};


const EXIT_CODES = `Exit codes: 0 ok, 1 some requests failed (or the endpoint is down), 2 usage error,
3 an SLO was missed (with --fail-on-slo), 130 interrupted (what finished is printed and written).`;

/** `compare` and `ab`: 1 is the regression a CI job fails on, never a usage problem. */
const COMPARE_EXIT_CODES = {
  compare: `Exit codes: 0 ok (no figure gated by --fail-on-regression is slower by more than its threshold),
1 a gated figure is slower by more than its threshold (or the JUnit report or step summary could not be
written), 2 usage error: a bad flag or gate, a file that cannot be read, runs of different workloads
(without --force), or a figure named in the gate that these runs cannot judge (p99 of 100 requests).`,
  ab: `Exit codes: 0 ok (no figure gated by --fail-on-regression is slower by more than its threshold),
1 a gated figure of B is slower than A's by more than its threshold, or requests failed, 2 usage error
(a bad flag or gate, or a figure named in the gate that the run cannot judge), 130 interrupted.`,
} as const;

function defaultText(o: OptionSpec, command: CommandName): string | undefined {
  const d = o.defaults?.[command];
  if (d !== undefined && o.kind !== 'boolean') return Array.isArray(d) ? d.join(',') : String(d);
  return o.defaultNote;
}

function wrap(text: string, indent: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function optionLines(o: OptionSpec, command: CommandName): string[] {
  const names = `${o.short ? `${o.short}, ` : ''}${o.flag}${o.value ? ` ${o.value}` : ''}`;
  const def = defaultText(o, command);
  const choices = o.kind === 'enum' ? ` (${o.choices!.join(' | ')})` : '';
  const text = `${o.help}${choices}${def !== undefined ? ` (default ${def})` : ''}`;
  const body = wrap(text, COLUMN);
  const head = `  ${names}`;
  const first = head.length < COLUMN ? `${head.padEnd(COLUMN)}${body[0] ?? ''}` : `${head}\n${' '.repeat(COLUMN)}${body[0] ?? ''}`;
  return [first, ...body.slice(1).map((l) => `${' '.repeat(COLUMN)}${l}`)];
}

/** The help of one command. */
export function usage(command: CommandName): string {
  const { usage: line, about } = ABOUT[command];
  const out = [`Usage: ${line}`, '', about];
  const mine = optionsOf(command);
  for (const group of OPTION_GROUPS) {
    const inGroup = mine.filter((o) => o.group === group);
    if (inGroup.length === 0) continue;
    out.push('', group, ...inGroup.flatMap((o) => optionLines(o, command)));
  }
  if (command === 'compare' || command === 'ab') out.push('', COMPARE_EXIT_CODES[command]);
  else if (command === 'import') out.push('', 'Exit codes: 0 ok, 1 a file could not be imported (nothing is written for it), 2 usage error.');
  else if (command === 'recover') out.push('', 'Exit codes: 0 ok (or no journal found), 1 a journal could not be recovered or its run file written, 2 usage error.');
  else if (command !== 'serve') out.push('', EXIT_CODES);
  return `${out.join('\n')}\n`;
}

/** `llm-profiler` without a command. */
export const MAIN_USAGE = `Usage: llm-profiler <command> [options]

Commands
  run            profile an endpoint: ${MEASURED}
  sweep          run a workload at several concurrencies/rates/prompt lengths and fit the trade-off
  prefill-dial   compare prefill chunk sizes on the local server
  cache-check    does the server serve repeated prompts from its prefix cache? TTFT cold vs warm
  serve          start the bundled local server
  compare        is NEW slower than BASE? each figure's difference with its 95% interval and a verdict
  ab             two endpoints (or models) under the same load, in alternating blocks, compared
  recover        a run file from the journal of a run whose process died: what finished, marked interrupted
  import         another tool's results (${IMPORT_TOOL_ROWS.map((t) => t.label).join(', ')}) as a run: the same table, timeline, compare

Run "llm-profiler <command> --help" for a command's options.
`;
