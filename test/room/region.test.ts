/**
 * The region gate (issue 14): with `regionGate`, a player whose address the service does not
 * serve is refused every money helper with RegionRefusedError, and nothing is recorded or
 * sent; the service is asked once per address, when the player joins.
 */
import { expect } from 'chai';
import { RegionRefusedError } from '../../src/errors.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

const regionReads = (game: Game) =>
  game.emulator.control.count('GET', /^\/v0\/is-supported-region\//);

describe('room: the region gate', () => {
  let game: Game;
  afterEach(async () => game?.stop());

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
    expect(game.emulator.control.count('POST', '*')).to.equal(0);
    expect(await game.lightning.ledger.openByPlayer('alice')).to.deep.equal([]);
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
});
