// Is something between the server and the client buffering the stream?
//
// The evidence is in the clock. The client stamps each network read once (client.ts), and every
// event parsed out of that read gets the same time, so equal consecutive chunk times are events that
// came in one read. A server that streams sends one event per write: at the client nearly every read
// carries one event (a busy client may find two or three queued now and then). A buffer in between
// (nginx's proxy_buffering, a CDN, gzip) holds the events back and lets them go together: most events
// then come several to a read, each burst followed by a long gap, often on a fixed period (a time
// flush) or every N events (a size flush). That pattern, not a header, is what makes the verdict: a
// `via` header names a proxy but many proxies pass a stream through untouched, and those must never
// be flagged. Headers (via, x-cache, cf-ray, content-encoding) and a client TTFT far above the
// server's own are kept as supporting evidence.
import type { BufferingVerdict, RequestRecord } from '../core/types';
import { transportOf } from './phases';
import { median } from '../core/stats';
import { msWords as fmt } from '../core/words';

/** A stream needs this many content events before its rhythm says anything. */
const MIN_EVENTS = 4;
/** Share of a stream's events that must come in multi-event reads for the stream to count as bunched. */
const BUNCHED_SHARE = 0.6;
/** Share of judged streams that must be bunched for the run's verdict. */
const BUFFERED_STREAMS_SHARE = 0.5;
/** Read gaps come on a fixed period when this share of them lies within PERIOD_TOLERANCE of their median. */
const PERIODIC_SHARE = 0.75;
const PERIOD_TOLERANCE = 0.15;

/** How one stream's events were spread over network reads. */
export interface StreamReads {
  readonly events: number;
  readonly reads: number;
  /** Events that shared their read with at least one other event. */
  readonly burstEvents: number;
  /** Events in the first read (the one that ended TTFT). */
  readonly firstReadEvents: number;
  /** Gaps between consecutive reads, ms. */
  readonly readGapsMs: readonly number[];
  readonly bunched: boolean;
}

export function streamReads(r: RequestRecord): StreamReads {
  const t = r.chunkTimesMs;
  const n = t.length;
  let reads = 0;
  let burstEvents = 0;
  let firstReadEvents = 0;
  const readGapsMs: number[] = [];
  let i = 0;
  while (i < n) {
    let j = i + 1;
    while (j < n && t[j] === t[i]) j++;
    const size = j - i;
    if (reads === 0) firstReadEvents = size;
    else readGapsMs.push(t[i]! - t[i - 1]!);
    if (size > 1) burstEvents += size;
    reads++;
    i = j;
  }
  const bunched = n >= MIN_EVENTS && burstEvents / n >= BUNCHED_SHARE;
  return { events: n, reads, burstEvents, firstReadEvents, readGapsMs, bunched };
}

/** Header names that say something sits between the server and the client. */
export const INTERMEDIARY_HEADERS: ReadonlySet<string> = new Set([
  'via',
  'x-cache',
  'x-cache-status',
  'x-cache-hits',
  'cf-ray',
  'cf-cache-status',
  'x-served-by',
  'x-amz-cf-id',
  'x-amz-cf-pop',
  'x-accel-buffering',
  'x-envoy-upstream-service-time',
  'x-kong-proxy-latency',
  'content-encoding',
]);

export interface BufferingAnalysis {
  readonly verdict: BufferingVerdict;
  /** Indexes of the streams judged bunched (when the run is judged buffered, their gaps are buffering, not prefill). */
  readonly buffered: ReadonlySet<number>;
}


/**
 * The run's verdict over its successful streams. Detected when at least half of the streams with
 * enough events are bunched, or when the event stream is compressed (a compressor must hold bytes
 * back to compress them) and some streams are bunched.
 */
