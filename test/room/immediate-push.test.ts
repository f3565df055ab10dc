/**
 * The plugin's immediatePush option (on by default): a settlement's patch leaves at once, not at
 * the room's next patch tick, and the settlements of one event-loop turn share one patch. The
 * room's patch rate is set to a minute, so within a test only the immediate push (or an
 * explicit broadcastPatch) can carry a change to the client; the tests count broadcastPatch.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Room } from '@colyseus/core';
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, sentSoFar, serverClient, startArena } from './support.js';

function statusOf(sdkRoom: { state: unknown }, id: string): string | undefined {
  const state = sdkRoom.state as {
    lightning?: { rewards?: Map<string, { status: string }> };
  };
  return state.lightning?.rewards?.get(id)?.status;
}

/** Counts the room's patches from now on. */
function countPatches(room: Room): () => number {
  let patches = 0;
  const original = room.broadcastPatch.bind(room);
  room.broadcastPatch = () => {
    patches++;
    return original();
  };
  return () => patches;
}

async function aliceInSlowRoom(game: Game) {
  const room = await game.colyseus.createRoom<Arena>('arena');
  const winner = await game.colyseus.connectTo(room, { playerId: 'alice' });
  room.setPatchRate(60_000);
  return { room, winner };
}

async function rewardOnScreen(game: Game) {
  const { room, winner } = await aliceInSlowRoom(game);
  const entry = await room.plugins.lightning.reward(serverClient(room, winner), {
    amountMsat: 21_000,
    description: 'Round winner',
  });
  room.broadcastPatch();
  await eventually(() => statusOf(winner, entry.id) === 'pending', 3000, 'pending on screen');
  const [remote] = game.emulator.control.withdrawalRequests();
  return { room, winner, entry, remoteId: remote?.id as string };
}

describe('room: immediatePush', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('by default, a settlement reaches the owner long before the next patch tick', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const { room, winner, entry, remoteId } = await rewardOnScreen(game);
    const patches = countPatches(room);

    expect(game.emulator.control.claimWithdrawal(remoteId)).to.include({ status: 'OK' });
    await eventually(() => statusOf(winner, entry.id) === 'completed', 3000, 'completed on screen');
    // One patch carried it (the tick is a minute away).
    expect(patches()).to.equal(1);
  });

  it('a burst of settlements in one turn of the event loop costs one patch', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const { room, winner } = await aliceInSlowRoom(game);
    // Five rewards whose create answer is lost (500): each is `unknown` on alice's screen.
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 500,
    });
    const client = serverClient(room, winner);
    for (let i = 0; i < 5; i++) {
      await room.plugins.lightning
        .reward(client, { amountMsat: 21_000, description: `prize ${i}` })
        .catch(() => {});
    }
    const ids = room.plugins.lightning.entriesOf('alice').map((e) => e.id);
    expect(ids).to.have.length(5);
    await nextTurn(); // the patch that showed them has gone
    await sentSoFar(room, winner);
    expect(ids.map((id) => statusOf(winner, id))).to.deep.equal(Array(5).fill('unknown'));
    const patches = countPatches(room);

    // An operator ends all five at once: five moves, each handed to the room, in one turn.
    await Promise.all(
      ids.map((id) => game.lightning.operator.resolve(id, 'failed', 'never created')),
    );
    await nextTurn();
    expect(patches()).to.equal(1);
    await sentSoFar(room, winner);
    expect(ids.map((id) => statusOf(winner, id))).to.deep.equal(Array(5).fill('failed'));
  });

  it('with immediatePush: false, the settlement waits for the next patch', async () => {
    game = await startArena({ reconciler: { enabled: false } }, { immediatePush: false });
    const { room, winner, entry, remoteId } = await rewardOnScreen(game);

    expect(game.emulator.control.claimWithdrawal(remoteId)).to.include({ status: 'OK' });
    await eventually(
      () => room.plugins.lightning.entriesOf('alice')[0]?.status === 'completed',
      3000,
      'completed in the room state',
    );
    // Any push scheduled for that turn would be sent by now; then everything sent so far
    // has arrived, and the client still shows pending.
    await nextTurn();
    await sentSoFar(room, winner);
    expect(statusOf(winner, entry.id)).to.equal('pending');

    room.broadcastPatch();
    await eventually(
      () => statusOf(winner, entry.id) === 'completed',
      3000,
      'completed after a patch',
    );
  });
});
