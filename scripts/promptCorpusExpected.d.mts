// Types for the corpus oracle's runner (the unit test imports it to check expected.json is current).
export interface OracleRun {
  readonly file: string;
  readonly runtime: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly vars?: Readonly<Record<string, unknown>>;
}
export declare function oracle(run: OracleRun): unknown;
