/**
 * The soak's printed figures: one row per figure, grouped by section, printed as one table.
 */
export interface Figure {
  section: string;
  name: string;
  value: string;
}

export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** `{ a: 3, b: 1 }` as `a 3, b 1`, largest first; `none` when empty. */
export function tally(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${count(n)}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export function tallyOf(items: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

export function printFigures(figures: readonly Figure[], out: (line: string) => void): void {
  const w0 = Math.max(...figures.map((f) => f.section.length), 7);
  const w1 = Math.max(...figures.map((f) => f.name.length), 6);
  const line = (a: string, b: string, c: string) => `| ${a.padEnd(w0)} | ${b.padEnd(w1)} | ${c}`;
  out(line('section', 'figure', 'value'));
  out(`|${'-'.repeat(w0 + 2)}|${'-'.repeat(w1 + 2)}|${'-'.repeat(20)}`);
  let last = '';
  for (const f of figures) {
    out(line(f.section === last ? '' : f.section, f.name, f.value));
    last = f.section;
  }
}
