import { Room } from '@colyseus/core';
import { expect } from 'chai';
import type { Intent } from '../../src/ledger/intent.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

describe('server core: a reward settles through its callback', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('claimed reward: callback -> re-read -> completed, settled emitted once', async () => {
    game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
    const settled: Intent[] = [];
    game.lightning.on('settled', (i) => settled.push(i));
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 50_000,
      description: 'Winner',
    });
    expect(reward.status).to.equal('pending');
    expect(reward.code).to.match(/^lnurl1/i);
    const claim = game.emulator.control.claimWithdrawal(reward.remoteId as string);
    expect(claim).to.include({ status: 'OK' });
    await eventually(
      async () => (await game.lightning.books.ledger.get(reward.id))?.status === 'completed',
    );
    // The route answers a callback once it has applied it: with every callback answered, a
    // second `settled` would already be here.
    await game.emulator.control.callbacks.idle();
    const sent = game.emulator.control.callbackLog.filter((c) => c.resourceId === reward.remoteId);
    expect(sent.map((c) => [c.outcome, c.httpStatus])).to.deep.equal([['delivered', 200]]);
    expect(settled).to.have.length(1);
    expect(settled[0]?.id).to.equal(reward.id);
  });
});
