/**
 * A settlement whose presence message was lost still reaches the room (issue 12, found by the
 * soak): RedisPresence drops a message published while the room's process re-subscribes after
 * a Redis restart, and the room's hook never fired. Here the move is made in the ledger with no
 * message at all, as another process whose publish was lost would leave it.
 *
 * Rounds are counted at the ledger: a round reads the room's open intents once (when the room
 * has any), and rounds never overlap, so a test waits for rounds instead of a fixed time.
 */
import { expect } from 'chai';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { aliceRewarded, startArena } from './support.js';

type ClientEntry = { status: string };

/** A SQLite ledger that counts `openByRoom` calls; every other call passes through. */
function roundCountingLedger(): { ledger: LedgerStore; rounds: () => number } {
  const inner = new SqliteLedger(':memory:');
  let reads = 0;
  const ledger = new Proxy(inner, {
    get(target, name) {
      if (name === 'openByRoom') {
        return (roomId: string) => {
          reads++;
          return target.openByRoom(roomId);
        };
      }
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ledger, rounds: () => reads };
}

describe('room: catching up with the ledger', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('delivers a move it was never told of: the hook fires once, the owner sees it', async () => {
    const { ledger, rounds } = roundCountingLedger();
    game = await startArena({ reconciler: { enabled: false }, ledger }, { catchUpMs: 100 });
    const { room, alice, claimed, reward } = await aliceRewarded(game);
    // Bob's reward stays open, so that every round reads the room's open intents: one count.
    await room.plugins.lightning.reward('bob', { amountMsat: 21_000, description: 'open' });
    // Another process applied the claim; its message to this room was lost.
    const moved = await game.store.transition(reward.id, 'pending', 'completed', {
      note: 'claimed (applied elsewhere)',
    });
    expect(moved?.status).to.equal('completed');
    await eventually(() => claimed.length === 1, 3_000, 'the room hook');
    // Read at each look: the client may not have its rewards map yet when the hook fires.
    const statusOnScreen = () =>
      (
        alice.state as { lightning?: { rewards?: Map<string, ClientEntry> } }
      ).lightning?.rewards?.get(reward.id)?.status;
    await eventually(() => statusOnScreen() === 'completed', 3_000, 'the owner screen');
    // Further rounds find nothing new: the hook stays fired once. The round counted next
    // started after the delivery, and the one after it only once that round had ended.
    const seen = rounds();
    await eventually(() => rounds() >= seen + 2, 3_000, 'a whole catch-up round after it');
    expect(claimed).to.deep.equal([reward.id]);
  });
});
