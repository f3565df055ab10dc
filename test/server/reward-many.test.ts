/**
 * `lightning.rewardMany` (issue 26): a leaderboard's rewards recorded `queued` at once, each
 * checked as `reward` checks it (one a budget refuses is listed, the others recorded), shown
 * `queued` on its player's screen until its code exists, then sent by the reconciler, one
 * withdrawal request each. A bad list records nothing.
 */
import { expect } from 'chai';
import { BudgetExceededError, InvalidArgumentError } from '../../src/errors.js';
import { type Arena, startArena } from '../room/support.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';

interface ClientEntry {
  status: string;
  code: string;
}

describe('lightning.rewardMany: a leaderboard through the payout queue', function () {
  this.timeout(20_000);
  let game: Game | undefined;
  afterEach(async () => {
    await game?.stop();
    game = undefined;
  });

  it('queues every reward at once; the entry says queued until the drain makes its code', async () => {
    game = await startArena({
      reconciler: { enabled: false },
      budgets: { perPlayer: { msat: 50_000, windowMs: 60_000 } },
    });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const requests = () => game?.emulator.control.count('POST', '/v0/withdrawal-requests') ?? 0;

    const result = await game.lightning.rewardMany([
      { playerId: 'alice', roomId: room.roomId, amountMsat: 30_000, description: 'first' },
      { playerId: 'bob', amountMsat: 20_000, description: 'second' },
      // Past alice's budget (30,000 + 30,000 > 50,000): refused, the others recorded.
      { playerId: 'alice', amountMsat: 30_000, description: 'third' },
      { playerId: 'carol', amountMsat: 10_000, description: 'fourth' },
    ]);
    expect(result.intents.map((i) => [i.playerId, i.status])).to.deep.equal([
      ['alice', 'queued'],
      ['bob', 'queued'],
      ['carol', 'queued'],
    ]);
    expect(result.refused.map((r) => [r.index, r.playerId])).to.deep.equal([[2, 'alice']]);
    expect(result.refused[0]?.error).to.be.instanceOf(BudgetExceededError);
    expect(requests(), 'nothing sent while queued').to.equal(0);
    const [first] = result.intents;
    const onScreen = () =>
      (
        alice.state as { lightning?: { rewards?: Map<string, ClientEntry> } }
      ).lightning?.rewards?.get(first?.id as string);
    await eventually(() => onScreen()?.status === 'queued', 5_000, "alice's entry says queued");
    expect(onScreen()?.code).to.equal('');
    // Journaled as creates in flight: 60,000 msats.
    expect(await game.lightning.books.ledger.balances(['inflight'])).to.deep.equal([
      { account: 'inflight', unit: 'msats', balance: '60000' },
    ]);

    // The reconciler's turn: each sent once.
    expect(await game.lightning.operator.reconciler.runOnce()).to.equal(3);
    expect(requests()).to.equal(3);
    for (const intent of result.intents) {
      const now = await game.lightning.books.ledger.get(intent.id);
      expect(now?.status).to.equal('pending');
      expect(now?.history.map((h) => h.to)).to.deep.equal(['queued', 'creating', 'pending']);
    }
    await eventually(() => onScreen()?.status === 'pending', 5_000, 'the code reaches alice');
    expect(onScreen()?.code).to.not.equal('');
    // A second pass finds nothing to send.
    await game.lightning.operator.reconciler.runOnce();
    expect(requests()).to.equal(3);
  });

  it('refuses a bad list whole, recording nothing', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const bad = await game.lightning
      .rewardMany([
        { playerId: 'alice', amountMsat: 1_000, description: 'ok' },
        { playerId: 'bob', amountMsat: -5, description: 'bad' },
      ])
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(bad).to.be.instanceOf(InvalidArgumentError);
    expect((bad as InvalidArgumentError).message).to.match(/1\.amountMsat|\[1\]/);
    const empty = await game.lightning.rewardMany([]).then(
      () => null,
      (err: unknown) => err,
    );
    expect(empty).to.be.instanceOf(InvalidArgumentError);
    expect(await game.lightning.books.ledger.openByPlayer('alice')).to.deep.equal([]);
  });
});