export function judgeBuffering(records: readonly RequestRecord[]): BufferingAnalysis {
  const judged: { r: RequestRecord; reads: StreamReads }[] = [];
  for (const r of records) {
    if (r.error !== undefined || r.chunkTimesMs.length < MIN_EVENTS) continue;
    judged.push({ r, reads: streamReads(r) });
  }
  const bunched = judged.filter((j) => j.reads.bunched);
  const evidence: string[] = [];
  const headerSeen = new Map<string, string>();
  let compressed = 0;
  for (const r of records) {
    const h = r.intermediaries;
    if (h === undefined) continue;
    for (const [name, value] of Object.entries(h)) {
      if (!headerSeen.has(name)) headerSeen.set(name, value);
      if (name === 'content-encoding' && value !== '' && value !== 'identity') compressed++;
    }
  }
  const compressedStream = compressed > 0;
  const detected =
    judged.length > 0 && (bunched.length >= Math.max(1, Math.ceil(BUFFERED_STREAMS_SHARE * judged.length)) || (compressedStream && bunched.length > 0));

  let periodMs: number | undefined;
  if (bunched.length > 0) {
    let events = 0;
    let burst = 0;
    const perRead: number[] = [];
    const gaps: number[] = [];
    for (const { reads } of bunched) {
      events += reads.events;
      burst += reads.burstEvents;
      perRead.push(reads.events / reads.reads);
      // the last read of a stream comes when the server ended it, not on the buffer's clock
      for (let i = 0; i < reads.readGapsMs.length - 1; i++) gaps.push(reads.readGapsMs[i]!);
    }
    const gapMedian = gaps.length > 0 ? median(gaps) : 0;
    evidence.push(
      `${bunched.length} of ${judged.length} streams arrive in bursts: ${Math.round((100 * burst) / events)}% of their events came several to one network read ` +
        `(median ${median(perRead).toFixed(1)} per read), each burst after a gap of about ${fmt(gapMedian)}`,
    );
    if (gaps.length >= 3 && gapMedian > 0) {
      const near = gaps.filter((g) => Math.abs(g - gapMedian) <= PERIOD_TOLERANCE * gapMedian).length;
      if (near / gaps.length >= PERIODIC_SHARE) {
        periodMs = gapMedian;
        evidence.push(`the bursts come on a fixed period of about ${fmt(gapMedian)}: a buffer flushed on a timer`);
      }
    }
  }
  if (compressedStream) evidence.push(`the event stream is compressed (content-encoding: ${headerSeen.get('content-encoding')}): a compressor holds bytes back`);
  for (const [name, value] of headerSeen) {
    if (name === 'content-encoding') continue;
    evidence.push(`a response header names something in between: ${name}: ${value.length > 80 ? `${value.slice(0, 80)}…` : value}`);
  }

  const buffered = new Set<number>(detected ? bunched.map((j) => j.r.index) : []);
  const inflationMs = detected ? inflationOf(bunched.map((j) => j.r), bunched.map((j) => j.reads)) : undefined;
  if (detected && inflationMs !== undefined && inflationMs.fromServer) {
    evidence.push(`client TTFT exceeds the server's own by ${fmt(inflationMs.ms)} at the median`);
  }
  const verdict: BufferingVerdict = {
    detected,
    evidence,
    ...(inflationMs !== undefined ? { inflationMs: inflationMs.ms } : {}),
    bufferedStreams: bunched.length,
    streams: judged.length,
    ...(periodMs !== undefined && detected ? { periodMs } : {}),
  };
  return { verdict, buffered };
}

/**
 * The TTFT the buffer added, at the median over buffered streams. From the server's own TTFT where it
 * reported one (client − server). Else from the first burst: it held k events that the server made
 * one per true ITL, so the first of them waited about (k − 1)·ITL; the true ITL is the span of the
 * later flushes over the events they carried, (last − first arrival) / (n − k).
 */
function inflationOf(records: readonly RequestRecord[], reads: readonly StreamReads[]): { ms: number; fromServer: boolean } | undefined {
  // Only where the server reports its queue: elsewhere client − server TTFT holds the wait for a slot too.
  const server: number[] = [];
  for (const r of records) {
    if (r.serverTimings?.queueMs === undefined) continue;
    const t = r.transportMs ?? transportOf(r);
    if (t !== undefined) server.push(t);
  }
  if (server.length > 0) return { ms: Math.max(0, median(server)), fromServer: true };
  const est: number[] = [];
  for (let i = 0; i < records.length; i++) {
    const t = records[i]!.chunkTimesMs;
    const { events: n, firstReadEvents: k } = reads[i]!;
    if (n <= k || k < 2) continue;
    const itl = (t[n - 1]! - t[0]!) / (n - k);
    est.push((k - 1) * itl);
  }
  return est.length > 0 ? { ms: median(est), fromServer: false } : undefined;
}
