// A moment as every surface shows it: one form, in one locale and one time zone per window (the tab's
// title, the run list, the report's header, the recovery offer, a comparison's sides). The extension
// host picks them (src/extension/clock.ts) and hands them to its webviews (SurfaceClock), so a page in
// a browser with another locale or zone (code-server, Remote) says the time as the tab does; the CLI
// keeps its process's own (the terminal's LANG and TZ). Pure.
import type { SurfaceClock } from '../shared/protocol';

const CLOCK: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'medium' };

/**
 * The locale and zone a surface says times in: `language` (VS Code's display language, "en", "de",
 * "pt-br") made precise by the system's locale when both are the same language ("en" on an en-GB
 * system: "en-GB"), and the system's time zone. A language Intl cannot use falls back to the system's.
 */
export function clockOf(language?: string, system: Intl.ResolvedDateTimeFormatOptions = new Intl.DateTimeFormat().resolvedOptions()): SurfaceClock {
  let locale = system.locale;
  if (language) {
    try {
      const asked = new Intl.Locale(language);
      const own = new Intl.Locale(system.locale);
      locale = asked.language === own.language && !asked.region ? own.baseName : new Intl.DateTimeFormat(asked.baseName).resolvedOptions().locale;
    } catch {
      // not a language tag: the system's
    }
  }
  return { locale, timeZone: system.timeZone };
}

/** A clock as a page's `data-clock` carries it (JSON), or undefined when absent or not one. */
export function clockFromAttribute(raw: string | undefined): SurfaceClock | undefined {
  if (!raw) return undefined;
  try {
    const c = JSON.parse(raw) as Partial<SurfaceClock> | null;
    return c && typeof c.locale === 'string' && typeof c.timeZone === 'string' ? { locale: c.locale, timeZone: c.timeZone } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * "5 Dec 2026, 10:14:03" (en-GB), "Dec 5, 2026, 10:14:03 AM" (en-US): the date and the time to the
 * second, in `clock`'s locale and zone (without one, this process's own); a value that is no time as it is.
 */
export function clockTime(iso: string, clock?: SurfaceClock): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : formatterOf(clock).format(d);
}

/** One formatter per locale and zone (a run list names hundreds of runs: a formatter made per call costs four times the call). */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatterOf(clock: SurfaceClock | undefined): Intl.DateTimeFormat {
  const key = clock ? `${clock.locale}|${clock.timeZone}` : '';
  let f = FORMATTERS.get(key);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat(clock?.locale, { ...CLOCK, ...(clock ? { timeZone: clock.timeZone } : {}) });
    } catch {
      // a zone or locale this browser does not know: its own, rather than no time at all
      f = new Intl.DateTimeFormat(undefined, CLOCK);
    }
    FORMATTERS.set(key, f);
  }
  return f;
}
