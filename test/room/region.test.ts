/**
 * The region gate (issue 14): with `regionGate`, a player whose address the service does not
 * serve is refused every money helper with RegionRefusedError, and nothing is recorded or
 * sent; the service is asked once per address, when the player joins.
 *
 * Issue 22: the address is the client's as `clientAddress` reads it (the socket, or the entry
 * the game's own proxies wrote), never a header the client sent; the gate costs nothing for a
 * client the room's own onAuth refuses; and it works with a static onAuth (the README's
 * sign-in) through `lightning.attach(server)`, which sees each socket.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Room } from '@colyseus/core';
import { ColyseusSDK } from '@colyseus/sdk';
import { expect } from 'chai';
import { RegionRefusedError } from '../../src/errors.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

const regionReads = (game: Game) =>
  game.emulator.control.count('GET', /^\/v0\/is-supported-region\//);
const regionReadsOf = (game: Game, ip: string) =>
  game.emulator.control.count('GET', `/v0/is-supported-region/${ip}`);
/** Every create the service received (a charge, a withdrawal request, a payment...). */
const creates = (game: Game) => game.emulator.control.count('POST', /./);

/** This machine's addresses, as a socket from it shows them: in a region the service refuses. */
function refuseThisMachine(game: Game): void {
  for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '::1']) {
    game.emulator.control.setRegion(ip, { country: 'XX', region: 'Nowhere' });
  }
}

/** A player's SDK that sends these headers with its matchmaking request and its websocket. */
function sdkWith(game: Game, headers: Record<string, string>, token?: string): ColyseusSDK {
  const sdk = new ColyseusSDK(`ws://127.0.0.1:${game.port}`, { headers });
  if (token !== undefined) sdk.auth.token = token;
  return sdk;
}

/** The server-side client of `playerId` in a room whose players say who they are. */
function clientOf(room: Room, sessionId: string) {
  return serverClient(room, { sessionId });
}

const FEE = { amountMsat: 21_000, description: 'entry' };

