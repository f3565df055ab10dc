/**
 * `npm start`: the arena on the embedded emulator (no key, no network), or on the real
 * service when LIGHTNING_API_KEY and PUBLIC_URL are set. Players sign in at `POST /auth`
 * (auth.ts); set ARENA_AUTH_SECRET so that their tokens outlive a restart. One address makes at
 * most `signInsPerMinute` new guests (sign-in-limit.ts). The operator's console is at
 * `/lightning/console`, opened through `/operator?key=` (operator.ts).
 */
import type { Server as HttpServer } from 'node:http';
import { createRouter, defineRoom, defineServer } from '@colyseus/core';
import { WebSocketTransport } from '@colyseus/ws-transport';
import { createLightning, type LightningOptions } from 'colyseus-lightning';
import { ArenaAuth, type ArenaAuthOptions } from './auth.js';
import { systemClock } from './clock.js';
import { type ArenaConfig, arenaConfig } from './config.js';
import { devWalletEndpoints } from './dev-wallet.js';
import { MoneyHistory } from './history.js';
import { logMoney } from './money-log.js';
import {
  mountConsole,
  type OperatorKey,
  operatorEndpoints,
  operatorKey,
  PlayerNames,
} from './operator.js';
import { arenaRoom } from './room.js';
import { clientFiles, serveInFront } from './serve.js';
import { GuestLimit, limitSignIns } from './sign-in-limit.js';

export interface ArenaOptions {
  /** Default PORT, else 2567. */
  port?: number;
  /** Called just before the server listens: a test that held its port free releases it here. */
  beforeListen?: () => Promise<void>;
  /** Overrides of the arena's numbers (config.ts). */
  config?: Partial<ArenaConfig>;
  /** Passed to createLightning over the arena's own choices (tests: a clock, a quiet logger). */
  lightning?: Partial<LightningOptions>;
  auth?: ArenaAuthOptions;
  /** Where the arena's own lines go (rounds, refunds, settlements). Default console.log. */
  log?: (line: string) => void;
  /** Bundle and serve the browser client. Default true. */
  serveClient?: boolean;
  /** The console's key (operator.ts); default ARENA_OPERATOR_KEY, else one for this run. */
  operator?: OperatorKey;
}

export async function startArena(options: ArenaOptions = {}) {
  const port = options.port ?? Number(process.env.PORT ?? 2567);
  const config = { ...arenaConfig, ...options.config };
  const log = options.log ?? console.log;
  const apiKey = process.env.LIGHTNING_API_KEY;
  const lightning = createLightning({
    ...(apiKey
      ? { apiKey, publicUrl: process.env.PUBLIC_URL }
      : { publicUrl: `http://127.0.0.1:${port}` }),
    ...(process.env.LIGHTNING_WEBHOOK_SECRET
      ? { webhookSecret: process.env.LIGHTNING_WEBHOOK_SECRET }
      : {}),
    // On the emulator, look for lost callbacks often so the demo never waits.
    ...(apiKey ? {} : { reconciler: { firstCheckMs: 2_000, maxBackoffMs: 10_000 } }),
    ...options.lightning,
  } as LightningOptions);
  await lightning.ready();
  const emulator = lightning.service.emulator;
  // On the emulator every new player gets points to try the shop with.
  const grantPoints = emulator
    ? async (_playerId: string, userId: string) => {
        if (emulator.control.points(userId, 'USDZ') === 0) {
          emulator.control.setPoints(userId, 'USDZ', config.startingPoints);
        }
      }
    : undefined;
  const auth = new ArenaAuth(options.auth);
  const operator = options.operator ?? operatorKey();
  const names = new PlayerNames();
  // The dev wallet page names players too (the emulator's, where a person reads).
  emulator?.control.namePlayers((playerId) => names.get(playerId));
  const clock = options.lightning?.clock ?? systemClock;
  const history = new MoneyHistory(lightning);
  logMoney(lightning, log);
  const room = arenaRoom({
    lightning,
    auth,
    history,
    names,
    clock,
    config,
    log,
    ...(grantPoints ? { onPlayerJoined: grantPoints } : {}),
  });
  const server = defineServer({
    transport: new WebSocketTransport(),
    greet: false,
    rooms: { arena: defineRoom(room) },
    routes: createRouter({
      ...lightning.endpoints(),
      ...auth.endpoints(),
      // The page's dev wallet buttons, through this server (the emulator answers no page).
      ...(emulator ? devWalletEndpoints(emulator, auth) : {}),
      ...(operator ? operatorEndpoints(operator.key) : {}),
    }),
  });
  // Colyseus shuts down on SIGINT/SIGTERM by itself; the ledger closes as its last step.
  server.onShutdown(() => lightning.close());
  const files = options.serveClient === false ? undefined : await clientFiles();
  await options.beforeListen?.();
  await server.listen(port);
  const http = server.transport.server as HttpServer;
  if (files) serveInFront(http, files);
  if (operator) mountConsole(lightning, http, operator.key, names);
  // New guests per address, by the address the library reads (its `clientAddress` option:
  // behind a proxy, pass `lightning: { clientAddress: { proxies: 1 } }`).
  limitSignIns(http, {
    auth,
    limit: new GuestLimit({ perWindow: config.signInsPerMinute, now: () => clock.now() }),
    addressOf: (req) => lightning.service.clientAddress(req),
  });
  return {
    server,
    lightning,
    auth,
    history,
    url: `http://localhost:${port}/`,
    /** Opens the console (its key in the link); undefined without one. */
    consoleUrl: operator
      ? `http://localhost:${port}/operator?key=${encodeURIComponent(operator.key)}`
      : undefined,
    operator,
    async stop() {
      await server.gracefullyShutdown(false);
      await lightning.close(); // idempotent; a second shutdown in one process skips onShutdown
    },
  };
}

export type Arena = Awaited<ReturnType<typeof startArena>>;
