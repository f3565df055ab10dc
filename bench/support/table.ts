/** The one table every benchmark reports into: absolute figures, and ratios against a limit. */

export interface Row {
  /** Which benchmark: `1 client`, `3 scale`... */
  bench: string;
  /** What was measured: `colyseus-lightning`, `undici.request + JSON.parse (limit)`. */
  subject: string;
  /** The figure, already formatted: `18,200 req/s`. */
  value: string;
  /**
   * What the figure is held to, measured in the same run where it can be (`28,224 /s bare
   * node:http`), or a fixed bound (`50 ms patch interval`). Printed beside the value.
   */
  limit?: string;
  /** The figure against its limit, formatted: `0.93`. */
  ratio?: string;
  /** Other figures of the same subject: `p50 1.6 ms, p99 4.1 ms`. */
  detail?: string;
  /** A goal for the ratio or the figure, and whether this run met it: listed after the table. */
  goal?: { text: string; met: boolean };
  /** A remark. */
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

const COLUMNS = ['bench', 'subject', 'value', 'limit', 'ratio', 'goal', 'detail', 'note'] as const;
/** Numbers read best right-aligned. */
const RIGHT = new Set(['value', 'limit', 'ratio']);

export function printTable(rows: readonly Row[], out: (line: string) => void = console.log): void {
  const cells = (r: Row) =>
    COLUMNS.map((c) => {
      if (c === 'goal') return r.goal ? `${r.goal.text}: ${r.goal.met ? 'met' : 'NOT MET'}` : '';
      return r[c] ?? '';
    });
  const all = [[...COLUMNS] as string[], ...rows.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...all.map((c) => (c[i] as string).length)));
  const line = (c: string[]) =>
    `| ${c.map((cell, i) => (RIGHT.has(COLUMNS[i] as string) ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number))).join(' | ')} |`;
  out(line(all[0] as string[]));
  out(
    `|${widths.map((w, i) => (RIGHT.has(COLUMNS[i] as string) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
  );
  for (const c of all.slice(1)) out(line(c));
}

/** The goals of the run, one line each, met or not: what `npm run bench` ends with. */
export function printGoals(rows: readonly Row[], out: (line: string) => void = console.log): void {
  const goals = rows.filter((r) => r.goal);
  if (goals.length === 0) return;
  const met = goals.filter((r) => r.goal?.met).length;
  out(`\ngoals: ${met} of ${goals.length} met`);
  for (const r of goals) {
    out(
      `  ${r.goal?.met ? 'met    ' : 'NOT MET'}  ${r.bench} ${r.subject}: ${r.value}${r.limit ? ` against ${r.limit}` : ''}${r.ratio ? ` (ratio ${r.ratio})` : ''}; goal ${r.goal?.text}`,
    );
  }
}
