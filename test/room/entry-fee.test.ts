import { expect } from 'chai';
import { request } from 'undici';
import { decodeLnurl, ManualClock } from '../../src/emulator/index.js';
import type { Entry, EntryFee } from '../../src/room/state.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, sawText, serverClient, startArena } from './support.js';

/** Reconciler settings that make an expiry show up within a fraction of a second. */
const eager = { intervalMs: 25, firstCheckMs: 50, maxBackoffMs: 200, checksPerSecond: 1000 };

type ClientFee = { status: string; code: string; amount: string };

function feesOf(sdkRoom: { state: unknown }) {
  const state = sdkRoom.state as { lightning?: { entryFees?: Map<string, ClientFee> } };
  return state.lightning?.entryFees;
}

async function getJson(url: string): Promise<Record<string, unknown>> {
  const res = await request(url);
  expect(res.statusCode).to.equal(200);
  return (await res.body.json()) as Record<string, unknown>;
}

/** What a player's wallet does with an LNURL-pay code: two GETs, then it pays the invoice. */
async function payLikeAWallet(game: Game, code: string, amountMsat: number) {
  const params = await getJson(decodeLnurl(code));
  expect(params).to.include({
    tag: 'payRequest',
    minSendable: amountMsat,
    maxSendable: amountMsat,
  });
  const callback = new URL(params.callback as string);
  callback.searchParams.set('amount', String(amountMsat));
  const invoice = await getJson(callback.toString());
  expect(invoice.pr).to.be.a('string');
  return game.emulator.control.payInvoice(invoice.pr as string);
}

describe('room: entry fee', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('paid through LNURL-pay over HTTP: the payer sees completed and settled resolves', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const payer = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const other = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const paid: Entry[] = [];
    room.plugins.lightning.onEntryFeePaid((fee) => paid.push(fee));

    const { entry, settled } = await room.plugins.lightning.chargeEntryFee(
      serverClient(room, payer),
      { amountMsat: 21_000, description: 'Arena entry', successMessage: 'Good luck!' },
    );
    expect(entry).to.include({ status: 'pending', playerId: 'alice', kind: 'entryFee' });
    const charge = game.emulator.control.staticCharges()[0];
    expect(charge).to.include({ minAmount: '21000', maxAmount: '21000', allowedSlots: 1 });

    const seen = await eventually(() => feesOf(payer)?.get(entry.id), 3000, 'fee on client');
    expect(seen.status).to.equal('pending');
    expect(seen.code).to.equal(entry.code);

    expect(await payLikeAWallet(game, seen.code, 21_000)).to.include({ status: 'OK' });
    const done: EntryFee = await settled;
    expect(done.status).to.equal('completed');
    await eventually(() => feesOf(payer)?.get(entry.id)?.status === 'completed', 3000);
    expect(paid.map((fee) => fee.id)).to.deep.equal([entry.id]);

    await caughtUp(room, other);
    expect(sawText(other, entry.code)).to.equal(false);
    expect(sawText(other, entry.id)).to.equal(false);
    expect(feesOf(other)?.size ?? 0).to.equal(0);
  });

  it('an unpaid fee expires: settled resolves expired, the player sees it, then it leaves', async () => {
    const clock = new ManualClock(Date.now());
    game = await startArena({ reconciler: eager, clock }, { lingerMs: 300 });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const payer = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const expired: Entry[] = [];
    const settledHook: Entry[] = [];
    room.plugins.lightning.onExpired((e) => expired.push(e));
    room.plugins.lightning.onSettled((e) => settledHook.push(e));

    const { entry, settled } = await room.plugins.lightning.chargeEntryFee(
      serverClient(room, payer),
      { amountMsat: 21_000, description: 'Arena entry', expiresIn: 30 },
    );
    await eventually(() => feesOf(payer)?.get(entry.id)?.status === 'pending', 3000);
    clock.advance(31_000);
    expect((await settled).status).to.equal('expired');
    await eventually(() => feesOf(payer)?.get(entry.id)?.status === 'expired', 3000, 'expired');
    expect(expired.map((e) => e.id)).to.deep.equal([entry.id]);
    expect(settledHook.map((e) => e.id)).to.deep.equal([entry.id]);
    const [charge] = game.emulator.control.staticCharges();
    expect(game.emulator.control.payStaticCharge(charge?.id as string, 21_000).status).to.equal(
      'ERROR',
    );

    // After the linger the entry leaves the state, for its owner too.
    await eventually(() => !feesOf(payer)?.has(entry.id), 3000, 'entry removed');
    expect(room.state.lightning.entryFees.size).to.equal(0);
  });
});
