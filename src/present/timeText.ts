// A moment as every surface shows it: one form, in the reader's own locale and time zone (the tab's
// title, the run list, the report's header, the recovery offer, a comparison's sides). Pure.

const CLOCK: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'medium' };

/** "5 Dec 2026, 10:14:03" (en-GB), "Dec 5, 2026, 10:14:03 AM" (en-US): the date and the time to the second; a value that is no time as it is. */
export function clockTime(iso: string, locale?: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(locale, CLOCK);
}
