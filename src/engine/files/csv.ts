// The one writer of CSV cells and lines (RFC 4180, CRLF line ends): the requests CSV (runFile.ts) and
// the chunks CSV (chunksCsv.ts) both write every cell through `csvCell`. What a server said (ids,
// errors) or an imported file held reaches these cells, and a spreadsheet opening the file must read
// it as text, never as a formula or a terminal control.
import { printable } from '../core/redact';

/**
 * What a spreadsheet takes as the start of a formula (OWASP "CSV Injection"; ASVS 5.0 V1.2.10):
 * `=`, `+`, `-`, `@`, tab and carriage return, and the full-width `＝ ＋ － ＠` some locales read the
 * same way, also after leading spaces (a spreadsheet may trim them before it looks).
 */
const FORMULA_START = /^[ ]*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** RFC 4180: a field holding a quote, a comma or a line break is quoted, its quotes doubled. */
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV field. Numbers, booleans and bigints are written as they are: they come from the run's
 * own measurements, and a negative number (-1.5) must stay a number a spreadsheet can sum, so only
 * text is neutralised. Text (every string, whatever field it came from) loses its control characters
 * and escape sequences (`printable`: tab and newline stay), and when it would start a formula it is
 * prefixed with a single quote, the mark spreadsheets read as "this is text", and quoted. A text
 * field that holds "-1.5" is therefore written '-1.5: it was text, and stays text.
 */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  const text = printable(String(value));
  if (FORMULA_START.test(text)) return `"'${text.replace(/"/g, '""')}"`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One line of cells, without its line end. */
function csvLine(cells: readonly unknown[]): string {
  return cells.map(csvCell).join(',');
}

/** A CSV text: the header, then the rows, each line ended by CRLF. */
export function csvText(header: readonly string[], rows: Iterable<readonly unknown[]>): string {
  const lines = [csvLine(header)];
  for (const row of rows) lines.push(csvLine(row));
  return lines.join('\r\n') + '\r\n';
}
