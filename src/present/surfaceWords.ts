// Words that depend on where they are read: the CLI names a flag, VS Code a setting or a field of
// its forms. One table, so that a sentence the engine wrote once ("set --slo") reads right on each
// surface. Pure.

/** Where a sentence is read: the terminal, or VS Code (the report, the sidebar, a notification). */
export type TextSurface = 'cli' | 'vscode';

/** How the user gives each thing, per surface. */
const HOW_TO_GIVE = {
  /** An SLO: goodput, pass/fail and a sweep's operating point are judged by it. */
  slo: {
    cli: "give --slo ttft=500,tpot=50 (or llmProfiler.slo in a prompt file's front matter)",
    vscode: "set llmProfiler.slo in the settings (e.g. ttft=500,tpot=50), or llmProfiler.slo in a prompt file's front matter",
  },
} as const satisfies Readonly<Record<string, Readonly<Record<TextSurface, string>>>>;

export type GivenThing = keyof typeof HOW_TO_GIVE;

/** "give --slo …" in the terminal, "set llmProfiler.slo in the settings …" in VS Code. */
export function howToGive(thing: GivenThing, surface: TextSurface): string {
  return HOW_TO_GIVE[thing][surface];
}
