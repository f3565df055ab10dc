/**
 * A settlement whose presence message was lost still reaches the room (issue 12, found by the
 * soak): RedisPresence drops a message published while the room's process re-subscribes after
 * a Redis restart, and the room's hook never fired. Here the move is made in the ledger with no
 * message at all, as another process whose publish was lost would leave it.
 */
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { aliceRewarded, startArena } from './support.js';

type ClientEntry = { status: string };

describe('room: catching up with the ledger', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('delivers a move it was never told of: the hook fires once, the owner sees it', async () => {
    game = await startArena({ reconciler: { enabled: false } }, { catchUpMs: 100 });
    const { room, alice, claimed, reward } = await aliceRewarded(game);
    // Another process applied the claim; its message to this room was lost.
    const moved = await game.store.transition(reward.id, 'pending', 'completed', {
      note: 'claimed (applied elsewhere)',
    });
    expect(moved?.status).to.equal('completed');
    await eventually(() => claimed.length === 1, 3_000, 'the room hook');
    const rewards = (alice.state as { lightning?: { rewards?: Map<string, ClientEntry> } })
      .lightning?.rewards;
    await eventually(
      () => rewards?.get(reward.id)?.status === 'completed',
      3_000,
      'the owner screen',
    );
    // Further catch-ups find nothing new: the hook stays fired once.
    await room.waitForNextPatch();
    await eventually(
      async () => {
        await new Promise((resolve) => room.clock.setTimeout(resolve, 150));
        return true;
      },
      1_000,
      'another catch-up round',
    );
    expect(claimed).to.deep.equal([reward.id]);
  });
});
