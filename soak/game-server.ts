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
import { type Client, definePlugins, Room } from '@colyseus/core';
import { schema } from '@colyseus/schema';
import type { Intent } from '../src/ledger/intent.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { RedisLedger } from '../src/ledger/redis.js';
import { createLightning, type Lightning } from '../src/lightning.js';
import { LightningState } from '../src/room/state.js';
import {
  env,
  nodeName as name,
  redisUrl,
  report,
  reportRoom,
  serveGameProcess,
} from '../test/cluster/fixtures/game-process.js';

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

  #unreport: (() => void) | undefined;

  override onCreate(): void {
    this.state.lightning = new LightningState();
    this.#unreport = reportRoom(this, this.plugins.lightning, summary);
    this.onMessage('op', (client, op: Op) => void this.#run(client, op));
  }

  override onDispose(): void {
    this.#unreport?.();
  }

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

await serveGameProcess('soak', SoakRoom, lightning);
