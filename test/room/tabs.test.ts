/**
 * Issue 34 in a room: `credit` and `withdraw` on the plugin, the player's tab balance synced to
 * that player only (after a credit, a withdrawal, and a withdrawal that expired back into the
 * tab), the time-in-room rule measured by the plugin's clock, and the automatic withdrawals.
 * A real Colyseus server and SDK clients, the emulator on a manual clock.
 */
import { metrics } from '@opentelemetry/api';
import { MeterProvider, type MetricReader } from '@opentelemetry/sdk-metrics';
import { expect } from 'chai';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import {
  InsufficientFundsError,
  InvalidArgumentError,
  TimeInRoomError,
  WithdrawalTooSmallError,
} from '../../src/errors.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import { createLightning } from '../../src/lightning.js';
import type { LightningPluginOptions } from '../../src/room/options.js';
import type { LightningOptions } from '../../src/server/options.js';
import { rejection } from '../ledger/contract/support.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { quietLogger } from '../support/game.js';
import { PullReader, pointsOf } from '../support/metrics.js';
import { type Arena, caughtUp, sawText, serverClient, startArena } from './support.js';

type SyncedMap<V> = Map<string, V> & { size: number };
interface Synced {
  lightning?: {
    tabs?: SyncedMap<{ balance: string }>;
    rewards?: SyncedMap<{ status: string; code: string; amount: string }>;
  };
}

/** The balance a client holds in its synced state (its only tab), or null with none. */
function balanceOf(sdkRoom: { state: unknown }): string | null {
  const tabs = (sdkRoom.state as Synced).lightning?.tabs;
  if (!tabs || tabs.size === 0) return null;
  return [...tabs.values()][0]?.balance ?? null;
}

function rewardsOf(sdkRoom: { state: unknown }) {
  return (sdkRoom.state as Synced).lightning?.rewards;
}

async function refusals(reader: MetricReader, reason: string): Promise<number> {
  return (await pointsOf(reader, 'lightning.refused'))
    .filter((p) => p.attributes.reason === reason)
    .reduce((sum, p) => sum + p.value, 0);
}

