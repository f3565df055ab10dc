/**
 * The measured game server of the scale benchmark: Colyseus (through @colyseus/testing, on a
 * free loopback port) with the lightning routes, an in-memory ledger, the reconciler off, and
 * `--rooms` rooms that each listen on their settlement channel. Prints `{url}` once ready,
 * then answers JSON commands on stdin, one line each:
 *
 *   {"cmd":"create","n":N,"concurrency":C}  N rewards, round-robin over the rooms
 *   {"cmd":"memory"}                         heap and RSS after two full GCs (--expose-gc)
 *   {"cmd":"stats"}                          settlements so far, messages the rooms heard
 *   {"cmd":"profile","on":true|false}        CPU profile; `false` answers its top costs
 *
 * Args: <emulatorUrl> <apiKey> [--rooms N]
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DatabaseSync } from 'node:sqlite';
import { createRouter, defineRoom, Room } from '@colyseus/core';
import { boot } from '@colyseus/testing';
import type { ConfigOptions } from '@colyseus/tools';
import { createLightning } from '../../src/lightning.js';
import { roomChannel } from '../../src/server/settlement.js';
import { freePort } from '../support/ports.js';
import { summarize } from '../support/profile-summary.js';

const [emulatorUrl, apiKey] = process.argv.slice(2);
const roomsArg = process.argv.indexOf('--rooms');
const roomCount = roomsArg > 0 ? Number(process.argv[roomsArg + 1]) : 1000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

let heard = 0;

/** Stands in for the room plugin: one presence subscription per room, as the plugin has. */
class BenchRoom extends Room {
  override autoDispose = false;
  override async onCreate() {
    await this.presence.subscribe(roomChannel(this.roomId), () => {
      heard++;
    });
  }
}

const port = await freePort();
const lightning = await createLightning({
  apiKey: apiKey as string,
  baseUrl: emulatorUrl as string,
  publicUrl: `http://127.0.0.1:${port}`,
  ledger: ':memory:',
  logger: quiet,
  reconciler: { enabled: false },
});
let settled = 0;
lightning.on('settled', () => {
  settled++;
});
const config = {
  rooms: { bench: defineRoom(BenchRoom) },
  routes: createRouter({ ...lightning.endpoints() }),
};
const colyseus = await boot(config as unknown as ConfigOptions, port);
const roomIds: string[] = [];
for (let i = 0; i < roomCount; i++) roomIds.push((await colyseus.createRoom('bench', {})).roomId);

const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
reply({ url: `http://127.0.0.1:${port}`, rooms: roomIds.length });

let created = 0;
async function create(n: number, concurrency: number) {
  const items: { token: string; remoteId: string }[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const intent = await lightning.reward({
        playerId: `player-${created + i}`,
        roomId: roomIds[(created + i) % roomIds.length] as string,
        amountMsat: 10_000,
        description: 'bench',
      });
      items.push({ token: intent.callbackToken as string, remoteId: intent.remoteId as string });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  created += n;
  return { items, ms: performance.now() - started };
}

function memory() {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  // The in-memory ledger's own size: SQLite pages, outside the JS heap.
  const db = (lightning.ledger as unknown as { db?: DatabaseSync }).db;
  const pages = db?.prepare('PRAGMA page_count').get() as { page_count: number } | undefined;
  const pageSize = db?.prepare('PRAGMA page_size').get() as { page_size: number } | undefined;
  return {
    ...m,
    ledgerBytes: (pages?.page_count ?? 0) * (pageSize?.page_size ?? 0),
    gc: gc !== undefined,
  };
}

const session = new Session();
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as {
    cmd: string;
    n?: number;
    concurrency?: number;
    on?: boolean;
  };
  if (command.cmd === 'create') {
    reply(await create(command.n ?? 1, command.concurrency ?? 32));
  } else if (command.cmd === 'memory') {
    reply(memory());
  } else if (command.cmd === 'stats') {
    reply({ settled, heard, cpu: process.cpuUsage() });
  } else if (command.cmd === 'profile' && command.on) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    reply({ ok: true });
  } else if (command.cmd === 'profile') {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    // BENCH_PROFILE_DIR keeps the whole profile (open it in Chrome DevTools or speedscope).
    const dir = process.env.BENCH_PROFILE_DIR;
    if (dir)
      writeFileSync(join(dir, `game-server-${Date.now()}.cpuprofile`), JSON.stringify(profile));
    reply({ top: summarize(profile as never, 12) });
  } else {
    reply({ error: `unknown command ${command.cmd}` });
  }
}
await colyseus.shutdown().catch(() => {});
await lightning.close();
