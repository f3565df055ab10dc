/**
 * Issue 13, finding 7 (the shop and the rounds), replayed against the example arena: its shop
 * said "nothing was spent" on an ambiguous answer and then the reconciler completed the same
 * deplete (points 1000 -> 850, no item); a player who joined and left unpaid left the round
 * stuck in `waiting`, and her later payment was credited to nobody.
 */
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import {
  type ArenaUnderTest,
  chargesOf,
  DEPLETE,
  joinArena,
  openFeeOf,
  type Player,
  payFee,
  phaseOf,
  seen,
  serverRoom,
  startArenaUnderTest,
} from './arena-support.js';

type Spends = Map<string, { status: string; description: string }> | undefined;
const spendsOf = (player: Player): Spends =>
  (player.room.state as { lightning?: { pointSpends?: Spends } }).lightning?.pointSpends;
const itemsOf = (viewer: Player, who: Player) => [...(seen(viewer, who)?.items ?? [])];

describe('example arena: the shop and the rounds (issue 13, finding 7)', function () {
  this.timeout(30_000);
  let t: ArenaUnderTest;
  afterEach(async () => t?.arena.stop());

  it('an ambiguous answer is "not confirmed yet"; when the re-sent deplete completes, the item arrives', async () => {
    // One attempt per call: the deplete is applied, then its answer is lost.
    t = await startArenaUnderTest({ lightning: { api: { maxRetries: 0 } } });
    const bob = await joinArena(t, { name: 'Bob' });
    const user = t.emulator.control.users().find((u) => u.reference_id === bob.id);
    if (!user) throw new Error('bob has no widget user');
    t.emulator.control.faults.add({
      method: 'POST',
      path: DEPLETE,
      mode: 'process-then-destroy',
      times: 1,
    });

    bob.room.send('buy', 'golden hat');
    const first = await eventually(() => bob.shop[0], 5_000, 'the shop to answer');
    expect(first.ok).to.equal(null);
    expect(first.message).to.contain('not confirmed yet');
    expect(first.message).to.not.contain('nothing was spent');
    expect(t.emulator.control.points(user.id, 'USDZ')).to.equal(850); // it did go through
    await eventually(
      () => spendsOf(bob)?.get([...(spendsOf(bob)?.keys() ?? [])][0] ?? '')?.status === 'unknown',
      3_000,
      'the spend shown as not confirmed',
    );
    // Not settled: another purchase waits (no second deplete).
    bob.room.send('buy', 'speed boots');
    await eventually(() => bob.shop.length === 2, 3_000, 'the second answer');
    expect(bob.shop[1]?.message).to.match(/^One purchase at a time/);
    expect(t.emulator.control.count('POST', DEPLETE)).to.equal(1);

    // The reconciler re-sends the deplete with the same key once it is due.
    t.clock.advance(3_000);
    await eventually(() => bob.shop.length === 3, 5_000, 'the outcome');
    expect(bob.shop[2]).to.deep.include({ ok: true, message: 'You bought the golden hat.' });
    expect(bob.shop[2]?.order).to.equal(first.order);
    await eventually(() => itemsOf(bob, bob).includes('golden hat'), 3_000, 'the hat, synced');
    const spend = [...(spendsOf(bob)?.values() ?? [])][0];
    expect(spend).to.include({ status: 'completed', description: first.order });
    expect(t.emulator.control.points(user.id, 'USDZ')).to.equal(850);
    expect(t.emulator.control.transfers().filter((x) => x.userId === user.id)).to.have.length(1);
  });

  it('a player who leaves unpaid does not stall the round; paid while away, the fee is hers on return', async () => {
    t = await startArenaUnderTest();
    const alice = await joinArena(t, { name: 'Alice' });
    const bob = await joinArena(t, { name: 'Bob', roomId: alice.room.roomId });
    const carol = await joinArena(t, { name: 'Carol', roomId: alice.room.roomId });
    await payFee(t, alice.id);
    await payFee(t, bob.id);
    await eventually(() => seen(alice, alice)?.paid && seen(alice, bob)?.paid, 3_000, 'both paid');
    expect(phaseOf(alice)).to.equal('waiting'); // Carol is here and paying

    await carol.room.leave();
    await eventually(() => phaseOf(alice) === 'countdown', 3_000, 'the round to start');
    expect(seen(alice, carol)).to.equal(undefined);
    expect(seen(alice, alice)?.playing && seen(alice, bob)?.playing).to.equal(true);

    // Carol pays the fee she left open: it is hers, and not lost.
    const carolsFee = await payFee(t, carol.id);
    await eventually(
      () => t.lines.some((l) => l.includes(carol.id) && l.includes(carolsFee)),
      3_000,
      'the payment said to be hers',
    );
    const back = await joinArena(t, { token: carol.token, roomId: alice.room.roomId });
    await eventually(() => seen(back, back)?.paid, 3_000, 'carol seated as paid');
    expect(seen(back, back)?.playing).to.equal(false); // the running round started without her
    expect(chargesOf(t, carol.id)).to.have.length(1); // and no second fee
    expect(t.arena.owed.entries).to.deep.equal([]);
  });

  it('a fee paid after it expired is reported by latePayment and logged as owed to its player', async () => {
    t = await startArenaUnderTest({ config: { feeExpiresIn: 10 } });
    const dave = await joinArena(t, { name: 'Dave' });
    const fee = await openFeeOf(t, dave.id);
    await dave.room.leave();
    t.clock.advance(12_000); // past the fee's deadline: the reconciler closes the charge
    await eventually(
      async () => (await t.arena.lightning.ledger.get(fee.id))?.status === 'expired',
      5_000,
      'the fee expired',
    );
    // The service takes a payment after our deadline anyway (a wallet that held an invoice, a
    // close that did not reach it): here, the charge opened again and paid.
    const remoteId = fee.remoteId as string;
    const later = new Date(Date.now() + 60_000).toISOString();
    await t.arena.lightning.api.staticCharges.update(remoteId, { expiresAt: later });
    expect(t.emulator.control.payStaticCharge(remoteId).status).to.equal('OK');

    const owed = await eventually(
      () => t.arena.owed.entries.find((o) => o.playerId === dave.id),
      5_000,
      'the late payment owed to dave',
    );
    expect(owed).to.include({ amountMsat: '100000' });
    expect(owed.why).to.contain('after it expired');
    expect(t.lines.find((l) => l.startsWith('[arena] OWED'))).to.contain(dave.id);
    expect(t.arena.owed.entries).to.have.length(1);
  });

  it('a fee paid for a round that never ran is owed when the room closes', async () => {
    t = await startArenaUnderTest();
    const erin = await joinArena(t, { name: 'Erin' });
    const room = serverRoom(erin);
    await payFee(t, erin.id);
    await eventually(() => seen(erin, erin)?.paid, 3_000, 'erin paid');
    await erin.room.leave();
    await eventually(() => t.arena.owed.entries.length > 0, 3_000, 'the room to close');
    expect(room.clients.length).to.equal(0);
    expect(t.arena.owed.entries).to.deep.equal([
      { playerId: erin.id, amountMsat: '100000', why: 'paid an entry fee; the room closed first' },
    ]);
  });
});
