/**
 * Issue 13, finding 5, replayed against the example arena (examples/arena) with real SDK
 * clients: 1,000 `again` messages made 1,000 static charges, intents and entries; 1,000 `buy`
 * messages made 1,000 depletes; a player could pay two open fees and be counted once. Now a
 * flooding client is dropped, a player has one fee per round (the match returns it, paid or
 * not), and one purchase in flight.
 */
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import {
  type ArenaUnderTest,
  chargesOf,
  DEPLETE,
  joinArena,
  noCreateInFlight,
  openFeeOf,
  type Player,
  payFee,
  seen,
  serverRoom,
  startArenaUnderTest,
} from './arena-support.js';

/** CloseCode.WITH_ERROR: the server closed the connection, the client did not leave. */
const DROPPED = 4002;

describe('example arena: limits per player (issue 13, finding 5)', function () {
  this.timeout(30_000);
  let t: ArenaUnderTest;
  beforeEach(async () => {
    t = await startArenaUnderTest();
  });
  afterEach(async () => t?.arena.stop());

  const droppedAfter = (player: Player, message: string, payload?: unknown) => {
    const closed = new Promise<number>((resolve) => player.room.onLeave(resolve));
    for (let i = 0; i < 1000; i++) player.room.send(message, payload);
    return closed;
  };
  const pointsOf = (player: Player) => {
    const user = t.emulator.control.users().find((u) => u.reference_id === player.id);
    return user ? t.emulator.control.points(user.id, 'USDZ') : undefined;
  };

  it('1,000 `again` messages drop the client and make one fee: one charge, one intent, one entry', async () => {
    const alice = await joinArena(t, { name: 'Alice' });
    const bob = await joinArena(t, { name: 'Bob', roomId: alice.room.roomId });
    const room = serverRoom(alice);
    const matchId = await eventually(() => room.state.matchId, 3_000, 'the round to open');
    // Both fees made first: a fee whose create is in flight when the round is called off is
    // closed by the reconciler later, and this test does not move the clock.
    await Promise.all([openFeeOf(t, alice.id), openFeeOf(t, bob.id)]);
    expect(await droppedAfter(bob, 'again')).to.equal(DROPPED);
    await eventually(() => noCreateInFlight(t, bob.id), 5_000, 'no create in flight');
    // Dropped before GO: the round is called off.
    await eventually(
      () => room.state.lightning.matches.get(matchId)?.status === 'aborted',
      5_000,
      'the round called off',
    );
    expect(chargesOf(t, bob.id)).to.have.length(1);
    const group = await t.arena.lightning.books.ledger.byGroup(matchId);
    expect(group.filter((i) => i.kind === 'entryFee' && i.playerId === bob.id)).to.have.length(1);
    const entries = [...room.state.lightning.entryFees.values()];
    expect(entries.filter((e) => e.playerId === bob.id)).to.have.length(1);
  });

  it('`again` answers the fee of the round, the same one before and after it is paid', async () => {
    const alice = await joinArena(t, { name: 'Alice' });
    await joinArena(t, { name: 'Bob', roomId: alice.room.roomId });
    const fee = await openFeeOf(t, alice.id);
    for (let i = 0; i < 5; i++) alice.room.send('again');
    await eventually(() => alice.fees.length === 5, 3_000, 'five answers');
    expect(alice.fees).to.deep.equal(Array(5).fill({ paid: false, fee: fee.id }));

    await payFee(t, alice.id);
    await eventually(() => seen(alice, alice)?.paid, 3_000, 'alice paid, on her screen');
    for (let i = 0; i < 5; i++) alice.room.send('again');
    await eventually(() => alice.fees.length === 10, 3_000, 'five more answers');
    expect(alice.fees.slice(5)).to.deep.equal(Array(5).fill({ paid: true, fee: fee.id }));
    // One charge at the service: there never was a second fee to pay.
    expect(chargesOf(t, alice.id)).to.have.length(1);
  });

  it('1,000 `buy` messages drop the client and make one deplete; a burst within the limit, one too', async () => {
    const bob = await joinArena(t, { name: 'Bob' });
    expect(pointsOf(bob)).to.equal(1_000);
    expect(await droppedAfter(bob, 'buy', 'golden hat')).to.equal(DROPPED);
    await eventually(
      async () => (await noCreateInFlight(t, bob.id)) && t.emulator.control.count('POST', DEPLETE),
      5_000,
      "bob's deplete answered",
    );
    expect(t.emulator.control.count('POST', DEPLETE)).to.equal(1);
    expect(pointsOf(bob)).to.equal(850);

    const carol = await joinArena(t, { name: 'Carol' });
    for (let i = 0; i < 3; i++) carol.room.send('buy', 'golden hat');
    carol.room.send('buy', '__proto__');
    await eventually(() => carol.shop.length === 4, 3_000, 'four answers');
    const said = carol.shop.map((m) => m.message);
    expect(said.filter((m) => m.startsWith('One purchase at a time'))).to.have.length(2);
    expect(said.filter((m) => m === 'No such item.')).to.have.length(1);
    expect(said.filter((m) => m === 'You bought the golden hat.')).to.have.length(1);
    expect(t.emulator.control.count('POST', DEPLETE)).to.equal(2);
    expect(pointsOf(carol)).to.equal(850);
    await eventually(() => [...(seen(carol, carol)?.items ?? [])].length === 1, 3_000, 'the hat');
  });
});
