/**
 * The stores' layouts: each store's schema is the numbered files of sql/<store>/migrations/,
 * applied in order, each in one transaction, and never edited once released (a change is a new
 * file; docs/ARCHITECTURE.md). A database records how many it has had; one at a number this
 * library does not know is refused (IncompatibleLedgerError). Costs one file read per store
 * and process, when its first ledger opens.
 */
import { sqlFile } from './sql.js';

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
  return sqlFile(`${store}/migrations/${name}`);
}
