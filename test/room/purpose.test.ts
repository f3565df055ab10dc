/**
 * Issue 25, finding 3: every entry a client decodes says what it is for (`purpose`) and
 * which match it belongs to (`matchId`, '' when none), so a refund no longer looks like a prize:
 * both are claim codes in `rewards`, told apart by `purpose` rather than by their description.
 */
import { expect } from 'chai';
import { LN_ADDRESS_DOMAIN } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

type Decoded = { purpose?: string; matchId?: string; amount: string; description: string };
type DecodedMap = { get(id: string): Decoded | undefined };

function mapOf(sdkRoom: { state: unknown }, map: string): DecodedMap | undefined {
  return (sdkRoom.state as { lightning?: Record<string, DecodedMap | undefined> }).lightning?.[map];
}

describe('room: purpose and matchId on every entry (issue 25, finding 3)', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  async function pay(feeId: string) {
    const fee = await game.lightning.books.ledger.get(feeId);
    expect(game.emulator.control.payStaticCharge(fee?.remoteId as string).status).to.equal('OK');
  }

  it('a prize, a refund, a fee, a plain reward and an address payment each say what they are', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const lightning = room.plugins.lightning;
    const seen = (sdk: { state: unknown }, map: string, id: string) =>
      eventually(() => mapOf(sdk, map)?.get(id), 5_000, `${map} ${id} on screen`);

    const reward = await lightning.reward(serverClient(room, alice), {
      amountMsat: 20_000,
      description: 'Arena round: refund of nothing, a plain gift',
    });
    expect(await seen(alice, 'rewards', reward.id)).to.include({ purpose: 'reward', matchId: '' });
    const payment = await lightning.payAddress(serverClient(room, alice), {
      lnAddress: `alice@${LN_ADDRESS_DOMAIN}`,
      amountMsat: 15_000,
    });
    expect(await seen(alice, 'payments', payment.id)).to.include({
      purpose: 'payment',
      matchId: '',
    });

    // A won match: the winner's payout; a second match, aborted: the payer's refund.
    const won = await lightning.openMatch({ entryFeeMsat: 30_000 });
    const a = await won.enter(serverClient(room, alice));
    const b = await won.enter(serverClient(room, bob));
    expect(await seen(bob, 'entryFees', b.entry.id)).to.include({
      purpose: 'fee',
      matchId: won.id,
    });
    await pay(a.entry.id);
    await pay(b.entry.id);
    await Promise.all([a.settled, b.settled]);
    const settled = await won.settle({ alice: 1 });
    const payoutId = settled.payouts[0]?.intentId as string;

    const lost = await lightning.openMatch({ entryFeeMsat: 30_000 });
    const c = await lost.enter(serverClient(room, alice));
    await pay(c.entry.id);
    await c.settled;
    const aborted = await lost.abort('not enough players');
    const refundId = aborted.refunds[0]?.intentId as string;

    const payout = await seen(alice, 'rewards', payoutId);
    const refund = await seen(alice, 'rewards', refundId);
    expect(payout).to.include({ purpose: 'payout', matchId: won.id, amount: '60000' });
    expect(refund).to.include({ purpose: 'refund', matchId: lost.id, amount: '30000' });
    // A lobby's list of codes to claim says the same.
    const claims = await game.lightning.books.claims('alice');
    expect(claims.find((c) => c.intentId === payoutId)).to.include({ purpose: 'payout' });
    expect(claims.find((c) => c.intentId === refundId)).to.include({ purpose: 'refund' });
    expect(claims.find((c) => c.intentId === reward.id)).to.include({ purpose: 'reward' });
    // The same synced fields on the server's entries.
    expect(lightning.entriesOf('alice').find((e) => e.id === refundId)).to.include({
      purpose: 'refund',
      matchId: lost.id,
    });
  });
});
