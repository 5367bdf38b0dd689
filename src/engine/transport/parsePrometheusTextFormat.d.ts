// parse-prometheus-text-format 1.1.1 ships no types: what src/engine/transport/serverMetrics.ts uses of it.
declare module 'parse-prometheus-text-format' {
  namespace parsePrometheusTextFormat {
    /** One sample of a family; values are the text as written ("1.5", "+Inf", "NaN"). */
    interface Sample {
      readonly value?: string;
      readonly labels?: Readonly<Record<string, string>>;
      readonly timestamp_ms?: string;
      /** Only on the families the parser flattens (HISTOGRAM, SUMMARY). */
      readonly buckets?: Readonly<Record<string, string>>;
      readonly quantiles?: Readonly<Record<string, string>>;
      readonly count?: string;
      readonly sum?: string;
    }
    interface MetricFamily {
      readonly name: string;
      readonly help: string;
      /** Upper case: COUNTER, GAUGE, HISTOGRAM, SUMMARY, UNTYPED. */
      readonly type: string;
      readonly metrics: readonly Sample[];
    }
  }
  /** Throws an Error named InvalidLineError on a line it cannot read. */
  function parsePrometheusTextFormat(text: string): parsePrometheusTextFormat.MetricFamily[];
  export = parsePrometheusTextFormat;
}
