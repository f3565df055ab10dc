/**
 * A payout that ends unpaid after its match ended is paid again from the ledger, not by the one
 * process that heard of it. A winner's Lightning-address payment is accepted, the match settles,
 * and the payment then fails; the process whose callback moved it stops in the same instant
 * (its ledger closes right after the move, before the follow-up). The money is back in the
 * match's escrow, and another process on the same ledger (a restart, a second instance) pays
 * it again as a claim code, once, through its live audit: nothing paid twice, no escrow left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import type { AuditFinding } from '../../src/server/findings.js';
import { ArmedLedger, ArmedPostgresLedger } from '../support/armed-ledger.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';
import { needPostgres } from '../support/needs.js';
import { freshSchema, type PostgresServer, startPostgres } from '../support/postgres.js';

class EmptyRoom extends Room {}

type Armed = ArmedLedger | ArmedPostgresLedger;

/** Two ledgers of one store on one database: the first armed to close after a move. */
interface Store {
  name: string;
  pair(): { first: Armed; second: LedgerStore & { close(): Promise<void> } };
}

describe('matches: a payout that fails after its match ended is paid again by whichever process comes next', function () {
  this.timeout(30_000);
  let pg: PostgresServer | undefined;
  let dir: string;
  let emulator: Emulator;
  let emuClock: ManualClock;
  const games: Game[] = [];
  const ledgers: { close(): Promise<void> }[] = [];

  before(async function () {
    needPostgres(this);
    pg = await startPostgres({ durable: false });
  });
  after(async () => pg?.stop());
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'match-repay-'));
    // The emulator keeps payments processing until its own clock moves: the payout is accepted
    // (pending), the match settles, and only then does the payment fail.
    emuClock = new ManualClock(Date.now());
    emulator = await startEmulator({ clock: emuClock, paymentDelayMs: 2_000, logger: quietLogger });
  });
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const ledger of ledgers.splice(0)) await ledger.close().catch(() => {});
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const closeAfter = (armed: Armed) => void armed.close();
  const stores: Store[] = [
    {
      name: 'SQLite',
      pair: () => {
        const path = join(dir, 'ledger.sqlite');
        return { first: new ArmedLedger({ path }, closeAfter), second: new SqliteLedger({ path }) };
      },
    },
    {
      name: 'PostgreSQL',
      pair: () => {
        const url = pg?.url as string;
        const schema = freshSchema();
        return {
          first: new ArmedPostgresLedger(url, { schema, durability: 'none' }, closeAfter),
          second: new PostgresLedger(url, { schema, durability: 'none' }),
        };
      },
    },
  ];

  for (const store of stores) {
    it(`${store.name}: the process that heard of the failure stops before paying again; another pays it as a claim code, once`, async () => {
      const { first: firstLedger, second: secondLedger } = store.pair();
      ledgers.push(firstLedger, secondLedger);
      const first = await startGame(
        { empty: EmptyRoom },
        { emulator, ledger: firstLedger, reconciler: { enabled: false } },
      );
      games.push(first);
      const address = 'alice@emulator.test';
      const match = await first.lightning.matches.open({ entryFeeMsat: 50_000 });
      const fee = await first.lightning.matches.enter({
        matchId: match.id,
        playerId: 'alice',
        lnAddress: address,
      });
      expect(emulator.control.payStaticCharge(fee.remoteId as string).status).to.equal('OK');
      expect((await first.lightning.books.refresh(fee.id))?.status).to.equal('completed');
      emulator.control.setLnAddress(address, { failPayments: true });
      const settled = await first.lightning.matches.settle(match.id, { alice: 1 });
      expect(settled.status).to.equal('settled');
      const [payment] = settled.payouts;
      expect(payment).to.include({ kind: 'payment', status: 'pending' });

      // The payment fails; its callback moves it in the first process, whose ledger closes
      // right after the move: nothing there issues it again.
      firstLedger.armed = payment?.intentId as string;
      firstLedger.armedTo = 'failed';
      emuClock.advance(2_000);
      await eventually(() => firstLedger.armed === null, 5_000, 'the payment failed there');
      await first.stop();
      games.splice(games.indexOf(first), 1);

      // Another process on the same ledger: its reconciler and its live audit run.
      const second = await startGame(
        { empty: EmptyRoom },
        {
          emulator,
          ledger: secondLedger,
          reconciler: { intervalMs: 100 },
          audit: { intervalMs: 100, settleMs: 1 },
        },
      );
      games.push(second);
      const findings: AuditFinding[] = [];
      second.lightning.on('audit', (found) => findings.push(...found));
      const code = await eventually(
        async () =>
          (await second.lightning.matches.get(match.id)).payouts.find(
            (p) => p.kind === 'reward' && p.status === 'pending',
          ),
        10_000,
        'a claim code issued in place of the failed payment',
      );
      expect(code.amountMsat).to.equal('50000');
      expect((await second.lightning.books.claims('alice')).map((c) => c.amountMsat)).to.deep.equal(
        ['50000'],
      );

      // More looks pay nothing more: one payment, one claim code, nothing left in escrow.
      await second.lightning.books.audit();
      await second.lightning.books.refresh(match.id);
      const after = await second.lightning.matches.get(match.id);
      expect(after.status).to.equal('settled');
      expect(after.payouts.map((p) => [p.kind, p.status])).to.deep.equal([
        ['payment', 'failed'],
        ['reward', 'pending'],
      ]);
      expect(emulator.control.lnAddressPayments(address)).to.have.length(1);
      expect(
        emulator.control.withdrawalRequests().filter((w) => w.internalId === 'alice'),
      ).to.have.length(1);
      const balances = await second.lightning.books.ledger.balances([`escrow:${match.id}`]);
      expect(balances[0]?.balance ?? '0').to.equal('0');
      expect(findings.map((f) => f.type)).to.deep.equal([]);
    });
  }
});
