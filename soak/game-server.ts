/**
 * One game-server process of the soak: Colyseus with RedisPresence + RedisDriver, the
 * lightning routes, a RedisLedger, and a room whose players ask for money movements by
 * message, as a game's client would. Started by soak/cluster.ts through test/cluster's
 * GameProcess (`node --import tsx`, an IPC channel), configured by env:
 *
 *   NODE_NAME, PORT, PUBLIC_URL, REDIS_URL, API_URL, API_KEY, RECONCILER (JSON),
 *   SOAK_OPTIONS (JSON: more createLightning options: api, breaker), SOAK_LINGER_MS
 *
 * A player (an SDK client that joined with `{ playerId, email }`) sends `op`
 * `{ seq, kind: 'reward' | 'fee' | 'spend', amount, expiresIn }`; the room calls the plugin's
 * helper for that client and answers `op` `{ seq, ok, id, status }` or `{ seq, ok: false, error }`.
 *
 * Reports to the runner: `ready`; `settled` and `unknown` events of its Lightning core; every
 * settlement its rooms' hooks deliver (`room`), and every message on its rooms' settlement
 * channels (`message`). Commands: `createRoom`, `sync` (answered after
 * every report made before it). It exits when the runner goes away (the IPC channel closes).
 */
import {
  type Client,
  createRouter,
  definePlugins,
  defineRoom,
  defineServer,
  matchMaker,
  Room,
} from '@colyseus/core';
import { RedisDriver } from '@colyseus/redis-driver';
import { RedisPresence } from '@colyseus/redis-presence';
import { schema } from '@colyseus/schema';
import { WebSocketTransport } from '@colyseus/ws-transport';
import type { Intent } from '../src/ledger/intent.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { RedisLedger } from '../src/ledger/redis.js';
import { createLightning, type Lightning } from '../src/lightning.js';
import { LightningState } from '../src/room/state.js';
import { roomChannel, type SettlementMessage } from '../src/server/settlement.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const name = env('NODE_NAME');
const port = Number(env('PORT'));
const redisUrl = env('REDIS_URL');

function report(message: Record<string, unknown>): void {
  if (process.connected) process.send?.({ node: name, ...message });
}

const lightning: Lightning = createLightning({
  apiKey: env('API_KEY'),
  baseUrl: env('API_URL'),
  publicUrl: env('PUBLIC_URL'),
  // LEDGER_URL: the soak's PostgreSQL mode; presence and the driver stay on Redis either way.
  ledger: process.env.LEDGER_URL
    ? new PostgresLedger(process.env.LEDGER_URL)
    : new RedisLedger(redisUrl),
  reconciler: JSON.parse(env('RECONCILER')),
  ...JSON.parse(process.env.SOAK_OPTIONS ?? '{}'),
  logger: {
    info: () => {},
    warn: () => {},
    error: (m) => console.error(`[${name}] ${m}`),
  },
});
await lightning.ready();

const summary = (i: Intent) => ({ id: i.id, kind: i.kind, status: i.status, roomId: i.roomId });

lightning.on('settled', (intent) => report({ event: 'settled', ...summary(intent) }));
lightning.on('unknown', (intent) => report({ event: 'unknown', ...summary(intent) }));

const SoakState = schema({ lightning: LightningState }, 'SoakState');

interface Op {
  seq: number;
  kind: 'reward' | 'fee' | 'spend';
  amount: number;
  expiresIn?: number;
}

function failure(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown };
  return typeof e.code === 'string' ? e.code : String(e.name ?? 'Error');
}

class SoakRoom extends Room {
  override autoDispose = false;
  override state = new SoakState();
  override plugins = definePlugins([
    lightning.plugin({
      lingerMs: Number(process.env.SOAK_LINGER_MS ?? 600_000),
      // A settlement whose presence message a Redis restart lost reaches the room within a second.
      catchUpMs: 1_000,
    }),
  ]);

  override onCreate(): void {
    this.state.lightning = new LightningState();
    this.plugins.lightning.onSettled((_entry, intent) =>
      report({ event: 'room', ...summary(intent), heardBy: this.roomId }),
    );
    this.onMessage('op', (client, op: Op) => void this.#run(client, op));
    // Beside the plugin's own subscription: says whether a settlement's message reached this
    // room's process at all, when a hook is missing.
    void this.presence.subscribe(roomChannel(this.roomId), this.#heard);
  }

  override onDispose(): void {
    void this.presence.unsubscribe(roomChannel(this.roomId), this.#heard);
  }

  #heard = (message: SettlementMessage) =>
    report({ event: 'message', id: message.id, status: message.status, heardBy: this.roomId });

  override onJoin(client: Client, options: { playerId?: string; email?: string } = {}): void {
    client.userData = { playerId: options.playerId, email: options.email };
  }

  async #run(client: Client, op: Op): Promise<void> {
    const helpers = this.plugins.lightning;
    const description = `${op.kind} ${op.seq} on ${name}`;
    try {
      const entry =
        op.kind === 'reward'
          ? await helpers.reward(client, {
              amountMsat: op.amount,
              description,
              expiresIn: op.expiresIn,
            })
          : op.kind === 'fee'
            ? (
                await helpers.chargeEntryFee(client, {
                  amountMsat: op.amount,
                  description,
                  expiresIn: op.expiresIn,
                })
              ).entry
            : await helpers.spendPoints(client, { amount: op.amount, description });
      client.send('op', { seq: op.seq, ok: true, id: entry.id, status: entry.status });
    } catch (err) {
      client.send('op', { seq: op.seq, ok: false, error: failure(err) });
    }
  }
}

const server = defineServer({
  rooms: { soak: defineRoom(SoakRoom) },
  routes: createRouter({ ...lightning.endpoints() }),
  presence: new RedisPresence(redisUrl),
  driver: new RedisDriver(redisUrl),
  publicAddress: `127.0.0.1:${port}`,
  transport: new WebSocketTransport(),
  gracefullyShutdown: false,
});
await server.listen(port, '127.0.0.1');

type Command = { cmd: 'createRoom' } | { cmd: 'sync' };

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case 'createRoom':
      // On this process, not wherever the matchmaker would put it.
      return (await matchMaker.handleCreateRoom('soak', {})).roomId;
    case 'sync':
      // A ledger read on the connection every apply of this process writes on: it answers
      // after each of them, and its answer travels behind every report made before it.
      await lightning.ledger.get('00000000-0000-7000-8000-000000000000');
      return true;
  }
}

process.on('message', (message: { rid: number } & Command) => {
  handle(message).then(
    (result) => process.connected && process.send?.({ rid: message.rid, ok: true, result }),
    (err: Error) =>
      process.connected && process.send?.({ rid: message.rid, ok: false, error: err.message }),
  );
});
// The runner is gone (or dropped us): leave at once, whatever is in flight.
process.on('disconnect', () => process.exit(0));

report({ event: 'ready', processId: matchMaker.processId });
