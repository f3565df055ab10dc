/**
 * The room's payAddress with real SDK clients: the payment's entry reaches its owner only, and
 * moves from `pending` to `completed` when the service's callback is verified.
 */
import { expect } from 'chai';
import { LN_ADDRESS_DOMAIN, ManualClock, startEmulator } from '../../src/emulator/index.js';
import type { Entry } from '../../src/room/state.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, sawText, serverClient, startArena } from './support.js';

type ClientPayment = { status: string; lnAddress: string; amount: string; playerId: string };

function paymentsOf(sdkRoom: { state: unknown }) {
  const state = sdkRoom.state as {
    lightning?: { payments?: Map<string, ClientPayment> & { size: number } };
  };
  return state.lightning?.payments;
}

describe('room: payAddress', () => {
  let game: Game;
  let closeEmulator: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await game?.stop();
    await closeEmulator?.();
  });

  it('only the payee sees the payment, pending then completed, and the room hears it once', async () => {
    const emuClock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock: emuClock, paymentDelayMs: 1_000 });
    closeEmulator = () => emulator.close();
    game = await startArena({ emulator, reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const winner = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const other = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const ended: Entry[] = [];
    room.plugins.lightning.onSettled((entry) => ended.push(entry));

    const lnAddress = `alice.winner@${LN_ADDRESS_DOMAIN}`;
    const amountMsat = 61_437_000;
    const entry = await room.plugins.lightning.payAddress(serverClient(room, winner), {
      lnAddress,
      amountMsat,
      comment: 'Round winner',
    });
    expect(entry).to.include({
      kind: 'payment',
      status: 'pending',
      playerId: 'alice',
      lnAddress,
      amount: String(amountMsat),
      description: 'Round winner',
    });
    const mine = await eventually(() => paymentsOf(winner)?.get(entry.id), 3000, 'payee entry');
    expect(mine).to.include({ status: 'pending', lnAddress, amount: String(amountMsat) });

    emuClock.advance(1_000);
    await eventually(() => paymentsOf(winner)?.get(entry.id)?.status === 'completed', 3000);
    await game.emulator.control.callbacks.idle();
    expect(ended.map((e) => [e.id, e.status])).to.deep.equal([[entry.id, 'completed']]);
    expect(game.emulator.control.lnAddressPayments(lnAddress)).to.have.length(1);

    await caughtUp(room, other);
    expect(sawText(other, lnAddress)).to.equal(false);
    expect(sawText(other, entry.id)).to.equal(false);
    expect(sawText(other, String(amountMsat))).to.equal(false);
    expect(paymentsOf(other)?.size ?? 0).to.equal(0);
    expect(sawText(winner, lnAddress)).to.equal(true);
  });
});
