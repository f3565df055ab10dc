/**
 * `npm start`: the arena on the embedded emulator (no key, no network), or on the real
 * service when LIGHTNING_API_KEY and PUBLIC_URL are set.
 */
import type { Server as HttpServer } from 'node:http';
import { createRouter, defineRoom, defineServer } from '@colyseus/core';
import { WebSocketTransport } from '@colyseus/ws-transport';
import { createLightning } from 'colyseus-lightning';
import { arenaConfig } from './config.js';
import { arenaRoom } from './room.js';
import { clientFiles, serveInFront } from './serve.js';

export async function startArena(port = Number(process.env.PORT ?? 2567)) {
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
  });
  await lightning.ready();
  const emulator = lightning.emulator;
  // On the emulator every new player gets points to try the shop with.
  const grantPoints = emulator
    ? async (_playerId: string, userId: string) => {
        if (emulator.control.points(userId, 'USDZ') === 0) {
          emulator.control.setPoints(userId, 'USDZ', arenaConfig.startingPoints);
        }
      }
    : undefined;
  const server = defineServer({
    transport: new WebSocketTransport(),
    greet: false,
    rooms: { arena: defineRoom(arenaRoom(lightning, grantPoints)) },
    routes: createRouter({ ...lightning.endpoints() }),
  });
  const files = await clientFiles();
  await server.listen(port);
  serveInFront(server.transport.server as HttpServer, files);
  lightning.on('settled', (intent) =>
    console.log(
      `[arena] ${intent.kind} ${intent.status}: ${intent.amount} ${intent.unit} (${intent.playerId})`,
    ),
  );
  return {
    server,
    lightning,
    url: `http://localhost:${port}/`,
    async stop() {
      await server.gracefullyShutdown(false);
      await lightning.close();
    },
  };
}
