import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import {
  type Arena,
  type AuthArena,
  caughtUp,
  type GuardedArena,
  serverClient,
  startArena,
} from './support.js';

type ClientEntry = { status: string; code: string };

function rewardsOf(sdkRoom: { state: unknown }) {
  const state = sdkRoom.state as { lightning?: { rewards?: Map<string, ClientEntry> } };
  return state.lightning?.rewards;
}

describe('room: players who leave and come back', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('a player with a stable id (join options -> userData) sees their open entries again', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 40_000,
      description: 'Prize',
    });
    // A reward for a player who is not in the room yet waits for them.
    const forCarol = await room.plugins.lightning.reward('carol', {
      amountMsat: 30_000,
      description: 'Welcome back',
    });
    await eventually(() => rewardsOf(alice)?.get(reward.id), 3000, 'first view');
    await alice.leave();
    await eventually(() => room.clients.length === 1, 3000, 'alice gone');

    const again = await game.colyseus.connectTo(room, { playerId: 'alice' });
    expect(again.sessionId).to.not.equal(alice.sessionId);
    const seen = await eventually(() => rewardsOf(again)?.get(reward.id), 3000, 'entry again');
    expect(seen).to.include({ status: 'pending', code: reward.code });
    expect(rewardsOf(again)?.has(forCarol.id)).to.equal(false);

    const carol = await game.colyseus.connectTo(room, { playerId: 'carol' });
    await eventually(() => rewardsOf(carol)?.get(forCarol.id), 3000, "carol's entry");
    expect(rewardsOf(carol)?.has(reward.id)).to.equal(false);

    // Updates reach the new session.
    const [remote] = game.emulator.control
      .withdrawalRequests()
      .filter((w) => w.internalId === 'alice');
    game.emulator.control.claimWithdrawal(remote?.id as string);
    await eventually(() => rewardsOf(again)?.get(reward.id)?.status === 'completed', 3000);
    await caughtUp(room, bob);
    expect(rewardsOf(bob)?.size ?? 0).to.equal(0);
  });

  it('a player identified by onAuth (client.auth.id) sees their open entries again', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<AuthArena>('authArena');
    const first = await game.colyseus.connectTo(room, { token: 'token-of-dana' });
    const fee = await room.plugins.lightning.chargeEntryFee(serverClient(room, first), {
      amountMsat: 5_000,
      description: 'Entry',
    });
    expect(fee.entry.playerId).to.equal('dana');
    await first.leave();
    await eventually(() => room.clients.length === 0, 3000, 'dana gone');
    const second = await game.colyseus.connectTo(room, { token: 'token-of-dana' });
    const state = second.state as { lightning?: { entryFees?: Map<string, ClientEntry> } };
    await eventually(() => state.lightning?.entryFees?.get(fee.entry.id), 3000, 'fee again');
  });

  it('without a stable id (the session id) a rejoining player gets a new identity', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const first = await game.colyseus.connectTo(room);
    const reward = await room.plugins.lightning.reward(serverClient(room, first), {
      amountMsat: 20_000,
      description: 'x',
    });
    expect(reward.playerId).to.equal(first.sessionId);
    await first.leave();
    const second = await game.colyseus.connectTo(room);
    await caughtUp(room, second);
    expect(rewardsOf(second)?.size ?? 0).to.equal(0);
  });

  it('settlements reach a room that defines onUncaughtException (plugin onCreate skipped)', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<GuardedArena>('guardedArena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 20_000,
      description: 'x',
    });
    game.emulator.control.claimWithdrawal(game.emulator.control.withdrawalRequests()[0]?.id ?? '');
    await eventually(() => rewardsOf(alice)?.get(reward.id)?.status === 'completed', 3000);
    expect(room.errors).to.deep.equal([]);
  });
});
