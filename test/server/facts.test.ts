/**
 * Issue 21: a fact is applied by what it proves, whatever route brings it and whatever race it
 * loses, and an event fires once by a compare-and-set in the ledger, never by a flag in one
 * process's memory. Each case is what was reproduced with the public API against the emulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { AmbiguousResultError } from '../../src/api/errors.js';
import { LN_ADDRESS_DOMAIN, ManualClock, startEmulator } from '../../src/emulator/index.js';
import type { Intent } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { TransitionOptions } from '../../src/ledger/store.js';
import type { MatchView } from '../../src/server/match/view.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

describe('facts win by what they prove (issue 21)', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  const dirs: string[] = [];
  const owned: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const thing of owned.splice(0)) await thing.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function pay(game: Game, fee: Intent): Promise<void> {
    expect(game.emulator.control.payStaticCharge(fee.remoteId as string).status).to.equal('OK');
    await eventually(
      async () => (await game.lightning.books.ledger.get(fee.id))?.status === 'completed',
      5_000,
      `the fee of ${fee.playerId} paid`,
    );
  }

  it('a settled match whose payout answer was lost pays its winner after the service expires the request (its expiry callback first)', async () => {
    // The service processes the winner's payout create and loses the answer: the payout is
    // unknown, with no code. At the deadline the service sends its ordinary expiry callback,
    // whose re-read writes the request's code into the payout and ends it expired. That code was
    // never shown to anyone, so the payout is issued again. The reconciler runs on its own, as
    // in production, where the callback comes first: the request's re-read is due only at its
    // deadline plus the expiry margin.
    const clock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock });
    owned.push(emulator);
    const game = await startGame(
      { empty: EmptyRoom },
      { emulator, clock, reconciler: { intervalMs: 20 }, api: { timeoutMs: 300, maxRetries: 0 } },
    );
    games.push(game);
    const match = await game.lightning.matches.open({ entryFeeMsat: 25_000, claimExpiresIn: 600 });
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' }));
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    const settling = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settling.payouts.map((p) => p.status)).to.deep.equal(['unknown']);
    const [lost] = settling.payouts;
    expect((await game.lightning.books.ledger.get(lost?.intentId as string))?.code).to.equal(null);

    clock.advance(601_000); // the service expires the request and sends its callback
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).status === 'settled',
      5_000,
      'the match settled',
    );
    const settled = await game.lightning.matches.get(match.id);
    expect(settled.payouts.map((p) => p.status)).to.deep.equal(['expired', 'pending']);
    const expired = await game.lightning.books.ledger.get(lost?.intentId as string);
    expect(expired?.code, 'the re-read recorded the code').to.be.a('string');
    const claims = await game.lightning.books.claims('alice');
    expect(claims.map((c) => c.amountMsat)).to.deep.equal(['25000']);
    const requests = emulator.control.withdrawalRequests().filter((w) => w.internalId === 'alice');
    expect(requests.map((w) => w.status)).to.deep.equal(['expired', 'pending']);
  });

  it('a callback that proves a payment while its create is in flight is applied after losing the race to the create answer', async () => {
    // The payment to a Lightning address completes at once at the service, which sends its
    // callback; its create answer hangs and is lost. The callback's check read the intent while
    // it was `creating`; the create's failure made it `unknown` before the check could move it.
    const emulator = await startEmulator({});
    const ledger = new HeldLedger();
    owned.push(emulator, ledger);
    const game = await startGame(
      { empty: EmptyRoom },
      { emulator, ledger, reconciler: { enabled: false }, api: { timeoutMs: 400, maxRetries: 0 } },
    );
    games.push(game);
    emulator.control.faults.add({
      method: 'POST',
      path: '/v0/ln-address/send-payment',
      mode: 'process-then-hang',
      times: 1,
    });
    const failed = await game.lightning
      .payAddress({
        playerId: 'alice',
        lnAddress: `alice@${LN_ADDRESS_DOMAIN}`,
        amountMsat: 30_000,
      })
      .catch((err: unknown) => err);
    expect(failed).to.be.instanceOf(AmbiguousResultError);
    const [payment] = emulator.control.payments();
    expect(payment?.status).to.equal('completed');
    await eventually(() => ledger.released, 5_000, 'the callback lost its race');
    await eventually(
      async () => {
        const intent = await game.lightning.books.ledger.get(ledger.heldId as string);
        return intent?.status === 'completed';
      },
      5_000,
      'the proven payment completed',
    );
    const intent = await game.lightning.books.ledger.get(ledger.heldId as string);
    expect(intent?.remoteId).to.equal(payment?.id);
    expect(intent?.history.map((h) => h.to)).to.deep.equal(['creating', 'unknown', 'completed']);
    expect(await game.lightning.operator.unknowns()).to.deep.equal([]);
  });

  it('match.funded fires once when every fee is paid at once, on a file ledger', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'facts-'));
    dirs.push(dir);
    const game = await startGame(
      { empty: EmptyRoom },
      { ledger: join(dir, 'ledger.sqlite'), reconciler: { enabled: false } },
    );
    games.push(game);
    const funded: MatchView[] = [];
    const settled: MatchView[] = [];
    game.lightning.on('match.funded', (m) => funded.push(m));
    game.lightning.on('match.settled', (m) => settled.push(m));
    const ids: string[] = [];
    for (let round = 0; round < 8; round++) {
      const match = await game.lightning.matches.open({ entryFeeMsat: 10_000, seats: 2 });
      ids.push(match.id);
      const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
      const bob = await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' });
      // Both pay in the same instant: their callbacks race into the same check.
      game.emulator.control.payStaticCharge(alice.remoteId as string);
      game.emulator.control.payStaticCharge(bob.remoteId as string);
    }
    await eventually(() => funded.length >= ids.length, 10_000, 'every match funded');
    // Settling takes the match through many more ledger writes than any funded check in flight.
    for (const id of ids) await game.lightning.matches.settle(id, { alice: 1 });
    await eventually(() => settled.length === ids.length, 10_000, 'every match settled');
    expect(funded.map((m) => m.id).sort()).to.deep.equal([...ids].sort());
  });
});

/**
 * A file ledger that holds the callback's `creating -> pending` move until the create's own
 * failure has made the intent `unknown`: the interleaving that lost the proof.
 */
class HeldLedger extends SqliteLedger {
  heldId: string | undefined;
  released = false;

  constructor() {
    super({ path: ':memory:' });
  }

  override async transition(
    id: string,
    from: Parameters<SqliteLedger['transition']>[1],
    to: Parameters<SqliteLedger['transition']>[2],
    options: TransitionOptions = {},
  ): Promise<Intent | null> {
    if (options.note === 'created (seen by callback)' && this.heldId === undefined) {
      this.heldId = id;
      await eventually(
        async () => (await this.get(id))?.status === 'unknown',
        5_000,
        'the create answer lost',
      );
      const lost = await super.transition(id, from, to, options);
      this.released = true;
      return lost;
    }
    return super.transition(id, from, to, options);
  }
}
