/**
 * The payout circuit breaker (issue 13): ambiguous or 5xx answers crossing a threshold, or a
 * wallet about to fall under its floor, pause payouts until `lightning.resume()`. A paused
 * payout records nothing and sends nothing; money coming in (entry fees) is never paused.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { PayoutsPausedError } from '../../src/errors.js';
import type { PayoutPause } from '../../src/server/events.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

describe('payout circuit breaker', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  const reward = (playerId: string) =>
    game.lightning.reward({ playerId, amountMsat: 20_000, description: 'x' });

  it('trips after `failures` ambiguous answers, refuses payouts until resume()', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      {
        reconciler: { enabled: false },
        breaker: { failures: 3, windowMs: 60_000 },
        api: { timeoutMs: 300, maxRetries: 0 },
      },
    );
    const pauses: PayoutPause[] = [];
    game.lightning.on('paused', (p) => pauses.push(p));
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 503,
      times: 3,
    });
    for (const player of ['a', 'b', 'c']) await reward(player).catch(() => {});
    expect(pauses).to.have.length(1);
    expect(pauses[0]?.reason).to.match(/3 ambiguous or 5xx answers/);
    expect(game.lightning.paused).to.deep.equal(pauses[0]);

    const sent = game.emulator.control.count('POST', '/v0/withdrawal-requests');
    const refused = await reward('d').catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(PayoutsPausedError);
    expect(game.emulator.control.count('POST', '/v0/withdrawal-requests')).to.equal(sent);
    expect(await game.lightning.ledger.openByPlayer('d')).to.deep.equal([]);
    // Money coming in is not paused.
    const fee = await game.lightning.chargeEntryFee({
      playerId: 'e',
      amountMsat: 1_000,
      description: 'x',
    });
    expect(fee.status).to.equal('pending');

    game.lightning.resume();
    expect(game.lightning.paused).to.equal(null);
    expect((await reward('d')).status).to.equal('pending');
    expect(pauses).to.have.length(1);
  });

  it('pauses rather than let the wallet fall below its floor', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false }, breaker: { walletFloorMsat: 0 } },
    );
    const { balance } = await game.lightning.api.wallet.get();
    const wallet = Number(balance) * 1000;
    await game.stop();
    game = await startGame(
      { empty: EmptyRoom },
      // Room for exactly two 20,000 msat payouts above the floor.
      { reconciler: { enabled: false }, breaker: { walletFloorMsat: wallet - 40_000 } },
    );
    const pauses: PayoutPause[] = [];
    game.lightning.on('paused', (p) => pauses.push(p));
    expect((await reward('a')).status).to.equal('pending');
    expect((await reward('b')).status).to.equal('pending');
    const refused = await reward('c').catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(PayoutsPausedError);
    expect((refused as PayoutsPausedError).reason).to.match(/floor/);
    expect(pauses).to.have.length(1);
    expect(game.emulator.control.withdrawalRequests()).to.have.length(2);
  });
});
