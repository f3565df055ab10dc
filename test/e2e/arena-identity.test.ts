/**
 * Issue 13, finding 7 (identity), replayed against the example arena: it took the player id
 * from the join options, so a second client that joined with Alice's id saw her reward code.
 * Now a player is who the token of `POST /auth` says, and the join options name nobody.
 */
import type { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ArenaAuth } from '../../examples/arena/auth.js';
import { seatOf } from '../../examples/arena/room.js';
import { caughtUp, sawText } from '../room/support.js';
import { eventually } from '../support/eventually.js';
import {
  type ArenaUnderTest,
  joinArena,
  payFee,
  phaseOf,
  sdk,
  seen,
  serverRoom,
  signIn,
  startArenaUnderTest,
} from './arena-support.js';

type Rewards = Map<string, { code: string; playerId: string }> | undefined;
const rewardsOf = (player: { room: { state: unknown } }): Rewards =>
  (player.room.state as { lightning?: { rewards?: Rewards } }).lightning?.rewards;

describe('example arena: who a player is (issue 13, finding 7)', function () {
  this.timeout(30_000);
  let t: ArenaUnderTest;
  beforeEach(async () => {
    t = await startArenaUnderTest();
  });
  afterEach(async () => t?.arena.stop());

  it("a client that names Alice's id in its join options is itself, and never sees her prize", async () => {
    const alice = await joinArena(t, { name: 'Alice' });
    const bob = await joinArena(t, { name: 'Bob', roomId: alice.room.roomId });
    await payFee(t, alice.id);
    await payFee(t, bob.id);
    await eventually(() => phaseOf(bob) === 'countdown', 5_000, 'the round to start');
    bob.room.send('click'); // too early: Bob is out, Alice wins
    const prize = await eventually(
      () => [...(rewardsOf(alice)?.values() ?? [])][0],
      5_000,
      "alice's prize",
    );
    expect(prize.code).to.match(/^lnurl1/i);

    const mallory = await joinArena(t, {
      name: 'Alice',
      roomId: alice.room.roomId,
      extra: { playerId: alice.id, id: alice.id, seat: seatOf(alice.id) },
    });
    expect(mallory.id).to.not.equal(alice.id);
    const room = serverRoom(alice);
    await caughtUp(room as unknown as Room, mallory.room);
    expect(sawText(mallory.room, prize.code)).to.equal(false);
    expect(rewardsOf(mallory)?.size ?? 0).to.equal(0);
    // Her own seat, not Alice's; Alice's seat still shows Alice.
    expect(room.state.players.get(seatOf(mallory.id))?.name).to.equal('Alice');
    expect(seen(mallory, alice)?.paid).to.equal(false);
    expect(room.state.players.get(seatOf(alice.id))?.name).to.equal('Alice');
    // No player id of anyone reaches another client.
    expect(sawText(mallory.room, alice.id)).to.equal(false);
    expect(sawText(alice.room, bob.id)).to.equal(false);
  });

  it('joining without a valid token is refused: none, forged, tampered, unsigned or expired', async () => {
    const alice = await joinArena(t, { name: 'Alice' });
    const [head, payload] = alice.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const other = new ArenaAuth({ secret: 'x'.repeat(32) });
    const past = new ArenaAuth({ secret: t.authSecret, now: () => Date.now() - 8 * 86_400_000 });
    expect(() => t.arena.auth.verify(past.issue(alice.id))).to.throw(/expired/);
    const bad = {
      none: undefined,
      'another server': other.issue(alice.id),
      tampered: `${head}.${encode({ ...claims, sub: 'mallory-0000' })}.${alice.token.split('.')[2]}`,
      unsigned: `${encode({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      garbage: 'not-a-token',
      expired: past.issue(alice.id),
    };
    for (const [what, token] of Object.entries(bad)) {
      const outcome = await sdk(t, token)
        .joinById(alice.room.roomId, { playerId: alice.id })
        .then(() => 'joined')
        .catch(() => 'refused');
      expect(outcome, what).to.equal('refused');
    }
    expect(serverRoom(alice).clients.length).to.equal(1);
  });

  it('`POST /auth` renews a valid token for the same player and makes a new guest otherwise', async () => {
    const first = await signIn(t);
    const renewed = await signIn(t, first);
    expect(t.arena.auth.verify(renewed)).to.equal(t.arena.auth.verify(first));
    const stranger = await signIn(t, new ArenaAuth({ secret: 'y'.repeat(32) }).issue('alice-000'));
    expect(t.arena.auth.verify(stranger)).to.not.equal('alice-000');
  });
});
