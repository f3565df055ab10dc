/**
 * Reads what the soak checks at the end from the ledger store: every intent (a scan of the
 * store's intents table: the soak's ledger holds nothing else), and the journal
 * (every entry, a page of 1,000 at a time; each intent's entries by `journal({ intentId })`;
 * the balances of every class and of every account the intents name).
 *
 * Cost: one read per intent, one journal query per intent (16 at a time), one per 1,000
 * entries, one balances call per 500 accounts: a few seconds for the long soak's ledger.
 */
import type pg from 'pg';
import type { Intent } from '../src/ledger/intent.js';
import type { JournalEntry, JournalQuery } from '../src/ledger/journal.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import type { LedgerStore } from '../src/ledger/store.js';
import { accountsOf, type Books } from './money.js';

/** Every intent in the ledger (the ids from `pool`, the ledger's database), read one by one. */
export async function readLedger(ledger: LedgerStore, pool: pg.Pool): Promise<Intent[]> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM lightning.intents');
  const ids = rows.map((row) => row.id);
  const intents: Intent[] = [];
  for (let k = 0; k < ids.length; k += 200) {
    const batch = await Promise.all(ids.slice(k, k + 200).map((id) => ledger.get(id)));
    for (const intent of batch) if (intent) intents.push(intent);
  }
  return intents;
}

/** Every page of a journal query, in seq order. */
async function allEntries(ledger: LedgerStore, query: JournalQuery): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await ledger.journal({ ...query, limit: 1000, ...(after ? { after } : {}) });
    entries.push(...page.entries);
    if (page.next === null) return entries;
    after = page.next;
  }
}

/** The journal as the store keeps it; `error` says why there is none. */
export async function readBooks(ledger: LedgerStore, intents: readonly Intent[]): Promise<Books> {
  const books: Books = {
    error: null,
    classes: [],
    accounts: [],
    entries: [],
    byIntent: new Map(),
    commitOrder: ledger instanceof PostgresLedger,
  };
  if (typeof ledger.journal !== 'function' || typeof ledger.balances !== 'function') {
    return { ...books, error: `${ledger.constructor.name} has no journal() or balances()` };
  }
  try {
    books.classes = await ledger.balances();
    const names = accountsOf(intents);
    for (let k = 0; k < names.length; k += 500) {
      books.accounts.push(...(await ledger.balances(names.slice(k, k + 500))));
    }
    books.entries = await allEntries(ledger, {});
    for (let k = 0; k < intents.length; k += 16) {
      const batch = intents.slice(k, k + 16);
      const lists = await Promise.all(batch.map((i) => allEntries(ledger, { intentId: i.id })));
      for (const [n, intent] of batch.entries()) books.byIntent.set(intent.id, lists[n] ?? []);
    }
  } catch (err) {
    return { ...books, error: `reading the journal failed: ${(err as Error).message}` };
  }
  return books;
}
