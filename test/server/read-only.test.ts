/**
 * The public face reads (issue 23, finding 2): `lightning.books.ledger` hands a game the ledger's
 * reads and nothing that writes, so that no move skips the engine's events, journal and rooms.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

describe('server: lightning.books.ledger only reads', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('has the reads, no write, and cannot be given one', async () => {
    game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
    const reward = await game.lightning.reward({
      playerId: 'p',
      amountMsat: 20_000,
      description: 'x',
    });
    const view = game.lightning.books.ledger as unknown as Record<string, unknown>;
    expect(Object.keys(view).sort()).to.deep.equal([
      'accounts',
      'balances',
      'byGroup',
      'byRemoteId',
      'get',
      'held',
      'isBlocked',
      'journal',
      'openByPlayer',
      'openByRoom',
      'openCount',
      'operatorLog',
      'payoutPause',
      'unknowns',
    ]);
    for (const write of [
      'create',
      'transition',
      'update',
      'claimDue',
      'release',
      'advanceChecks',
      'recordEvent',
      'recordOperatorAction',
      'recordBlock',
      'recordPause',
      'close',
      'byCallbackToken',
    ]) {
      expect(view[write], write).to.equal(undefined);
    }
    expect(Object.isFrozen(view)).to.equal(true);
    expect(() => {
      view.transition = () => null;
    }).to.throw(TypeError);

    // The reads answer from the store the engine writes.
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('pending');
    expect((await game.lightning.books.ledger.openByPlayer('p')).map((i) => i.id)).to.deep.equal([
      reward.id,
    ]);
    const { entries } = await game.lightning.books.ledger.journal({ intentId: reward.id });
    expect(entries.length).to.be.greaterThan(0);
  });
});
