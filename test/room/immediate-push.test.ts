/**
 * The plugin's immediatePush option: a settlement's patch leaves at once, not at the room's
 * next patch tick. The room's patch rate is set to a minute, so within a test only the
 * immediate push (or an explicit broadcastPatch) can carry a change to the client.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
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

async function rewardOnScreen(game: Game) {
  const room = await game.colyseus.createRoom<Arena>('arena');
  const winner = await game.colyseus.connectTo(room, { playerId: 'alice' });
  room.setPatchRate(60_000);
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

  it('with the option, a settlement reaches the owner long before the next patch tick', async () => {
    game = await startArena({ reconciler: { enabled: false } }, { immediatePush: true });
    const { room, winner, entry, remoteId } = await rewardOnScreen(game);
    let patches = 0;
    const original = room.broadcastPatch.bind(room);
    room.broadcastPatch = () => {
      patches++;
      return original();
    };

    expect(game.emulator.control.claimWithdrawal(remoteId)).to.include({ status: 'OK' });
    await eventually(() => statusOf(winner, entry.id) === 'completed', 3000, 'completed on screen');
    // One patch carried it (the tick is a minute away).
    expect(patches).to.equal(1);
  });

  it('without it, the settlement waits for the next patch', async () => {
    game = await startArena({ reconciler: { enabled: false } });
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
