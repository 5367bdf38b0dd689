// A finished run sent as OpenTelemetry metrics over OTLP/HTTP (protobuf), named as the GenAI semantic
// conventions name them (open-telemetry/semantic-conventions docs/gen-ai/gen-ai-metrics.md, at commit
// 01d94504d2ec9a5653a5bde13908bc933d96ff29): one histogram record per measured request. The SDK is
// loaded only when a run is sent, so a run without --otlp-endpoint pays nothing for it.
//
// What the SDK does not allow: a measurement carries no timestamp of its own (Histogram.record has
// none), so each data point is stamped at the export, its start time at the moment the exporter was
// set up; the run's own times stay in the run file. Never throws: a problem comes back as a message.
import { apiFacts } from '../core/apis';
import type { RequestRecord, RunFile } from '../core/types';
import { displayUrl, printable } from '../core/redact';
import type { ScrubbedRun } from '../core/redact';
import { TOOL_NAME, TOOL_VERSION } from '../core/runFormat';

/** The metric names, units and recommended bucket boundaries of the GenAI semantic conventions. */
export const GENAI_METRICS = {
  operationDuration: {
    name: 'gen_ai.client.operation.duration',
    unit: 's',
    description: 'GenAI operation duration.',
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  },
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    unit: '{token}',
    description: 'Number of input and output tokens used.',
    buckets: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  },
  timeToFirstToken: {
    name: 'gen_ai.server.time_to_first_token',
    unit: 's',
    description: 'Time to generate first token for successful responses.',
    buckets: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0],
  },
  timePerOutputToken: {
    name: 'gen_ai.server.time_per_output_token',
    unit: 's',
    description: 'Time per output token generated after the first token for successful responses.',
    buckets: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5],
  },
} as const;

export interface OtlpOptions {
  /** The collector's OTLP/HTTP address (http://host:4318); `/v1/metrics` is added unless the path ends with it. */
  readonly endpoint: string;
  /** Sent with the export (authentication): never stored or printed. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /** The whole export, retries included (default 10 s). */
  readonly timeoutMs?: number;
}

export type OtlpResult =
  | { readonly ok: true; readonly requests: number; readonly url: string }
  | { readonly ok: false; readonly message: string; readonly url: string };

