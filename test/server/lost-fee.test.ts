/**
 * An entry fee whose charge's create answer was lost (issue 30): the player's `enter` is met at
 * once by a new charge for the same seat, never refused; the lost charge, should it exist at the
 * service and be paid after all, is found by its callback token and refunded to the player once,
 * journaled; the seat and the pot count one fee. On SQLite and on PostgreSQL, against the
 * emulator's fault injection (the answer dropped after the charge was made, or never sent: the
 * client times out).
 */
import { randomUUID } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import type { FaultRule } from '../../src/emulator/faults.js';
import type { Intent } from '../../src/ledger/intent.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';
import type { PostgresServer } from '../support/postgres.js';
import { storeHarness } from '../support/store-harness.js';

class EmptyRoom extends Room {}

const CHARGES = '/v0/static-charges';
const FEE = 100_000;

const stores: { name: string; make: (pg: () => PostgresServer) => LedgerStore }[] = [
  { name: 'SQLite', make: () => new SqliteLedger({ path: ':memory:' }) },
  {
    name: 'PostgreSQL',
    make: (pg) =>
      new PostgresLedger(pg().url, {
        schema: `t_${randomUUID().replaceAll('-', '')}`,
        durability: 'none',
      }),
  },
];

for (const store of stores) {
  describe(`a lost entry-fee charge is replaced at once, and refunded if paid (${store.name})`, function () {
    this.timeout(30_000);
    const { pg, games, ledgers } = storeHarness(store.name);

    async function start(): Promise<Game> {
      const ledger = store.make(pg);
      ledgers.push(ledger);
      const game = await startGame(
        { empty: EmptyRoom },
        {
          ledger,
          reconciler: { enabled: false, expiryMarginMs: 1 },
          api: { timeoutMs: 1_000, retry: { baseDelayMs: 1, maxDelayMs: 5 } },
        },
      );
      games.push(game);
      return game;
    }

    /** The charges the emulator holds for a player. */
    function chargesOf(game: Game, playerId: string) {
      return game.emulator.control.staticCharges().filter((c) => c.internalId === playerId);
    }

    /** The player pays a charge at the emulator; its callback moves the fee. */
    async function pay(game: Game, remoteId: string, feeId: string): Promise<Intent> {
      expect(game.emulator.control.payStaticCharge(remoteId).status).to.equal('OK');
      return eventually(
        async () => {
          const fee = await game.lightning.books.ledger.get(feeId);
          return fee?.status === 'completed' && fee;
        },
        5_000,
        `fee ${feeId} paid`,
      );
    }

    function requestsOf(game: Game, playerId: string) {
      return game.emulator.control.withdrawalRequests().filter((w) => w.internalId === playerId);
    }

    const faults: [string, FaultRule][] = [
      ['dropped after the charge was made', { mode: 'process-then-destroy' }],
      ['never sent: the client timed out', { mode: 'process-then-hang' }],
    ];

    for (const [how, fault] of faults) {
      it(`the answer ${how}: enter resolves with a new charge; both paid, the seat counts one and the lost one is refunded once`, async () => {
        const game = await start();
        const refunds: [Intent, string][] = [];
        game.lightning.on('match.refund', (r, why) => refunds.push([r, why]));
        const match = await game.lightning.matches.open({
          roomId: null,
          entryFeeMsat: FEE,
          rake: 0.1,
          players: ['alice', 'bob'],
        });
        game.emulator.control.faults.add({ method: 'POST', path: CHARGES, times: 1, ...fault });

        // The player is not turned away: a fresh charge, with a code to pay, names the lost one.
        const fee = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
        expect(fee.status).to.equal('pending');
        expect(fee.code).to.be.a('string');
        const lostId = fee.meta.replaces as string;
        expect(lostId).to.be.a('string');
        const lost = await game.lightning.books.ledger.get(lostId);
        expect(lost).to.include({ status: 'unknown', code: null, playerId: 'alice' });
        // The lost charge exists at the service (made before its answer was lost).
        const atService = await eventually(
          () => chargesOf(game, 'alice').find((c) => c.id !== fee.remoteId),
          5_000,
          'the lost charge at the service',
        );
        expect(chargesOf(game, 'alice')).to.have.length(2);
        // Entering again returns the new charge: nothing more is charged.
        const again = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
        expect(again.id).to.equal(fee.id);
        expect(chargesOf(game, 'alice')).to.have.length(2);

        await pay(game, fee.remoteId as string, fee.id);
        // The lost one is paid after all: its callback proves it, and the player gets it back.
        await pay(game, atService.id, lostId);
        const refund = await eventually(
          () => requestsOf(game, 'alice')[0],
          5_000,
          'the refund of the lost charge',
        );
        expect(refund.amount).to.equal(String(FEE));
        await eventually(() => refunds.length > 0, 5_000, 'the match.refund event');
        expect(refunds.map(([r, why]) => [r.meta.feeId, why])).to.deep.equal([
          [lostId, 'its charge was replaced by a new one'],
        ]);
        // A second look at the lost fee (a repeated callback, a refresh) refunds nothing more.
        await game.lightning.books.refresh(lostId);
        expect(requestsOf(game, 'alice')).to.have.length(1);

        // The seat is paid once: the match waits for bob, and the pot is two fees, not three.
        expect((await game.lightning.matches.get(match.id)).funded).to.equal(false);
        const bob = await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' });
        await pay(game, bob.remoteId as string, bob.id);
        await eventually(
          async () => (await game.lightning.matches.get(match.id)).funded,
          5_000,
          'the match funded',
        );
        const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
        expect(settled).to.include({ status: 'settled', potMsat: String(2 * FEE) });
        const amounts = requestsOf(game, 'alice').map((w) => w.amount);
        expect(amounts.sort()).to.deep.equal([String(FEE), String(2 * FEE - (2 * FEE) / 10)]);
        expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
      });
    }

    it('a lost charge that ended expired, paid after all, is still refunded once', async () => {
      const game = await start();
      const match = await game.lightning.matches.open({
        roomId: null,
        entryFeeMsat: FEE,
        players: ['alice', 'bob'],
      });
      game.emulator.control.faults.add({
        method: 'POST',
        path: CHARGES,
        times: 1,
        mode: 'process-then-destroy',
      });
      const fee = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
      const lostId = fee.meta.replaces as string;
      await pay(game, fee.remoteId as string, fee.id);
      // Aborted: the paid fee is refunded, and the lost one, closed by the decision, ends
      // expired (its code was never given to anyone).
      await game.lightning.matches.abort(match.id, 'called off');
      const expired = await eventually(
        async () => {
          await game.lightning.books.refresh(lostId);
          const lost = await game.lightning.books.ledger.get(lostId);
          return lost?.status === 'expired' && lost;
        },
        5_000,
        'the lost fee expired',
      );
      expect(expired.remoteId).to.equal(null);
      await eventually(
        async () => (await game.lightning.matches.get(match.id)).status === 'aborted',
        5_000,
        'the match aborted',
      );
      expect(requestsOf(game, 'alice')).to.have.length(1);
      // Paid anyway: its callback names the charge, which proves to be this fee's.
      const atService = chargesOf(game, 'alice').find((c) => c.id !== fee.remoteId);
      expect(game.emulator.control.payStaticCharge(atService?.id as string).status).to.equal('OK');
      await eventually(() => requestsOf(game, 'alice').length === 2, 5_000, 'its refund');
      await game.lightning.books.refresh(lostId);
      expect(requestsOf(game, 'alice').map((w) => w.amount)).to.deep.equal([
        String(FEE),
        String(FEE),
      ]);
      expect(await game.lightning.books.ledger.get(lostId)).to.deep.include({
        remoteId: atService?.id,
      });
      expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    });
  });
}
