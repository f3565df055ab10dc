/**
 * CSV for an operator's exports (the journal, intents over a time range): one row at a time,
 * RFC 4180 quoting, and every cell that a spreadsheet would read as a formula made inert.
 *
 * A cell from the ledger may hold a player's id or a description the game wrote from a
 * player's input; `=HYPERLINK(...)` in one would run when the operator opens the file. So a
 * formula start (`=`, `+`, `-`, `@`, after any spaces and quotes) gets a `'` before it (OWASP's
 * advice) at the cell's start and after every character a spreadsheet may split fields or rows
 * at: Excel in German or French locales reads a CSV with `;` as the separator, where our commas
 * split nothing and `x;=1+1` is two fields, the second a formula, whatever our quotes say (a
 * quote opens a field only at its start). A cell that starts with a tab or a return gets the
 * `'` too. Then any cell with a quote, a separator or a line break is quoted. Cost: one scan
 * per cell, and a second only for a cell that needs it.
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
