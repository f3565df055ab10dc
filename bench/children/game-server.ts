/**
 * The measured game server of the scale and screen benchmarks (set up by bench-game.ts): Colyseus (through
 * @colyseus/testing, on a free loopback port) with the lightning routes, an in-memory ledger,
 * the reconciler off, and `--rooms` rooms with the room plugin (`lightning.plugin()`) and a
 * LightningState, patching every `--patch-rate` ms. Players say who they are on join
 * (`{playerId}`). Prints `{url, roomIds}` once ready, then answers JSON commands on stdin:
 *
 *   {"cmd":"create","n":N,"concurrency":C}  N rewards through the plugin, round-robin over the
 *                                            rooms, to distinct players (or to `player` in
 *                                            the first room)
 *   {"cmd":"memory"}                         heap and RSS after two full GCs (--expose-gc)
 *   {"cmd":"stats"}                          settlements so far, messages the rooms heard
 *   {"cmd":"profile","on":true|false}        CPU profile; `false` answers its top costs
 *   {"cmd":"listener","on":true|false}       puts `lightning.attach(server)` in front of the
 *                                            router (or takes it away): the same routes on
 *                                            the node:http listener
 *   {"cmd":"bare"}                           starts a bare node:http server in this process
 *                                            that reads each POST and answers an empty 404
 *                                            (the floor a route can reach); answers `{url}`
 *   {"cmd":"moves","n":N}                    the ledger's own move rate: N intents of their
 *                                            own recorded and made pending (untimed), then
 *                                            each moved pending -> completed, one at a time,
 *                                            as a callback moves one; answers `{rate, cpuUs}`
 *   {"cmd":"reread","ids":[...],"concurrency":C}  the re-read's floor: a raw undici GET of each
 *                                            withdrawal request from the emulator, its body
 *                                            read and `JSON.parse`d, nothing else (no client,
 *                                            no validation), C in flight on one keep-alive
 *                                            Pool; answers `{rate, cpuUs}`, the CPU per GET
 *                                            of this process
 *
 * Args: <emulatorUrl> <apiKey> [--rooms N] [--patch-rate ms] [--immediate-push]
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DatabaseSync } from 'node:sqlite';
import { Pool } from 'undici';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import { freePort } from '../../test/support/ports.js';
import { summarize } from '../support/profile-summary.js';
import { reply, startBenchGame } from './bench-game.js';

type BenchRoom = Awaited<ReturnType<typeof startBenchGame>>['rooms'][number];

const [emulatorUrl, apiKey] = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const roomCount = arg('--rooms', 1000);
const patchRate = arg('--patch-rate', 50);
const immediatePush = process.argv.includes('--immediate-push');
// The store is made here, so that the move rate below can write to it as a callback's move does
// (the game's own `lightning.books.ledger` only reads).
const store = new SqliteLedger({ path: ':memory:' });
const game = await startBenchGame({
  emulatorUrl: emulatorUrl as string,
  apiKey: apiKey as string,
  ledger: store,
  rooms: roomCount,
  patchRate,
  immediatePush,
});
const { lightning, colyseus, rooms, counts } = game;
reply({ url: game.url, roomIds: rooms.map((r) => r.roomId) });

let created = 0;
async function create(n: number, concurrency: number, player?: string) {
  const items: { id: string; token: string; remoteId: string }[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const room = (player ? rooms[0] : rooms[(created + i) % rooms.length]) as BenchRoom;
      items.push(await game.reward(room, player ?? `player-${created + i}`, 'bench'));
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
  const db = (store as unknown as { db?: DatabaseSync }).db;
  const pages = db?.prepare('PRAGMA page_count').get() as { page_count: number } | undefined;
  const pageSize = db?.prepare('PRAGMA page_size').get() as { page_size: number } | undefined;
  return {
    ...m,
    ledgerBytes: (pages?.page_count ?? 0) * (pageSize?.page_size ?? 0),
    gc: gc !== undefined,
  };
}

let detach: (() => void) | undefined;
let bare: HttpServer | undefined;

/** The floor: node:http reading the body and answering, with nothing else in between. */
async function startBare(): Promise<string> {
  const bareServer = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(404, { 'content-length': '0' });
      res.end();
    });
  });
  bare = bareServer;
  const barePort = await freePort();
  await new Promise<void>((resolve) => bareServer.listen(barePort, '127.0.0.1', resolve));
  return `http://127.0.0.1:${barePort}`;
}

let moveBatch = 0;
/** The ledger alone, in this process, on the same store and rows as the callbacks. */
async function moves(n: number): Promise<{ rate: number; cpuUs: number }> {
  const ledger = store;
  const batch = moveBatch++;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const intent = await ledger.create({
      kind: 'reward',
      roomId: 'bench-moves',
      playerId: `mover-${batch}-${i}`,
      amount: '1000',
      unit: 'msats',
      description: 'move rate',
    });
    await ledger.transition(intent.id, 'creating', 'pending', {
      patch: { remoteId: crypto.randomUUID(), code: `LNURL1${'X'.repeat(180)}` },
    });
    ids.push(intent.id);
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const id of ids) {
    if (!(await ledger.transition(id, 'pending', 'completed', { note: 'bench' }))) {
      throw new Error(`move of ${id} lost`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rate: n / seconds, cpuUs: (used.user + used.system) / n };
}

/** A Pool as the client's own (src/api/transport.ts): one origin, keep-alive, no cap. */
const rawPool = new Pool(emulatorUrl as string, { keepAliveTimeout: 4_000 });
const rawHeaders = { apikey: apiKey as string, accept: 'application/json' };

/** The re-read's floor: what any client must do to read the resource, and no more. */
async function reread(
  ids: string[],
  concurrency: number,
): Promise<{ rate: number; cpuUs: number }> {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const worker = async () => {
    while (next < ids.length) {
      const res = await rawPool.request({
        path: `/v0/withdrawal-requests/${ids[next++]}`,
        method: 'GET',
        headers: rawHeaders,
      });
      const body = JSON.parse(await res.body.text()) as { data?: { id?: unknown } };
      if (res.statusCode !== 200 || typeof body.data?.id !== 'string') {
        throw new Error(`re-read answered ${res.statusCode}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rate: ids.length / seconds, cpuUs: (used.user + used.system) / ids.length };
}

const session = new Session();
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as {
    cmd: string;
    n?: number;
    concurrency?: number;
    on?: boolean;
    player?: string;
    ids?: string[];
  };
  if (command.cmd === 'create') {
    reply(await create(command.n ?? 1, command.concurrency ?? 32, command.player));
  } else if (command.cmd === 'memory') {
    reply(memory());
  } else if (command.cmd === 'stats') {
    reply({ settled: counts.settled, heard: counts.heard, cpu: process.cpuUsage() });
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
  } else if (command.cmd === 'listener' && command.on) {
    detach ??= lightning.attach(colyseus.server.transport.server as HttpServer);
    reply({ ok: true });
  } else if (command.cmd === 'listener') {
    detach?.();
    detach = undefined;
    reply({ ok: true });
  } else if (command.cmd === 'moves') {
    reply(await moves(command.n ?? 1000));
  } else if (command.cmd === 'reread') {
    reply(await reread(command.ids ?? [], command.concurrency ?? 64));
  } else if (command.cmd === 'bare') {
    reply({ url: bare ? null : await startBare() });
  } else {
    reply({ error: `unknown command ${command.cmd}` });
  }
}
bare?.close();
await rawPool.close();
await game.stop();
