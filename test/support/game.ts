/**
 * Boots a real Colyseus server (through @colyseus/testing) on a free loopback port, with the
 * lightning routes mounted (as router endpoints, or with `routes: 'listener'` as the
 * `node:http` listener of `lightning.attach(server)` and no lightning endpoint), and a Lightning core wired to a real emulator. Tests get the
 * pieces and one `stop()` that closes them in order.
 */
import { createRouter, defineRoom, type Room } from '@colyseus/core';
import { boot, type ColyseusTestServer } from '@colyseus/testing';
import type { ConfigOptions } from '@colyseus/tools';
import { WebSocketTransport } from '@colyseus/ws-transport';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import type { ConsoleOptions } from '../../src/operator/console.js';
import type { LightningOptions } from '../../src/server/options.js';
import { holdPort } from './ports.js';

export interface Game {
  colyseus: ColyseusTestServer;
  lightning: Lightning;
  /**
   * The writable store under `lightning.books.ledger` (which only reads), for a test that plays
   * another process writing to the same ledger. Throws for a game started on a file path.
   */
  readonly store: LedgerStore;
  emulator: Emulator;
  port: number;
  /** With `routes: 'listener'`: takes `lightning.attach(server)` away again. */
  detachRoutes?: () => void;
  /** The URL the service POSTs an intent's status updates to. */
  callbackUrl(token: string): string;
  stop(): Promise<void>;
}

export const quietLogger = { info: () => {}, warn: () => {}, error: () => {} };

export async function startGame(
  rooms: Record<string, new (...args: never[]) => Room>,
  options: Partial<LightningOptions> & {
    emulator?: Emulator;
    routes?: 'router' | 'listener';
    /** Mounts the operator's console too, as router endpoints or as its listener. */
    console?: ConsoleOptions & { via: 'router' | 'listener' };
    /** Given the HTTP server before it listens, as a game's own `attach` calls would be. */
    onServer?: (server: import('node:http').Server) => void;
  } = {},
): Promise<Game> {
  const held = await holdPort();
  const { port } = held;
  const emulator = options.emulator ?? (await startEmulator({ logger: quietLogger }));
  const {
    emulator: _unused,
    routes = 'router',
    console: mounted,
    onServer,
    ...lightningOptions
  } = options;
  const { via, ...operator } = mounted ?? { via: undefined };
  // The default in-memory ledger is made here, so that a test can write to it as another
  // process would; a store a test passes is its own to close.
  const made = options.ledger === undefined ? new SqliteLedger({ path: ':memory:' }) : undefined;
  const given = made ?? options.ledger;
  const lightning = await createLightning({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    publicUrl: `http://127.0.0.1:${port}`,
    logger: quietLogger,
    api: { retry: { baseDelayMs: 1, maxDelayMs: 5 } },
    ...lightningOptions,
    ledger: given,
  } as LightningOptions);
  await lightning.ready();
  const defined = Object.fromEntries(
    Object.entries(rooms).map(([name, klass]) => [name, defineRoom(klass as never)]),
  );
  let detachRoutes: (() => void) | undefined;
  const config = {
    rooms: defined,
    routes: createRouter({
      ...(routes === 'router' ? lightning.endpoints() : {}),
      ...(via === 'router' ? lightning.operator.console.endpoints(operator as ConsoleOptions) : {}),
    }),
    // The listener goes on the HTTP server before it listens, as a game would attach it.
    ...(routes === 'listener' || via === 'listener' || onServer
      ? {
          initializeTransport: (o: { server: import('node:http').Server }) => {
            if (routes === 'listener') detachRoutes = lightning.attach(o.server);
            if (via === 'listener')
              lightning.operator.console.attach(o.server, operator as ConsoleOptions);
            onServer?.(o.server);
            return new WebSocketTransport(o);
          },
        }
      : {}),
  };
  await held.release();
  const colyseus: ColyseusTestServer = await boot(config as unknown as ConfigOptions, port);

  return {
    colyseus,
    lightning,
    get store(): LedgerStore {
      if (typeof given !== 'object') throw new Error(`the game's ledger is the file ${given}`);
      return given;
    },
    emulator,
    port,
    ...(detachRoutes ? { detachRoutes } : {}),
    callbackUrl: (token) => `http://127.0.0.1:${port}/lightning/callbacks/${token}`,
    async stop() {
      await colyseus.cleanup().catch(() => {});
      await colyseus.shutdown().catch(() => {});
      await lightning.close();
      await made?.close();
      if (!options.emulator) await emulator.close();
    },
  };
}
