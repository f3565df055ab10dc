/**
 * Issue 34: tabs in the live audit, on each store. A tab below zero (a store that lost its
 * `funds` guard let a withdrawal past the balance) is a finding, reported once and found by every
 * run while it stays; the tabs are owed to players, so the cover counts them.
 */
import { randomUUID } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { CreateGuards, LedgerStore } from '../../src/ledger/store.js';
import { type Game, startGame } from '../support/game.js';
import type { PostgresServer } from '../support/postgres.js';
import { storeHarness } from '../support/store-harness.js';

class EmptyRoom extends Room {}

/** While `lost` is set, a create's `funds` guard is dropped: a store that lost the rule. */
interface Guardless extends LedgerStore {
  lost: boolean;
}

function withoutFunds(guards: CreateGuards | undefined, lost: boolean): CreateGuards | undefined {
  if (!lost || guards === undefined) return guards;
  const { funds: _dropped, ...rest } = guards;
  return rest;
}

class GuardlessSqlite extends SqliteLedger implements Guardless {
  lost = false;
  constructor() {
    super({ path: ':memory:' });
  }
  override create(...args: Parameters<SqliteLedger['create']>): ReturnType<SqliteLedger['create']> {
    const [intent, now, guards, postings] = args;
    return super.create(intent, now, withoutFunds(guards, this.lost), postings);
  }
}

class GuardlessPostgres extends PostgresLedger implements Guardless {
  lost = false;
  override create(
    ...args: Parameters<PostgresLedger['create']>
  ): ReturnType<PostgresLedger['create']> {
    const [intent, now, guards, postings] = args;
    return super.create(intent, now, withoutFunds(guards, this.lost), postings);
  }
}

const stores: { name: string; make: (pg: () => PostgresServer) => Guardless }[] = [
  { name: 'SQLite', make: () => new GuardlessSqlite() },
  {
    name: 'PostgreSQL',
    make: (pg) =>
      new GuardlessPostgres(pg().url, {
        schema: `t_${randomUUID().replaceAll('-', '')}`,
        durability: 'none',
      }),
  },
];

for (const store of stores) {
  describe(`tabs in the live audit (issue 34, ${store.name})`, function () {
    this.timeout(30_000);
    const { pg, games, ledgers } = storeHarness(store.name);

    async function start(): Promise<{ game: Game; ledger: Guardless }> {
      const ledger = store.make(pg);
      ledgers.push(ledger);
      const game = await startGame(
        { empty: EmptyRoom },
        { ledger, reconciler: { enabled: false }, audit: { walletSettleMs: 0 } },
      );
      games.push(game);
      return { game, ledger };
    }

    it('finds a tab below zero, reports it once, and finds it on every run until it is whole', async () => {
      const { game, ledger } = await start();
      const { tabs, books } = game.lightning;
      await tabs.credit({ playerId: 'alice', amountMsat: 20_000, description: 'won' });
      await tabs.withdraw({ playerId: 'alice', amountMsat: 15_000, description: 'cash out' });
      expect((await books.audit()).findings).to.deep.equal([]);

      ledger.lost = true;
      await tabs.withdraw({ playerId: 'alice', amountMsat: 10_000, description: 'past it' });
      ledger.lost = false;
      const report = await books.audit();
      expect(report.reported.map((f) => f.type)).to.deep.equal(['tab-negative']);
      expect(report.reported[0]).to.include({ playerId: 'alice', balanceMsat: '-5000' });
      // Not drawn from again, still below zero: found, not reported twice.
      const again = await books.audit();
      expect(again.findings.map((f) => f.type)).to.deep.equal(['tab-negative']);
      expect(again.reported).to.deep.equal([]);

      await tabs.credit({ playerId: 'alice', amountMsat: 5_000, description: 'made whole' });
      expect((await books.audit()).findings).to.deep.equal([]);
    });

    it('counts the tabs as owed to players in the cover', async () => {
      const { game } = await start();
      const { tabs, books } = game.lightning;
      await tabs.credit({ playerId: 'bob', amountMsat: 50_000, description: 'won' });
      expect((await books.audit()).findings).to.deep.equal([]);
      // The wallet holds less than the tabs owe: nothing left it through the game.
      game.emulator.control.setWallet(30_000);
      const report = await books.audit();
      const short = report.findings.find((f) => f.type === 'cover-short');
      expect(short).to.include({ coverMsat: '-20000' });
      expect(short?.message).to.include('of which tabs 50000');
      expect(report.balances).to.include({ tabsMsat: '50000', owedToPlayersMsat: '50000' });
    });
  });
}
