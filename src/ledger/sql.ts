/**
 * The stores' SQL under sql/<store>/, read once per process: a layout is the numbered files of
 * migrations/, applied in order, never edited once released (docs/ARCHITECTURE.md); a statement
 * is a `.sql` file loaded by name, its slots `{name}` filled from constants it shares.
 */
import { readFileSync } from 'node:fs';
import { ledgerFile } from './files.js';
import { WINDOW_KINDS, type WindowOver } from './intent.js';

/** Each store's migrations, in order: the file at index n takes a database to layout n + 1. */
export const MIGRATIONS = {
  sqlite: ['0001-layout.sql'],
  postgres: ['0001-layout.sql'],
} as const satisfies Record<string, readonly string[]>;

export type LayoutStore = keyof typeof MIGRATIONS;

/** The layout this library writes and reads: its store's last migration. */
export function layoutOf(store: LayoutStore): number {
  return MIGRATIONS[store].length;
}

/** The SQL that takes a `store` database from layout `to - 1` to `to`. */
export function migration(store: LayoutStore, to: number): string {
  const name = MIGRATIONS[store][to - 1];
  if (name === undefined) throw new RangeError(`no migration to ${store} layout ${to}`);
  return readFileSync(ledgerFile(`./sql/${store}/migrations/${name}`), 'utf8');
}

/** Values as an SQL list: `'a', 'b'`. */
export const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** What a budget window counts (BudgetWindow.over), as both stores' indexes and sums spell it. */
export const WINDOW_SQL = Object.fromEntries(
  Object.entries(WINDOW_KINDS).map(([over, kinds]) => [over, `kind IN (${sqlList(kinds)})`]),
) as Record<WindowOver, string>;

/** The operator log's statements, on every store (rules.ts LineChange). */
export const OPERATOR_SQL = [
  'append-line',
  'block',
  'unblock',
  'blocked',
  'pause',
  'pause-line',
  'resume',
  'paused',
] as const;

/** The operator log's filters, by column: the same on every store. */
export const LOG_FILTERS = { intentId: 'intent_id', playerId: 'player_id', since: 'at' };

/** A page's filters that are given as WHERE terms (`since`: at or after), numbered after `$`/`?`. */
export function filterTerms(
  filters: Readonly<Record<string, unknown>>,
  columns: Readonly<Record<string, string>>,
  values: unknown[],
  sigil: '$' | '?',
): string[] {
  return Object.entries(columns).flatMap(([key, column]) => {
    const value = filters[key];
    if (value === undefined) return [];
    return [`${column} ${key === 'since' ? '>=' : '='} ${sigil}${values.push(value)}`];
  });
}

/** Statements as loaded, without comments: node:sqlite pays for them on every run. */
const texts = new Map<string, string>();

export function loadSql<N extends string>(
  store: LayoutStore,
  names: readonly N[],
  slots: Readonly<Record<string, string>> = {},
): Record<N, string> {
  const out = {} as Record<N, string>;
  for (const name of names) {
    const file = `${store}/${name}.sql`;
    let text = texts.get(file);
    if (text === undefined) {
      text = readFileSync(ledgerFile(`./sql/${file}`), 'utf8')
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n')
        .trim();
      texts.set(file, text);
    }
    out[name] = text.replace(/\{(\w+)\}/g, (slot, key: string) => {
      const value = slots[key];
      if (value === undefined) throw new Error(`${file}: no value for the slot ${slot}`);
      return value;
    });
  }
  return out;
}
