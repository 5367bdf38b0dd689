// Tiny DOM helpers: every piece of run data goes in as text, never as HTML.
import type { SurfaceClock } from '../../src/shared/protocol';
import { clockFromAttribute } from '../../src/present/timeText';

let clock: { readonly value: SurfaceClock | undefined } | undefined;

/** The host's locale and zone, which this page says times in (`<body data-clock>`, src/present/timeText.ts); read once. */
export function pageClock(): SurfaceClock | undefined {
  clock ??= { value: typeof document === 'undefined' ? undefined : clockFromAttribute(document.body?.dataset.clock) };
  return clock.value;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else if (k === 'text') el.textContent = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

/**
 * A wide table in a region that scrolls sideways when the panel is narrow: focusable (so the keyboard
 * can scroll it), named, and with a visible hint while it overflows (a ResizeObserver keeps it true
 * as the panel is resized or split).
 */
export function scrollRegion(table: HTMLElement, label: string): HTMLElement {
  const region = h('div', { class: 'table-scroll', role: 'region', tabindex: 0, 'aria-label': label }, table);
  const hint = h('p', { class: 'scroll-hint', hidden: true, text: 'Scroll sideways for more columns (focus the table, then ← →).' });
  const check = () => {
    const overflows = region.scrollWidth > region.clientWidth + 1;
    hint.hidden = !overflows;
    region.dataset.overflows = String(overflows);
  };
  if (typeof ResizeObserver !== 'undefined') {
    const ro = new ResizeObserver(check);
    ro.observe(region);
    ro.observe(table);
  }
  return h('div', { class: 'table-wrap' }, region, hint);
}

/** Text for screen readers only (a chart's text alternative, linked by aria-describedby). */
export function srOnly(text: string, id: string, tag: 'p' | 'div' = 'p'): HTMLElement {
  return h(tag, { class: 'sr-only', id, text });
}
