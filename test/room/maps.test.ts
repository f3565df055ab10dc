/**
 * Issue 25, finding 8: every client decodes the four entry maps, empty, from its first state
 * on (they were `undefined` until the client owned an entry of that kind), and still never
 * receives an entry of another player: not its id, its code nor its amount, whether it joined
 * before or after that entry was made.
 */
import { expect } from 'chai';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, sawText, serverClient, startArena } from './support.js';

const MAPS = ['rewards', 'entryFees', 'pointSpends', 'payments'] as const;

type Decoded = { size: number; keys(): Iterable<string> };

function mapsOf(sdkRoom: { state: unknown }): Record<(typeof MAPS)[number], Decoded | undefined> {
  const lightning = (sdkRoom.state as { lightning?: Record<string, Decoded | undefined> })
    .lightning;
  return Object.fromEntries(MAPS.map((m) => [m, lightning?.[m]])) as never;
}

describe('room: the entry maps exist, empty, for every client (issue 25, finding 8)', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('a client with no entry decodes four empty maps, before and after another player is paid', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    await caughtUp(room, alice, bob);
    for (const map of MAPS) {
      expect(mapsOf(bob)[map], `bob's ${map} before any entry`).to.not.equal(undefined);
      expect(mapsOf(bob)[map]?.size).to.equal(0);
    }

    const amountMsat = 61_337_000;
    const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat,
      description: 'alone',
    });
    const fee = await room.plugins.lightning.chargeEntryFee(serverClient(room, alice), {
      amountMsat: 47_111_000,
      description: 'fee',
    });
    // carol joins once alice's entries are in the maps: her first state is a full one.
    const carol = await game.colyseus.connectTo(room, { playerId: 'carol' });
    await caughtUp(room, alice, bob, carol);

    expect([...(mapsOf(alice).rewards?.keys() ?? [])]).to.deep.equal([reward.id]);
    expect([...(mapsOf(alice).entryFees?.keys() ?? [])]).to.deep.equal([fee.entry.id]);
    for (const other of [bob, carol]) {
      for (const map of MAPS) {
        expect(mapsOf(other)[map], `${map} of a player with no entry`).to.not.equal(undefined);
        expect(mapsOf(other)[map]?.size, map).to.equal(0);
      }
      for (const secret of [reward.id, reward.code, fee.entry.id, fee.entry.code]) {
        expect(sawText(other, secret), secret).to.equal(false);
      }
      expect(sawText(other, String(amountMsat))).to.equal(false);
      expect(sawText(other, '47111000')).to.equal(false);
    }
    // The search above would have found them: alice's own stream carried them.
    expect(sawText(alice, reward.code)).to.equal(true);
    expect(sawText(alice, String(amountMsat))).to.equal(true);
  });
});
