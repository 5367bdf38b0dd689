// axe-core in any Playwright frame (a page of the e2e harness, or a webview inside the workbench):
// injects axe-core's own build through the debugger protocol (which the page's CSP does not govern)
// and runs the WCAG 2.x A/AA rules. Used by the browser tests and the host tests alike.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, Page } from 'playwright-core';

const requireHere = createRequire(__filename);
let source: string | undefined;
function axeSource(): string {
  source ??= readFileSync(requireHere.resolve('axe-core/axe.min.js'), 'utf8');
  return source;
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  /** Each offending node: its selector and axe's summary of what is wrong. */
  readonly nodes: readonly string[];
}

export interface AxeOptions {
  /** Only these impacts count (default: serious and critical). */
  readonly impacts?: readonly string[];
  /** A CSS selector to test inside the frame (default: the whole document). */
  readonly include?: string;
}

/** The violations axe finds in a frame, of the given impacts (serious and critical by default). */
export async function axeViolations(target: Page | Frame, options: AxeOptions = {}): Promise<AxeViolation[]> {
  const impacts = options.impacts ?? ['serious', 'critical'];
  const has = await target.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe !== 'undefined');
  if (!has) await target.evaluate(axeSource());
  const raw = await target.evaluate(async (include) => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[] }> } }).axe;
    const res = await axe.run(include ? { include: [include] } : document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return res.violations.map((v) => ({ id: v.id, impact: v.impact ?? 'unknown', help: v.help,
      nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ').trim()}`) }));
  }, options.include);
  return raw.filter((v) => impacts.includes(v.impact));
}

/** One line per violation (and its first nodes), for an assertion message. */
export function describeViolations(vs: readonly AxeViolation[], maxNodes = 4): string {
  return vs.map((v) => `${v.impact} ${v.id} (${v.help}), ${v.nodes.length} node(s):\n    ${v.nodes.slice(0, maxNodes).join('\n    ')}`).join('\n  ');
}