describe('room: player tabs (issue 34)', function () {
  this.timeout(20_000);
  let game: Game | undefined;
  const owned: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await game?.stop();
    game = undefined;
    for (const thing of owned.splice(0)) await thing.close();
    metrics.disable();
  });

  async function start(
    plugin: LightningPluginOptions = {},
    reader?: MetricReader,
    options: Pick<LightningOptions, 'approvals'> = {},
  ) {
    const clock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock });
    owned.push(emulator);
    const meterProvider = reader ? new MeterProvider({ readers: [reader] }) : undefined;
    game = await startArena(
      {
        emulator,
        clock,
        reconciler: { enabled: false },
        ...(meterProvider ? { meterProvider } : {}),
        ...options,
      },
      plugin,
    );
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    return { game, clock, room, alice, bob, lightning: room.plugins.lightning };
  }

  it('syncs the balance to its player only: after credits, a withdrawal, and its expiry', async () => {
    const { game, clock, room, alice, bob, lightning } = await start({
      tabs: { minTimeInRoomMs: 0 },
    });
    const client = serverClient(room, alice);
    const tab = await lightning.credit(client, { amountMsat: 12_345, description: 'round won' });
    expect(tab.balance).to.equal('12345');
    await lightning.credit(client, { amountMsat: 10_000, description: 'survived', key: 'r2' });
    // The same key again is the same credit.
    await lightning.credit(client, { amountMsat: 10_000, description: 'survived', key: 'r2' });
    await eventually(() => balanceOf(alice) === '22345', 3000, 'the balance on her screen');

    const reward = await lightning.withdraw(client, { expiresIn: 60 });
    expect(reward).to.include({ status: 'pending', amount: '22345', playerId: 'alice' });
    await eventually(() => balanceOf(alice) === '0', 3000, 'the tab emptied');
    const code = await eventually(() => rewardsOf(alice)?.get(reward.id)?.code, 3000, 'her code');
    expect(code).to.equal(reward.code);
    expect(game.emulator.control.withdrawalRequests()).to.have.length(1);

    clock.advance(61_000);
    await eventually(
      async () => (await game.lightning.books.refresh(reward.id))?.status === 'expired',
      5000,
      'the withdrawal expired',
    );
    await eventually(() => balanceOf(alice) === '22345', 3000, 'the amount back in her tab');

    // Bob's client holds no tab, no code, and never received the balance or the code.
    await caughtUp(room, bob, alice);
    expect(balanceOf(bob)).to.equal(null);
    expect((bob.state as Synced).lightning?.tabs?.size ?? 0).to.equal(0);
    expect(rewardsOf(bob)?.size ?? 0).to.equal(0);
    expect(sawText(bob, '22345')).to.equal(false);
    expect(sawText(bob, '12345')).to.equal(false);
    expect(sawText(bob, reward.code)).to.equal(false);
    // Alice's stream did carry them: the search above would have found them.
    expect(sawText(alice, '22345')).to.equal(true);
    expect(sawText(alice, reward.code)).to.equal(true);
  });

  it('shows a held withdrawal an operator rejected back in the tab, to its player', async () => {
    const { game, room, alice, bob, lightning } = await start(
      { tabs: { minTimeInRoomMs: 0 } },
      undefined,
      { approvals: { aboveMsat: 10_000 } },
    );
    const client = serverClient(room, alice);
    await lightning.credit(client, { amountMsat: 20_000, description: 'won' });
    const held = await lightning.withdraw(client);
    expect(held.status).to.equal('held');
    await eventually(() => balanceOf(alice) === '0', 3000, 'the tab taken by the held withdrawal');
    expect(game.emulator.control.withdrawalRequests()).to.have.length(0);
    await game.lightning.operator.reject(held.id, 'ops', 'looks like farming');
    await eventually(() => balanceOf(alice) === '20000', 3000, 'the amount back in her tab');
    await caughtUp(room, alice, bob);
    expect(balanceOf(bob)).to.equal(null);
    expect(sawText(bob, '20000')).to.equal(false);
  });

  it("shows a credit another process of the game made, through the room's presence channel", async () => {
    const ledger = new SqliteLedger(':memory:');
    owned.push(ledger);
    game = await startArena({ reconciler: { enabled: false }, ledger }, { catchUpMs: 0 });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    // A second server on the same ledger and presence, as another process of the game.
    const other = createLightning({
      apiKey: game.emulator.apiKey,
      baseUrl: game.emulator.url,
      publicUrl: `http://127.0.0.1:${game.port}`,
      logger: quietLogger,
      ledger,
      reconciler: { enabled: false },
    });
    owned.unshift(other);
    await other.tabs.credit({
      playerId: 'alice',
      roomId: room.roomId,
      amountMsat: 4_321,
      description: 'elsewhere',
    });
    await eventually(() => balanceOf(alice) === '4321', 3000, 'the credit on her screen');
    await caughtUp(room, bob);
    expect(balanceOf(bob)).to.equal(null);
    expect(sawText(bob, '4321')).to.equal(false);
  });

  it('withdraws part of the tab, refuses more than it holds and an empty one', async () => {
    const { room, alice, lightning } = await start({ tabs: { minTimeInRoomMs: 0 } });
    const client = serverClient(room, alice);
    await rejection(lightning.withdraw(client), WithdrawalTooSmallError);
    await lightning.credit(client, { amountMsat: 30_000, description: 'won' });
    const part = await lightning.withdraw(client, { amountMsat: 20_000 });
    expect(part.amount).to.equal('20000');
    await eventually(() => balanceOf(alice) === '10000', 3000, 'the rest in the tab');
    await rejection(lightning.withdraw(client, { amountMsat: 20_000 }), InsufficientFundsError);
    expect(
      (
        await rejection(
          lightning.credit(client, { amountMsat: -1, description: 'x' } as never),
          InvalidArgumentError,
        )
      ).message,
    ).to.match(/amountMsat/);
    await rejection(lightning.withdraw(client, { amount: 5 } as never), InvalidArgumentError);
    expect(balanceOf(alice)).to.equal('10000');
  });

  it("refuses a credit before the player's time in the room, by the server's clock, and counts it", async () => {
    const reader = new PullReader();
    const { game, clock, room, alice, lightning } = await start({}, reader);
    const client = serverClient(room, alice);
    const err = await rejection(
      lightning.credit(client, { amountMsat: 10_000, description: 'too soon' }),
      TimeInRoomError,
    );
    expect(err).to.include({ code: 'LN_TIME_IN_ROOM', playerId: 'alice', minMs: 30_000 });
    expect(await refusals(reader, 'LN_TIME_IN_ROOM')).to.equal(1);
    expect(await game.lightning.tabs.balance('alice')).to.equal(0);

    clock.advance(29_000);
    await rejection(
      lightning.credit(client, { amountMsat: 10_000, description: 'still too soon' }),
      TimeInRoomError,
    );
    clock.advance(1_000);
    const tab = await lightning.credit(client, { amountMsat: 10_000, description: 'in time' });
    expect(tab.balance).to.equal('10000');
    expect(await refusals(reader, 'LN_TIME_IN_ROOM')).to.equal(2);

    // A client that joins later waits its own time: what counts is its join, not the room's.
    const carol = await game.colyseus.connectTo(room, { playerId: 'carol' });
    await rejection(
      lightning.credit(serverClient(room, carol), { amountMsat: 10_000, description: 'new' }),
      TimeInRoomError,
    );
  });

  it('withdraws the whole tab on its own once it reaches the line', async () => {
    const { room, alice, lightning } = await start({
      tabs: { minTimeInRoomMs: 0, withdrawAtMsat: 25_000 },
    });
    const client = serverClient(room, alice);
    await lightning.credit(client, { amountMsat: 20_000, description: 'one' });
    expect(rewardsOf(alice)?.size ?? 0).to.equal(0);
    await lightning.credit(client, { amountMsat: 10_000, description: 'two' });
    const [entry] = await eventually(
      () => {
        const all = [...(rewardsOf(alice)?.values() ?? [])];
        return all.length > 0 && all.every((e) => e.code !== '') ? all : undefined;
      },
      3000,
      'the automatic withdrawal',
    );
    expect(entry?.amount).to.equal('30000');
    await eventually(() => balanceOf(alice) === '0', 3000, 'the tab emptied');
  });

  it('withdraws the whole tab on its own when the player leaves', async () => {
    const { game, room, alice, lightning } = await start({
      tabs: { minTimeInRoomMs: 0, withdrawOnLeave: true },
    });
    await lightning.credit(serverClient(room, alice), { amountMsat: 15_000, description: 'won' });
    expect(game.emulator.control.withdrawalRequests()).to.have.length(0);
    await alice.leave();
    await eventually(
      () => game.emulator.control.withdrawalRequests().length === 1,
      3000,
      'the withdrawal on leave',
    );
    await eventually(
      async () => (await game.lightning.tabs.balance('alice')) === 0,
      3000,
      'the tab emptied',
    );
  });

  it('leaves the tab alone when the player leaves, by default, and shows it when they are back', async () => {
    const { game, room, alice, bob, lightning } = await start({ tabs: { minTimeInRoomMs: 0 } });
    await lightning.credit(serverClient(room, alice), { amountMsat: 15_000, description: 'won' });
    await alice.leave();
    await eventually(() => !room.clients.some((c) => c.sessionId === alice.sessionId), 3000);
    await caughtUp(room, bob);
    expect(game.emulator.control.withdrawalRequests()).to.have.length(0);
    expect(await game.lightning.tabs.balance('alice')).to.equal(15_000);
    // Back in the room (a new session), her tab shows again, to her only.
    const again = await game.colyseus.connectTo(room, { playerId: 'alice' });
    await eventually(() => balanceOf(again) === '15000', 3000, 'her tab on rejoin');
    await caughtUp(room, bob);
    expect(balanceOf(bob)).to.equal(null);
  });
});
