/**
 * The game server both measured children run (game-server.ts for scale and screen, loop-server.ts
 * for loop): Colyseus through @colyseus/testing on a free loopback port, the lightning routes on
 * its router, the reconciler off, and `rooms` rooms with the room plugin and a LightningState,
 * patching every `patchRate` ms. Players say who they are on join (`{playerId}`). Counts the
 * settlements the server applied and the ones the rooms' hooks heard.
 */
import { type Client, createRouter, definePlugins, defineRoom, Room } from '@colyseus/core';
import { schema } from '@colyseus/schema';
import { boot } from '@colyseus/testing';
import type { ConfigOptions } from '@colyseus/tools';
import type { LedgerStore } from '../../src/ledger/index.js';
import { createLightning } from '../../src/lightning.js';
import { LightningState } from '../../src/room/state.js';
import { freePort } from '../../test/support/ports.js';

export interface BenchGameOptions {
  emulatorUrl: string;
  apiKey: string;
  ledger: string | LedgerStore;
  rooms: number;
  patchRate: number;
  immediatePush?: boolean;
  /** The plugin's `catchUpMs` (its default when unset). */
  catchUpMs?: number;
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const BenchState = schema({ lightning: LightningState }, 'BenchState');

/** One JSON line on stdout: what the parent reads (bench/support/child.ts). */
export const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

export async function startBenchGame(o: BenchGameOptions) {
  const port = await freePort();
  const lightning = createLightning({
    apiKey: o.apiKey,
    baseUrl: o.emulatorUrl,
    publicUrl: `http://127.0.0.1:${port}`,
    ledger: o.ledger,
    logger: quiet,
    reconciler: { enabled: false },
    // benchScale holds 12,500 open rewards at once, past the game's default cap of 10,000: it
    // measures what they cost, not the cap.
    limits: { maxOpenPerGame: 1_000_000 },
  });
  await lightning.ready();
  const counts = { settled: 0, heard: 0 };
  lightning.on('settled', () => {
    counts.settled++;
  });

  class BenchRoom extends Room<{ state: InstanceType<typeof BenchState> }> {
    override state = new BenchState();
    override plugins = definePlugins([
      lightning.plugin({ immediatePush: o.immediatePush, catchUpMs: o.catchUpMs }),
    ]);
    override autoDispose = false;
    override onCreate() {
      this.setPatchRate(o.patchRate);
      this.plugins.lightning.onSettled(() => {
        counts.heard++;
      });
    }
    override onJoin(client: Client, options: { playerId?: string } = {}) {
      client.userData = { playerId: options.playerId };
    }
  }
  const config = {
    rooms: { bench: defineRoom(BenchRoom) },
    routes: createRouter({ ...lightning.endpoints() }),
  };
  const colyseus = await boot(config as unknown as ConfigOptions, port);
  const rooms: BenchRoom[] = [];
  for (let i = 0; i < o.rooms; i++) rooms.push(await colyseus.createRoom<BenchRoom>('bench', {}));

  /** A reward through a room's plugin, and what a callback for it needs. */
  const reward = async (room: BenchRoom, playerId: string, description: string) => {
    const entry = await room.plugins.lightning.reward(playerId, {
      amountMsat: 10_000,
      description,
    });
    const intent = await lightning.books.ledger.get(entry.id);
    return {
      id: entry.id,
      token: intent?.callbackToken as string,
      remoteId: intent?.remoteId as string,
    };
  };

  return {
    lightning,
    colyseus,
    rooms,
    counts,
    reward,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await colyseus.shutdown().catch(() => {});
      await lightning.close();
    },
  };
}