/** The metrics URL for an endpoint as given: a base URL gets the OTLP/HTTP path `/v1/metrics`. */
function otlpMetricsUrl(endpoint: string): string {
  const u = new URL(endpoint);
  if (!/\/v1\/metrics\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/metrics`;
  return u.toString();
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS (the standard variable, also read by every OpenTelemetry SDK):
 * `key1=value1,key2=value2`, values percent-encoded. A malformed entry is skipped, never echoed.
 */
export function otlpHeadersFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const var_ of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_METRICS_HEADERS']) {
    for (const part of (env[var_] ?? '').split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      const key = part.slice(0, eq).trim();
      let value: string;
      try {
        value = decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        continue;
      }
      if (key) out[key] = value;
    }
  }
  return out;
}

/** OTEL_EXPORTER_OTLP_METRICS_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT (ms, the standard variables), when set to a positive number. */
export function otlpTimeoutFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  for (const name of ['OTEL_EXPORTER_OTLP_METRICS_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    const n = Number(env[name]);
    if (env[name] !== undefined && env[name]!.trim() !== '' && Number.isFinite(n) && n > 0) return n;
  }
  return undefined;
}

type Attributes = Record<string, string | number>;

/**
 * The attributes every record of a run shares: operation, provider, model, server address and port.
 * The model is a server's word when it was not given (the first it lists): sent as the scrubbed run
 * has it, without control characters.
 */
export function runAttributes(run: ScrubbedRun): Attributes {
  // the API's row names both (the conventions' well-known values where one applies: an
  // OpenAI-compatible server speaks the `openai` flavour; custom ones for Ollama and llama.cpp)
  const otel = apiFacts(run.endpoint.api)?.otel;
  const attrs: Attributes = {
    'gen_ai.operation.name': otel?.operation ?? 'chat',
    'gen_ai.provider.name': otel?.provider ?? run.endpoint.api,
  };
  if (run.endpoint.model) attrs['gen_ai.request.model'] = printable(run.endpoint.model, true);
  try {
    const u = new URL(run.endpoint.url);
    attrs['server.address'] = u.hostname.replace(/^\[|\]$/g, '');
    attrs['server.port'] = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  } catch {
    // a run file's URL is checked when read; an imported run may have none worth naming
  }
  return attrs;
}

/** `error.type`: the HTTP status where there was one (as the conventions' examples do), else the kind of failure. */
function errorType(r: RequestRecord): string | undefined {
  if (!r.error) return undefined;
  const status = r.error.status ?? r.httpStatus;
  return status !== undefined && status >= 400 ? String(status) : r.error.kind;
}

/** The measured requests of a run, as sent (warm-up requests are not measured). */
function measuredRequests(run: RunFile): RequestRecord[] {
  return run.requests.filter((r) => !r.warmup);
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  const parts = [e.message || e.name];
  if (typeof code === 'number') parts.push(`HTTP ${code}`);
  else if (typeof code === 'string' && !e.message.includes(code)) parts.push(code);
  if (cause && typeof cause.code === 'string' && !parts.some((p) => p.includes(String(cause.code)))) parts.push(String(cause.code));
  const data = (e as { data?: unknown }).data;
  if (typeof data === 'string' && data.trim()) parts.push(data.trim().slice(0, 200));
  return parts.join(': ');
}

/**
 * Sends a run's metrics to an OTLP/HTTP endpoint and waits for the answer. Resolves with how many
 * requests were sent, or with a message saying why not (endpoint down, refused, a 4xx): it never
 * rejects, so a run and its file are never lost to its telemetry. Only a scrubbed run is sent
 * (redact.ts `scrubRun`): the collector is one more place a server's echo of a key must not reach.
 */
export async function exportRunToOtlp(run: ScrubbedRun, options: OtlpOptions): Promise<OtlpResult> {
  let url: string;
  try {
    url = otlpMetricsUrl(options.endpoint);
  } catch {
    return { ok: false, message: `not a valid URL: "${displayUrl(options.endpoint)}"`, url: options.endpoint };
  }
  const shown = displayUrl(url);
  if (options.signal?.aborted) return { ok: false, message: 'cancelled before sending', url: shown };
  try {
    const [{ MeterProvider, MetricReader }, { resourceFromAttributes }, { OTLPMetricExporter }] = await Promise.all([
      import('@opentelemetry/sdk-metrics'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-metrics-otlp-proto'),
    ]);
    // Collects on demand only: the run is complete, there is nothing to export periodically.
    class OnceReader extends MetricReader {
      protected override async onForceFlush(): Promise<void> {}
      protected override async onShutdown(): Promise<void> {}
    }
    const reader = new OnceReader();
    const resource = resourceFromAttributes({
      'service.name': TOOL_NAME,
      'service.version': TOOL_VERSION,
      // each run is its own producer: its series never merge with another run's
      'service.instance.id': run.id,
    });
    const provider = new MeterProvider({ resource, readers: [reader] });
    const exporter = new OTLPMetricExporter({ url, headers: { ...options.headers }, timeoutMillis: options.timeoutMs ?? 10_000 });
    try {
      const meter = provider.getMeter(TOOL_NAME, TOOL_VERSION);
      const histogram = (m: (typeof GENAI_METRICS)[keyof typeof GENAI_METRICS]) =>
        meter.createHistogram(m.name, { unit: m.unit, description: m.description, advice: { explicitBucketBoundaries: [...m.buckets] } });
      const duration = histogram(GENAI_METRICS.operationDuration);
      const tokens = histogram(GENAI_METRICS.tokenUsage);
      const ttft = histogram(GENAI_METRICS.timeToFirstToken);
      const tpot = histogram(GENAI_METRICS.timePerOutputToken);
      const base = runAttributes(run);
      const requests = measuredRequests(run);
      for (const r of requests) {
        const err = errorType(r);
        if (r.e2eMs !== undefined) duration.record(r.e2eMs / 1000, err !== undefined ? { ...base, 'error.type': err } : base);
        if (err !== undefined) continue;
        if (r.ttftMs !== undefined) ttft.record(r.ttftMs / 1000, base);
        if (r.tpotMs !== undefined) tpot.record(r.tpotMs / 1000, base);
        // the conventions: no usage metric from a count the client only guessed
        if (r.promptTokens !== undefined && !r.promptTokensEstimated) tokens.record(r.promptTokens, { ...base, 'gen_ai.token.type': 'input' });
        tokens.record(r.outputTokens, { ...base, 'gen_ai.token.type': 'output' });
      }
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) return { ok: false, message: `collecting the metrics failed: ${describe(errors[0])}`, url: shown };
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => {
        const onAbort = () => resolve({ code: 1, error: new Error('cancelled') });
        options.signal?.addEventListener('abort', onAbort, { once: true });
        exporter.export(resourceMetrics, (res) => {
          options.signal?.removeEventListener('abort', onAbort);
          resolve(res);
        });
      });
      if (result.code !== 0) return { ok: false, message: result.error ? describe(result.error) : 'the export failed', url: shown };
      return { ok: true, requests: requests.length, url: shown };
    } finally {
      await exporter.shutdown().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    }
  } catch (e) {
    return { ok: false, message: describe(e), url: shown };
  }
}
