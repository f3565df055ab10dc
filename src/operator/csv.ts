/**
 * CSV for an operator's exports: one row at a time, RFC 4180 quoting, and every cell that a
 * spreadsheet would read as a formula made inert: a cell may hold a player's text, and
 * `=HYPERLINK(...)` would run when the operator opens the file. A formula start gets a `'`
 * (OWASP) at the cell's start and after every character a spreadsheet may split at (`;` in
 * German or French Excel, whatever our quotes say), and before a leading tab or return.
 */

/** A formula start at the cell's start or after a separator or a line break. */
const FORMULA_AFTER = /(^|[,;\t\r\n])(?=[ "]*[=+\-@])/g;
const BLANK_START = /^[\t\r]/;
const NEEDS_QUOTES = /[",;\t\r\n]/;

/** One cell, escaped: null and undefined are empty. */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (BLANK_START.test(text)) text = `'${text}`;
  text = text.replace(FORMULA_AFTER, "$1'");
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One row with its CRLF. */
export function csvRow(cells: readonly (string | number | null | undefined)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** A table's rows: the header, then each record's row as the reads yield it. */
export async function* csvRows<T>(
  columns: readonly { name: string; of: (row: T) => string | number | null | undefined }[],
  records: AsyncIterable<T>,
): AsyncGenerator<string> {
  yield csvRow(columns.map((c) => c.name));
  for await (const record of records) yield csvRow(columns.map((c) => c.of(record)));
}
