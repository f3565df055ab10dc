/**
 * Issue 13, finding 1: an id that comes from a callback's body is only a hint. For an intent
 * that does not know its resource (its create answer was lost), the server writes nothing and
 * PATCHes nothing for that id until the service's record of it carries this intent's callback
 * URL. Before, an entry fee past its deadline closed whatever charge the body named.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { AmbiguousResultError } from '../../src/api/errors.js';
import { ManualClock } from '../../src/emulator/index.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

describe('callbacks: an id from the body is proven before anything is written', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it("a callback naming another player's charge closes nothing and records nothing", async () => {
    const clock = new ManualClock(Date.now());
    game = await startGame(
      { empty: EmptyRoom },
      { clock, reconciler: { enabled: false }, api: { timeoutMs: 300, maxRetries: 0 } },
    );
    // Bob's fee: an open charge, 48 minutes before its deadline.
    const bob = await game.lightning.chargeEntryFee({
      playerId: 'bob',
      amountMsat: 10_000,
      description: 'Entry',
      expiresIn: 3600,
    });
    // The attacker's own fee: its create answer is lost, so it knows no charge id.
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/static-charges',
      mode: 'process-then-destroy',
      times: 1,
    });
    const lost = await game.lightning
      .chargeEntryFee({
        playerId: 'mallory',
        amountMsat: 10_000,
        description: 'Entry',
        expiresIn: 60,
      })
      .catch((err: unknown) => err);
    expect(lost).to.be.instanceOf(AmbiguousResultError);
    const [mine] = await game.lightning.books.ledger.openByPlayer('mallory');
    expect(mine).to.include({ playerId: 'mallory', remoteId: null });
    clock.advance(12 * 60_000); // its deadline has passed

    const res = await request(game.callbackUrl(mine?.callbackToken as string), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: bob.remoteId }),
    });
    await res.body.dump();
    expect(res.statusCode).to.equal(200);

    expect(game.emulator.control.count('PATCH', /static-charges/)).to.equal(0);
    const charge = game.emulator.control.staticCharges().find((c) => c.id === bob.remoteId);
    expect(charge?.status).to.equal('active');
    expect(await game.lightning.books.ledger.get(mine?.id as string)).to.include({
      status: 'unknown',
      remoteId: null,
    });
    // Bob can still pay, and his fee settles.
    expect(game.emulator.control.payStaticCharge(bob.remoteId as string, 10_000).status).to.equal(
      'OK',
    );
  });
});
