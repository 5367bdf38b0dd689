// What a run imported from another benchmark tool (RunFile.importedFrom) says about itself, for every
// surface: where it came from ("Imported from GuideLLM 0.3.0 · benchmarks.json"), its name in a list,
// what the timeline cannot show, and the tool's own figures beside ours. Pure text, no node import.
import type { ImportTool, ImportedFrom, RunFile, Stats, Summary } from '../engine/core/types';
import { runWhat } from './runText';
import { importToolLabel } from './toolLabels';
import { metricOf, type LatencyKey } from './metricCatalogue';

/** The last part of a path, either separator (the run file may come from another system). */
export function fileBaseName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** "Imported from GuideLLM 0.3.0 · benchmarks.json". */
export function importedLine(from: ImportedFrom): string {
  return `Imported from ${importToolLabel(from.tool)}${from.version ? ` ${from.version}` : ''} · ${fileBaseName(from.file)}`;
}

/**
 * The parts of an imported run's name (as runText.ts runNameParts): what ran, said as the tool's
 * ("GuideLLM sweep rate 1–8/s"), and where: the endpoint when the file names one, else the file.
 */
export function importedNameParts(run: Pick<RunFile, 'endpoint' | 'startedAt' | 'id' | 'importedFrom'> & Parameters<typeof runWhat>[0]): { what: string; endpointName: string; startedAt: string } | undefined {
  const from = run.importedFrom;
  if (!from) return undefined;
  const file = fileBaseName(from.file);
  const where = run.endpoint?.name || run.endpoint?.url || '';
  const what = `${importToolLabel(from.tool)} ${runWhat(run)}`;
  return { what: where ? `${what} · ${file}` : what, endpointName: where || file, startedAt: run.startedAt };
}

/** Whether a `missing` entry is about chunk or token arrival times (what the timeline's ticks are drawn from). */
const ABOUT_CHUNKS = /chunk|per-token|token times|inter-token|itl/i;

/**
 * What the timeline of an imported run cannot show, in plain words: no ticks without chunk times,
 * no placement in time without start times. Empty for a measured run, or an imported one that has both.
 */
export function timelineNotes(run: Pick<RunFile, 'importedFrom'>, chunkCount: number): string[] {
  const from = run.importedFrom;
  if (!from) return [];
  const tool = importToolLabel(from.tool);
  const out: string[] = [];
  if (chunkCount === 0) {
    // the importer's own words, less a leading "chunk arrival times: " that the sentence already says
    const said = from.missing?.find((m) => ABOUT_CHUNKS.test(m))?.replace(/^[^:]*(chunk|token)[^:]*:\s*/i, '').replace(/\.$/, '');
    out.push(`No per-token ticks: ${said || `${tool}'s file has no chunk arrival times`}.`);
  }
  if (from.startTimes === 'none') {
    out.push(`Lanes are not placed in time: ${tool}'s file has no request start times, so every request is drawn from the run's start (read no overlap or concurrency from them).`);
  }
  return out;
}

/** One of the tool's own figures, with ours beside it when the name says which of ours it is and in what unit. */
export interface ReportedRow {
  readonly key: string;
  readonly value: number;
  /** Ours, in the tool's unit; absent when the name cannot be matched safely. */
  readonly ours?: number;
  /** Which of ours ("TTFT p99"). */
  readonly oursLabel?: string;
}

/** A name's metric: its pattern, which of ours it is (its label from the metric catalogue), and its unit when the name does not say (ms = 1, s = 1000). */
type MetricName = readonly [RegExp, LatencyKey, number | undefined];

/**
 * Which of ours each tool's names are. vLLM's definitions are ours (TPOT = (e2e − ttft)/(output − 1),
 * ITL = gaps between chunks). GuideLLM's and AIPerf's "inter-token latency" is per request
 * (last − first token)/(tokens − 1): our TPOT, not our ITL. GuideLLM's time_per_output_token
 * (latency over all tokens, the first included) is none of ours. Unknown names get no figure of ours.
 */
const METRIC_NAMES: Readonly<Record<ImportTool, readonly MetricName[]>> = {
  vllm: [[/ttft/, 'ttftMs', undefined], [/tpot/, 'tpotMs', undefined], [/(^|[_.])itl/, 'itlMs', undefined], [/e2el/, 'e2eMs', undefined]],
  guidellm: [[/time_to_first_token/, 'ttftMs', undefined], [/inter_token_latency/, 'tpotMs', undefined], [/request_latency/, 'e2eMs', 1000]],
  aiperf: [[/time_to_first_token|ttft/, 'ttftMs', 1], [/inter_token_latency/, 'tpotMs', 1], [/inter_chunk_latency/, 'itlMs', 1], [/request_latency/, 'e2eMs', 1]],
};
const SEP = '(?:^|[_.\\s-])';
const END = '(?:$|[_.\\s-])';

function statOf(key: string): string | undefined {
  if (new RegExp(`${SEP}(mean|avg|average)${END}`).test(key)) return 'mean';
  if (/median/.test(key)) return 'p50';
  const p = new RegExp(`${SEP}p(\\d+(?:\\.\\d+)?)${END}`).exec(key);
  if (p) return `p${Number(p[1])}`;
  if (new RegExp(`${SEP}(std|stddev)${END}`).test(key)) return 'std';
  if (new RegExp(`${SEP}min${END}`).test(key)) return 'min';
  if (new RegExp(`${SEP}max${END}`).test(key)) return 'max';
  return undefined;
}

/** The unit a name states: ms or s (a number's unit is never guessed: without one, ours is not set beside it). */
function unitOf(key: string): number | undefined {
  if (new RegExp(`${SEP}ms${END}`).test(key) || /_ms$/.test(key)) return 1;
  if (new RegExp(`${SEP}(s|sec|secs|seconds)${END}`).test(key)) return 1000;
  return undefined;
}

/** The tool's figures in its own order, each with ours when its name says which and in what unit. */
export function reportedRows(from: Pick<ImportedFrom, 'tool' | 'reported'> | undefined, summary: Summary): ReportedRow[] {
  const reported = from?.reported;
  if (!reported) return [];
  const names = (METRIC_NAMES as Record<string, readonly MetricName[]>)[from.tool] ?? [];
  const rows: ReportedRow[] = [];
  for (const [key, value] of Object.entries(reported)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    const k = key.toLowerCase();
    let ours: number | undefined;
    let oursLabel: string | undefined;
    // the whole run's rates (vLLM's, AIPerf's single "avg"); GuideLLM's *_per_second are distributions over time, none of ours
    if (/^request_throughput(\.avg)?$/.test(k)) { ours = summary.requestsPerSecond; oursLabel = metricOf('requestsPerSecond').label; }
    else if (/^output_(token_)?throughput(\.avg)?$/.test(k)) { ours = summary.outputTokensPerSecond; oursLabel = metricOf('outputTokensPerSecond').label; }
    else if (k === 'completed') { ours = summary.completed; oursLabel = 'Completed'; }
    else {
      const metric = names.find(([re]) => re.test(k));
      const stat = metric ? statOf(k) : undefined;
      const scale = metric ? unitOf(k) ?? metric[2] : undefined;
      if (metric && stat && scale !== undefined) {
        const v = (summary[metric[1]] as Stats | undefined as unknown as Record<string, number> | undefined)?.[stat];
        if (typeof v === 'number' && Number.isFinite(v)) { ours = v / scale; oursLabel = `${metricOf(metric[1]).label} ${stat === 'p50' ? 'median' : stat}`; }
      }
    }
    rows.push({ key, value, ...(ours !== undefined ? { ours, oursLabel } : {}) });
  }
  return rows;
}
