/**
 * The duel's server: the client built (build.ts), one room kind (`duel`, room.ts), the routes
 * the payment service calls back on, and the page served in front. Without LIGHTNING_API_KEY it
 * runs on the built-in emulator: no key, no network, no real money.
 */
import type { Server as HttpServer } from 'node:http';
import { createRouter, defineRoom, defineServer } from '@colyseus/core';
import { WebSocketTransport } from '@colyseus/ws-transport';
import { createLightning, type LightningOptions } from 'colyseus-lightning';
import { buildClient } from './build.js';
import { DuelLogin } from './login.js';
import { type DuelRoomOptions, duelRoom } from './room.js';
import { serveFiles } from './serve.js';

export interface DuelOptions {
  /** Default PORT, else 2568. */
  port?: number;
  /** Called just before the server listens: a test that held its port free releases it here. */
  beforeListen?: () => Promise<void>;
  /** Over the duel's own choices (tests: a quiet logger). */
  lightning?: Partial<LightningOptions>;
  /** The room's numbers (entry fee, rake, time to pay). */
  room?: Omit<DuelRoomOptions, 'lightning' | 'log' | 'login'>;
  /** Where the duel's own lines go. Default console.log. */
  log?: (line: string) => void;
}

export async function startDuel(options: DuelOptions = {}) {
  const port = options.port ?? Number(process.env.PORT ?? 2568);
  const files = await buildClient();
  const apiKey = process.env.LIGHTNING_API_KEY;
  const lightning = createLightning({
    ...(apiKey
      ? { apiKey, publicUrl: process.env.PUBLIC_URL }
      : { publicUrl: `http://127.0.0.1:${port}` }),
    fiat: { currency: 'USD' }, // the page shows dollars next to sats
    ...options.lightning,
  } as LightningOptions);
  await lightning.ready();
  const login = new DuelLogin();
  const room = duelRoom({
    ...options.room,
    lightning,
    login,
    ...(options.log ? { log: options.log } : {}),
  });
  const server = defineServer({
    transport: new WebSocketTransport(),
    greet: false,
    rooms: { duel: defineRoom(room) },
    // The service's callbacks reach the rooms through these; players sign in at /login.
    routes: createRouter({ ...lightning.endpoints(), ...login.endpoints() }),
  });
  server.onShutdown(() => lightning.close());
  await options.beforeListen?.();
  await server.listen(port);
  serveFiles(server.transport.server as HttpServer, files);
  return {
    server,
    lightning,
    url: `http://localhost:${port}/`,
    /** The client bundle's size in bytes. */
    bundleBytes: files.get('/client.js')?.body.length ?? 0,
    async stop() {
      await server.gracefullyShutdown(false);
      await lightning.close(); // idempotent
    },
  };
}
