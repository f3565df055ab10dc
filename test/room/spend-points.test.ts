import { expect } from 'chai';
import { InsufficientPointsError } from '../../src/api/errors.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, serverClient, startArena } from './support.js';

const DEPLETE = '/api/v1/widget/users/deplete';

type ClientSpend = { status: string; amount: string; unit: string };

function spendsOf(sdkRoom: { state: unknown }) {
  const state = sdkRoom.state as { lightning?: { pointSpends?: Map<string, ClientSpend> } };
  return state.lightning?.pointSpends;
}

describe('room: spend points', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  async function arenaWithAlice(points: number) {
    game = await startArena({ reconciler: { enabled: false } });
    const userId = game.emulator.control.createUser({
      email: 'alice@example.com',
      referenceId: 'alice',
    });
    game.emulator.control.setPoints(userId, 'USDZ', points);
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, {
      playerId: 'alice',
      email: 'alice@example.com',
    });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob', email: 'bob@example.com' });
    return { room, alice, bob, userId };
  }

  it('debits once when the first answer is lost and the call is retried with the same key', async () => {
    const { room, alice, bob, userId } = await arenaWithAlice(500);
    game.emulator.control.faults.add({
      method: 'POST',
      path: DEPLETE,
      mode: 'process-then-destroy',
      times: 1,
    });

    const spent = await room.plugins.lightning.spendPoints(serverClient(room, alice), {
      amount: 300,
    });
    expect(spent).to.include({ status: 'completed', amount: '300', unit: 'USDZ' });
    expect(game.emulator.control.count('POST', DEPLETE)).to.equal(2);
    expect(game.emulator.control.points(userId, 'USDZ')).to.equal(200);
    const transfers = game.emulator.control.transfers();
    expect(transfers).to.have.length(1);
    const intent = await game.lightning.books.ledger.get(spent.id);
    expect(intent?.idempotencyKey).to.be.a('string');
    expect(transfers[0]?.idempotencyKey).to.equal(intent?.idempotencyKey);
    expect(intent?.history[0]?.to).to.equal('creating');
    // The default widgetUser found Alice's user by reference_id.
    expect(transfers[0]?.userId).to.equal(userId);

    await eventually(() => spendsOf(alice)?.get(spent.id)?.status === 'completed', 3000);
    await caughtUp(room, bob);
    expect(spendsOf(bob)?.size ?? 0).to.equal(0);
  });

  it('a short balance is InsufficientPointsError and nothing is debited', async () => {
    const { room, alice, userId } = await arenaWithAlice(100);
    const client = serverClient(room, alice);
    const short = await room.plugins.lightning
      .spendPoints(client, { amount: 300 })
      .catch((e: unknown) => e);
    expect(short).to.be.instanceOf(InsufficientPointsError);
    expect(game.emulator.control.points(userId, 'USDZ')).to.equal(100);
    expect(game.emulator.control.transfers()).to.have.length(0);
    // The owner sees the refusal, as a failed entry.
    const failed = await eventually(
      () => [...(spendsOf(alice)?.values() ?? [])].find((s) => s.status === 'failed'),
      3000,
      'failed entry',
    );
    expect(failed.amount).to.equal('300');

    // The widget user is created once, then remembered.
    await room.plugins.lightning.spendPoints(client, { amount: 50 });
    expect(game.emulator.control.points(userId, 'USDZ')).to.equal(50);
    expect(game.emulator.control.count('POST', '/api/v1/widget/users')).to.equal(1);
  });
});
