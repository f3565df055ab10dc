/** The one table every benchmark reports into: absolute figures, and ratios against a limit. */

export interface Row {
  /** Which benchmark: `1 client`, `3 scale`... */
  bench: string;
  /** What was measured: `colyseus-lightning`, `undici.request + JSON.parse (limit)`. */
  subject: string;
  /** The figure, already formatted: `18,200 req/s`. */
  value: string;
  /** Other figures of the same subject: `p50 1.6 ms, p99 4.1 ms`. */
  detail?: string;
  /** Against the limit or goal, formatted: `0.93`. */
  ratio?: string;
  /** The goal and whether it was met, or a remark. */
  note?: string;
}

export function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

export function ms(n: number, digits = 2): string {
  return Number.isFinite(n) ? `${n.toFixed(digits)} ms` : 'n/a';
}

export function ratio(n: number): string {
  return Number.isFinite(n) ? n.toFixed(2) : 'n/a';
}

export function printTable(rows: readonly Row[], out: (line: string) => void = console.log): void {
  const header: Row = {
    bench: 'bench',
    subject: 'subject',
    value: 'value',
    detail: 'detail',
    ratio: 'ratio',
    note: 'note',
  };
  const cells = (r: Row) => [
    r.bench,
    r.subject,
    r.value,
    r.detail ?? '',
    r.ratio ?? '',
    r.note ?? '',
  ];
  const all = [header, ...rows].map(cells);
  const widths = all[0]?.map((_, i) => Math.max(...all.map((c) => (c[i] as string).length))) ?? [];
  const line = (c: string[]) =>
    `| ${c.map((cell, i) => (i === 2 || i === 4 ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number))).join(' | ')} |`;
  out(line(all[0] as string[]));
  out(
    `|${widths.map((w, i) => (i === 2 || i === 4 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
  );
  for (const c of all.slice(1)) out(line(c));
}