describe('room: the region gate', () => {
  let game: Game;
  afterEach(async () => game?.stop());
  // The SDK warns for each join a room refuses (and those are many here), after it rejected.
  const warn = console.warn;
  before(() => {
    console.warn = (...args: unknown[]) => {
      if (!/closed unexpectedly/.test(String(args[0]))) warn(...args);
    };
  });
  after(() => {
    console.warn = warn;
  });

  it('refuses money helpers to a player the service would refuse: nothing recorded or sent', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '::1']) {
      game.emulator.control.setRegion(ip, { country: 'XX', region: 'Nowhere' });
    }
    const room = await game.colyseus.createRoom<Arena>('gatedArena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const client = serverClient(room, alice);
    const calls = [
      () => room.plugins.lightning.reward(client, { amountMsat: 21_000, description: 'win' }),
      () =>
        room.plugins.lightning.chargeEntryFee(client, { amountMsat: 21_000, description: 'entry' }),
      () => room.plugins.lightning.reward('bob', { amountMsat: 21_000, description: 'not here' }),
    ];
    for (const call of calls) {
      const err = await call().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RegionRefusedError);
      expect(err).to.have.property('code', 'LN_REGION_REFUSED');
    }
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 10_000 });
    expect(await match.enter(client).catch((e: unknown) => e)).to.be.instanceOf(RegionRefusedError);
    expect(creates(game)).to.equal(0);
    expect(await game.lightning.books.ledger.openByPlayer('alice')).to.deep.equal([]);
  });

  it('lets a served player pay and be paid, asking the service once per address', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('gatedArena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    expect(serverClient(room, alice).auth).to.equal(undefined);
    await eventually(() => regionReads(game) >= 1, 3_000, 'the region read at join');
    const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 21_000,
      description: 'win',
    });
    expect(reward.status).to.equal('pending');
    await room.plugins.lightning.chargeEntryFee(serverClient(room, bob), {
      amountMsat: 21_000,
      description: 'entry',
    });
    // Both players joined from this machine's address: one read for both, kept.
    expect(regionReads(game)).to.equal(1);
  });

  it('is off by default: no region is asked', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 21_000,
      description: 'win',
    });
    expect(regionReads(game)).to.equal(0);
  });

  it('a header the client sends does not choose its region (issue 22, finding 2)', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    refuseThisMachine(game); // 8.8.8.8 is served
    const room = await game.colyseus.createRoom<Arena>('gatedArena');
    const forged: Record<string, string>[] = [
      { 'x-forwarded-for': '8.8.8.8' },
      { 'x-real-ip': '8.8.8.8' },
      { 'x-client-ip': '8.8.8.8', 'x-forwarded-for': '8.8.8.8, 127.0.0.1' },
    ];
    for (const [i, headers] of forged.entries()) {
      const sdkRoom = await sdkWith(game, headers).joinById(room.roomId, { playerId: `p${i}` });
      const err = await room.plugins.lightning
        .chargeEntryFee(clientOf(room, sdkRoom.sessionId), FEE)
        .catch((e: unknown) => e);
      expect(err, JSON.stringify(headers)).to.be.instanceOf(RegionRefusedError);
      // With no proxy in front, Colyseus's address came from the header: none the gate trusts.
      expect((err as Error).message).to.match(/no address the gate can trust/);
    }
    expect(regionReadsOf(game, '8.8.8.8')).to.equal(0);
    expect(creates(game)).to.equal(0);
  });

  it('through lightning.attach, the socket is the address, whatever the headers say', async () => {
    game = await startArena({ reconciler: { enabled: false }, routes: 'listener' });
    refuseThisMachine(game);
    const room = await game.colyseus.createRoom<Arena>('gatedArena');
    const sdkRoom = await sdkWith(game, { 'x-real-ip': '8.8.8.8' }).joinById(room.roomId, {
      playerId: 'mallory',
    });
    const err = await room.plugins.lightning
      .chargeEntryFee(clientOf(room, sdkRoom.sessionId), FEE)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RegionRefusedError);
    expect(err).to.include({ country: 'XX', region: 'Nowhere' });
    expect(regionReadsOf(game, '8.8.8.8')).to.equal(0);
    expect(creates(game)).to.equal(0);
  });

  it('behind a proxy, the entry it wrote; X-Real-IP only when it is named (finding 2)', async () => {
    game = await startArena({ reconciler: { enabled: false }, clientAddress: { proxies: 1 } });
    refuseThisMachine(game);
    game.emulator.control.setRegion('8.8.8.8', { country: 'XX', region: 'Nowhere' });
    const room = await game.colyseus.createRoom<Arena>('gatedArena');
    // The proxy overwrote X-Forwarded-For with what it saw (this machine, refused); the client
    // added X-Real-IP.
    const refused = await sdkWith(game, {
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '203.0.113.5',
    }).joinById(room.roomId, { playerId: 'mallory' });
    const err = await room.plugins.lightning
      .chargeEntryFee(clientOf(room, refused.sessionId), FEE)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RegionRefusedError);
    expect(err).to.include({ country: 'XX' });
    // A served client (203.0.113.5, as the proxy appended it) claiming a refused address.
    const served = await sdkWith(game, { 'x-forwarded-for': '8.8.8.8, 203.0.113.5' }).joinById(
      room.roomId,
      { playerId: 'alice' },
    );
    const fee = await room.plugins.lightning.chargeEntryFee(clientOf(room, served.sessionId), FEE);
    expect(fee.entry.status).to.equal('pending');
    expect(regionReadsOf(game, '203.0.113.5')).to.equal(1);
    expect(regionReadsOf(game, '8.8.8.8')).to.equal(0);
    await game.stop();

    // The proxy sets X-Real-IP: named, it is read, and X-Forwarded-For is not.
    game = await startArena({
      reconciler: { enabled: false },
      clientAddress: { proxies: 1, header: 'X-Real-IP' },
    });
    game.emulator.control.setRegion('8.8.8.8', { country: 'XX', region: 'Nowhere' });
    const named = await game.colyseus.createRoom<Arena>('gatedArena');
    const bob = await sdkWith(game, {
      'x-forwarded-for': '8.8.8.8',
      'x-real-ip': '203.0.113.6',
    }).joinById(named.roomId, { playerId: 'bob' });
    const bobFee = await named.plugins.lightning.chargeEntryFee(
      clientOf(named, bob.sessionId),
      FEE,
    );
    expect(bobFee.entry.status).to.equal('pending');
    expect(regionReadsOf(game, '203.0.113.6')).to.equal(1);
  });

  it("asks the service nothing for a client the room's own onAuth refuses (finding 3)", async () => {
    // As a game starts by default, then behind a proxy, where each join has an address of its
    // own that the gate would trust once the room accepted the client.
    for (const settings of [{}, { clientAddress: { proxies: 1 } }]) {
      if (game) await game.stop();
      game = await startArena({ reconciler: { enabled: false }, ...settings });
      const room = await game.colyseus.createRoom('gatedAuthArena');
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          sdkWith(game, { 'x-forwarded-for': `203.0.113.${i + 1}` })
            // Thrown, or answered false.
            .joinById(room.roomId, { token: i % 2 === 0 ? 'bad token' : 'refuse' })
            .then(
              () => 'joined',
              () => 'refused',
            ),
        ),
      );
      expect(new Set(outcomes)).to.deep.equal(new Set(['refused']));
      expect(room.clients.length).to.equal(0);
      expect(regionReads(game), JSON.stringify(settings)).to.equal(0);
    }
    // Behind the proxy, a player the room accepts is asked about, once.
    const room = await game.colyseus.createRoom('gatedAuthArena');
    await sdkWith(game, { 'x-forwarded-for': '203.0.113.99' }).joinById(room.roomId, {
      token: 'token-of-alice',
    });
    await eventually(() => regionReads(game) === 1, 3_000, 'the region read of the joined player');
    expect(regionReadsOf(game, '203.0.113.99')).to.equal(1);
  });

  it('failed joins with a 12 KB X-Real-IP leave nothing behind (finding 3)', async function () {
    this.timeout(60_000);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom('gatedAuthArena');
    const failJoins = async (n: number, length: number) => {
      for (let batch = 0; batch < n; batch += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            sdkWith(game, { 'x-real-ip': `${batch + i}`.padEnd(length, '9') })
              .joinById(room.roomId, { token: 'refuse' })
              .catch(() => undefined),
          ),
        );
      }
    };
    const growth = async (length: number) => {
      const before = heap();
      await failJoins(400, length);
      return heap() - before;
    };
    // Warm up whatever allocates once, then the same joins with short and with 12 KB addresses:
    // what a failed join keeps anyway (the server's, the clients') is in both and cancels out.
    await failJoins(40, 12_000);
    const short = await growth(12);
    const long = await growth(12_000);
    // 400 addresses of 12 KB kept would be 4.8 MB more. A heap that shrank over the short joins
    // (a collection of what came before) is no baseline: then the long joins' growth is alone.
    expect(
      long - Math.max(short, 0),
      `heap grew by ${long} bytes, ${short} with short addresses`,
    ).to.be.below(2 * 1024 * 1024);
    expect(regionReads(game)).to.equal(0);
  });

  it("works with a static onAuth (the README's sign-in) through lightning.attach", async () => {
    game = await startArena({ reconciler: { enabled: false }, routes: 'listener' });
    const room = await game.colyseus.createRoom<Arena>('staticGatedArena');
    // A served player, signed in by the static onAuth: Colyseus never calls an instance onAuth.
    const alice = await sdkWith(game, {}, 'token-of-alice').joinById(room.roomId);
    const aliceClient = clientOf(room, alice.sessionId);
    expect(aliceClient.auth).to.deep.equal({ id: 'alice' });
    const fee = await room.plugins.lightning.chargeEntryFee(aliceClient, FEE);
    expect(fee.entry.status).to.equal('pending');
    expect(
      await room.plugins.lightning.reward(aliceClient, { amountMsat: 21_000, description: 'win' }),
    ).to.have.property('status', 'pending');
  });

  it('a static onAuth through lightning.attach: a refused socket stays refused, whatever it claims', async () => {
    game = await startArena({ reconciler: { enabled: false }, routes: 'listener' });
    refuseThisMachine(game);
    const room = await game.colyseus.createRoom<Arena>('staticGatedArena');
    const mallory = await sdkWith(
      game,
      { 'x-forwarded-for': '8.8.8.8' },
      'token-of-mallory',
    ).joinById(room.roomId);
    const err = await room.plugins.lightning
      .chargeEntryFee(clientOf(room, mallory.sessionId), FEE)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RegionRefusedError);
    expect(err).to.include({ country: 'XX' });
    expect(regionReadsOf(game, '8.8.8.8')).to.equal(0);
    expect(creates(game)).to.equal(0);
  });

  it('with a static onAuth and no attach, says how to give the gate an address', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('staticGatedArena');
    const alice = await sdkWith(game, {}, 'token-of-alice').joinById(room.roomId);
    const err = await room.plugins.lightning
      .chargeEntryFee(clientOf(room, alice.sessionId), FEE)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RegionRefusedError);
    expect((err as Error).message).to.match(/lightning\.attach\(server\)/);
    expect(creates(game)).to.equal(0);
  });
});
