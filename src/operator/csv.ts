/**
 * CSV for an operator's exports (the journal, intents over a time range): one row at a time,
 * RFC 4180 quoting, and every cell that a spreadsheet would read as a formula made inert.
 *
 * A cell from the ledger may hold a player's id or a description the game wrote from a
 * player's input; `=HYPERLINK(...)` in one would run when the operator opens the file. So a cell
 * that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's
 * advice), then any cell with a quote, comma or line break is quoted. Cost: one scan per cell.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell, escaped: null and undefined are empty. */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
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
