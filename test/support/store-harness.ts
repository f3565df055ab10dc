/**
 * What the tests of a game over either store share, inside a describe per store: for
 * PostgreSQL's, a throwaway server for that describe (needPostgres); after each test, the games
 * it started stopped, then the ledgers it made closed.
 */
import type { LedgerStore } from '../../src/ledger/store.js';
import type { Game } from './game.js';
import { needPostgres } from './needs.js';
import { type PostgresServer, postgresAvailable, startPostgres } from './postgres.js';

export interface StoreHarness {
  /** The describe's PostgreSQL server (its describe only). */
  pg(): PostgresServer;
  readonly games: Game[];
  readonly ledgers: LedgerStore[];
}

export function storeHarness(store: 'SQLite' | 'PostgreSQL' | string): StoreHarness {
  let pg: PostgresServer | undefined;
  const games: Game[] = [];
  const ledgers: LedgerStore[] = [];
  before(async function () {
    if (store !== 'PostgreSQL') return;
    needPostgres(this);
    if (postgresAvailable()) pg = await startPostgres({ durable: false });
  });
  after(async () => pg?.stop());
  afterEach(async () => {
    for (const game of games.splice(0)) await game.stop();
    for (const ledger of ledgers.splice(0)) await ledger.close();
  });
  return {
    pg() {
      if (pg === undefined)
        throw new Error("PostgreSQL is started by the PostgreSQL describe's hooks");
      return pg;
    },
    games,
    ledgers,
  };
}
