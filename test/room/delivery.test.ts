/**
 * How a move reaches the room: by one route per move. A move this process applies is handed to
 * the room in hand (no ledger read, no presence message); a move another process applies comes
 * as a presence message and is read back. The ledger here counts its reads of each intent, as
 * an operator's metrics would; the room's writes of its entries are counted at RoomEntries.
 */
import { matchMaker } from '@colyseus/core';
import { expect } from 'chai';
import type { Intent, IntentPatch } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { RoomEntries } from '../../src/room/entries.js';
import { roomChannel } from '../../src/server/settlement.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger } from '../support/game.js';
import { type Arena, aliceRewarded, caughtUp, serverClient, startArena } from './support.js';

type ClientEntry = { status: string };

/** A SQLite ledger that counts `get(id)` per id; every other call passes through. */
function countingLedger(): { ledger: LedgerStore; reads: Map<string, number> } {
  const inner = new SqliteLedger(':memory:');
  const reads = new Map<string, number>();
  const ledger = new Proxy(inner, {
    get(target, name) {
      if (name === 'get') {
        return (id: string) => {
          reads.set(id, (reads.get(id) ?? 0) + 1);
          return target.get(id);
        };
      }
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ledger, reads };
}

/**
 * A SQLite ledger on which "another process" ends every intent first: just before this process
 * makes its first move of an intent (out of `creating`), `elsewhere` moves it straight in the
 * store, and no message of it reaches any room (as when a Redis restart drops them). This
 * process's move then loses, and reads what won.
 */
function outrunLedger(
  elsewhere: (store: LedgerStore, id: string, patch: IntentPatch | undefined) => Promise<unknown>,
): LedgerStore {
  const inner = new SqliteLedger(':memory:');
  return new Proxy(inner, {
    get(target, name) {
      if (name === 'transition') {
        return async (...args: Parameters<LedgerStore['transition']>) => {
          const [id, from, , options] = args;
          if (from === 'creating') await elsewhere(target, id, options?.patch);
          return target.transition(...args);
        };
      }
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Records each reading RoomEntries.upsert is given (`id status`) until `restore()`. */
function countUpserts(): { seen: string[]; restore(): void } {
  const upsert = RoomEntries.prototype.upsert;
  const seen: string[] = [];
  RoomEntries.prototype.upsert = function (this: RoomEntries, intent: Intent, ...rest) {
    seen.push(`${intent.id} ${intent.status}`);
    return upsert.call(this, intent, ...rest);
  } as typeof upsert;
  const restore = () => {
    RoomEntries.prototype.upsert = upsert;
  };
  return { seen, restore };
}

function statusSeenBy(sdkRoom: { state: unknown }, id: string): string | undefined {
  const state = sdkRoom.state as { lightning?: { rewards?: Map<string, ClientEntry> } };
  return state.lightning?.rewards?.get(id)?.status;
}

describe('room: how a move reaches the room', () => {
  let game: Game | undefined;
  let other: Lightning | undefined;
  afterEach(async () => {
    await other?.close();
    other = undefined;
    await game?.stop();
    game = undefined;
  });

  it('one reward’s create and its claim reach the room once each: one write per move, no echo on presence', async () => {
    game = await startArena({ reconciler: { enabled: false } }, { catchUpMs: 0 });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const messages: unknown[] = [];
    await matchMaker.presence.subscribe(roomChannel(room.roomId), (m: unknown) => messages.push(m));
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const claimed: string[] = [];
    room.plugins.lightning.onRewardClaimed((entry) => claimed.push(entry.id));
    const upserts = countUpserts();
    try {
      const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
        amountMsat: 21_000,
        description: 'win',
      });
      expect(upserts.seen).to.deep.equal([`${reward.id} pending`]);
      const [remote] = game.emulator.control.withdrawalRequests();
      game.emulator.control.claimWithdrawal(remote?.id as string);
      await eventually(() => claimed.length === 1, 3_000, 'the room hook');
      await eventually(() => statusSeenBy(alice, reward.id) === 'completed', 3_000, 'the screen');
      // Whatever else was on its way has arrived: a message published with the claim's move
      // travels through LocalPresence at once, and the callback was answered after the move.
      await game.emulator.control.callbacks.idle();
      await caughtUp(room, alice);
      expect(upserts.seen).to.deep.equal([`${reward.id} pending`, `${reward.id} completed`]);
      expect(messages, 'the room is in this process: nothing to publish').to.deep.equal([]);
      expect(claimed).to.deep.equal([reward.id]);
    } finally {
      upserts.restore();
    }
  });

  it('a move applied in the room’s own process is handed over: no ledger read, the hook fires once', async () => {
    const { ledger, reads } = countingLedger();
    game = await startArena({ reconciler: { enabled: false }, ledger }, { catchUpMs: 0 });
    const { alice, claimed, reward } = await aliceRewarded(game);
    const [remote] = game.emulator.control.withdrawalRequests();
    game.emulator.control.claimWithdrawal(remote?.id as string);
    await eventually(() => claimed.length === 1, 3_000, 'the room hook');
    await eventually(() => statusSeenBy(alice, reward.id) === 'completed', 3_000, 'the screen');
    // Both moves (creating -> pending, pending -> completed) reached the entry in hand.
    expect(reads.get(reward.id) ?? 0).to.equal(0);
    expect(claimed).to.deep.equal([reward.id]);
  });

  it('a move applied by another process comes as a message and is read back from the ledger', async () => {
    const { ledger, reads } = countingLedger();
    game = await startArena({ reconciler: { enabled: false }, ledger }, { catchUpMs: 0 });
    // The callback never reaches this server: the other process settles the reward.
    game.emulator.control.callbacks.set({ drop: true });
    const { alice, claimed, reward } = await aliceRewarded(game);
    // A second server on the same ledger and presence (LocalPresence: this process's), as
    // another process of the game would be with RedisPresence.
    other = createLightning({
      apiKey: game.emulator.apiKey,
      baseUrl: game.emulator.url,
      publicUrl: `http://127.0.0.1:${game.port}`,
      logger: quietLogger,
      ledger,
      reconciler: { enabled: false },
    });
    const [remote] = game.emulator.control.withdrawalRequests();
    game.emulator.control.claimWithdrawal(remote?.id as string);
    const before = reads.get(reward.id) ?? 0;
    expect((await other.books.refresh(reward.id))?.status).to.equal('completed');
    await eventually(() => claimed.length === 1, 3_000, 'the room hook');
    await eventually(() => statusSeenBy(alice, reward.id) === 'completed', 3_000, 'the screen');
    // refresh read it once; the room read it once more, on the other process's message.
    expect((reads.get(reward.id) ?? 0) - before).to.equal(2);
    expect(claimed).to.deep.equal([reward.id]);
  });

  it('an intent another process ended before the helper answered reaches the hook once', async () => {
    const ledger = outrunLedger(async (store, id, patch) => {
      await store.transition(id, 'creating', 'pending', { patch });
      await store.transition(id, 'pending', 'completed', { note: 'claimed (elsewhere)' });
    });
    game = await startArena({ reconciler: { enabled: false }, ledger }, { catchUpMs: 0 });
    const { alice, claimed, reward } = await aliceRewarded(game);
    expect(reward.status).to.equal('completed');
    await eventually(() => claimed.length === 1, 3_000, 'the room hook');
    await eventually(() => statusSeenBy(alice, reward.id) === 'completed', 3_000, 'the screen');
    expect(claimed).to.deep.equal([reward.id]);
  });

  it('an intent another process failed while the helper’s create was refused reaches the hook once', async () => {
    const ledger = outrunLedger((store, id) =>
      store.transition(id, 'creating', 'failed', { note: 'refused (elsewhere)' }),
    );
    game = await startArena({ reconciler: { enabled: false }, ledger }, { catchUpMs: 0 });
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 400,
    });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const ended: [string, string][] = [];
    room.plugins.lightning.onSettled((entry) => ended.push([entry.id, entry.status]));
    const refused = await room.plugins.lightning
      .reward(serverClient(room, alice), { amountMsat: 21_000, description: 'win' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).to.be.instanceOf(Error);
    await eventually(() => ended.length === 1, 3_000, 'the room hook');
    const [id, status] = ended[0] as [string, string];
    expect(status).to.equal('failed');
    await eventually(() => statusSeenBy(alice, id) === 'failed', 3_000, 'the screen');
    expect(ended).to.have.length(1);
  });
});
