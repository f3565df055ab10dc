/**
 * Benchmark 3, scale on one process: verified callbacks per second with 1,000 rooms and
 * 10,000 open intents, and the memory each open intent costs. Three processes: the emulator
 * (callbacks dropped), the game server being measured (children/game-server.ts), and this one,
 * which claims every reward through the emulator's control and then POSTs the callbacks
 * itself with many in flight. Each callback is a full verification: token lookup, re-read of
 * the withdrawal request from the emulator, compare-and-set in the ledger, presence publish,
 * delivery to the room plugin, which updates the owner's entry in the room state. A last batch runs under the CPU profiler to name the top costs.
 */
import { Pool } from 'undici';
import { type Child, startChild } from './support/child.js';
import { median } from './support/stats.js';
import { int, type Row, ratio } from './support/table.js';

export interface ScaleBenchOptions {
  rooms?: number;
  intents?: number;
  /** Callbacks in flight. */
  concurrency?: number;
}

interface Item {
  token: string;
  remoteId: string;
}
interface Memory {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  ledgerBytes: number;
}
interface Stats {
  settled: number;
  heard: number;
  cpu: { user: number; system: number };
}

const GOAL_RATE = 5_000;
const GOAL_BYTES = 2_048;

async function ask<T>(child: Child<unknown>, command: unknown): Promise<T> {
  child.send(command);
  return (await child.next()) as T;
}

/** POSTs one callback per item, `concurrency` in flight; returns callbacks per second. */
async function fire(
  pool: Pool,
  items: Item[],
  concurrency: number,
  expected = 200,
): Promise<number> {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as Item;
      const res = await pool.request({
        path: `/lightning/callbacks/${item.token}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: item.remoteId, status: 'completed' }),
      });
      await res.body.dump();
      if (res.statusCode !== expected) failures++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failures > 0) throw new Error(`${failures} callbacks were not answered ${expected}`);
  return items.length / ((performance.now() - started) / 1000);
}

export async function benchScale(options: ScaleBenchOptions = {}): Promise<{
  rows: Row[];
  profile: string[];
}> {
  const rooms = options.rooms ?? 1_000;
  const intents = options.intents ?? 10_000;
  const concurrency = options.concurrency ?? 64;
  const emulator = await startChild<{ url: string; apiKey: string }>(
    new URL('./children/emulator.ts', import.meta.url),
    ['--drop-callbacks'],
  );
  let server: Child<{ url: string }> | undefined;
  let pool: Pool | undefined;
  try {
    server = await startChild<{ url: string }>(
      new URL('./children/game-server.ts', import.meta.url),
      [emulator.info.url, emulator.info.apiKey, '--rooms', String(rooms)],
      ['--expose-gc'],
    );
    // What the rooms cost with nothing happening: each patches 20 times a second.
    const idleBefore = await ask<Stats>(server, { cmd: 'stats' });
    const idleStarted = performance.now();
    await new Promise((r) => setTimeout(r, 1_000));
    const idleAfter = await ask<Stats>(server, { cmd: 'stats' });
    const idleShare =
      (idleAfter.cpu.user + idleAfter.cpu.system - idleBefore.cpu.user - idleBefore.cpu.system) /
      1_000 /
      (performance.now() - idleStarted);
    // Warm-up intents first: JIT, ledger pages, and the V8 heap grown to its working size (V8
    // keeps the pages a burst grew into, which would otherwise count as per-intent RSS).
    const warm = await ask<{ items: Item[] }>(server, {
      cmd: 'create',
      n: Math.ceil(intents / 4),
      concurrency: 32,
    });
    const before = await ask<Memory>(server, { cmd: 'memory' });
    const open = await ask<{ items: Item[]; ms: number }>(server, {
      cmd: 'create',
      n: intents,
      concurrency: 32,
    });
    const after = await ask<Memory>(server, { cmd: 'memory' });
    const heapPerIntent = (after.heapUsed - before.heapUsed) / intents;
    const rssPerIntent = (after.rss - before.rss) / intents;
    const ledgerPerIntent = (after.ledgerBytes - before.ledgerBytes) / intents;
    const reservedPerIntent = (after.heapTotal - before.heapTotal) / intents;

    const all = [...warm.items, ...open.items];
    const claim = await ask<{ claimed: number; failed: number }>(emulator, {
      cmd: 'claim',
      ids: all.map((i) => i.remoteId),
    });
    if (claim.failed > 0) throw new Error(`${claim.failed} claims failed`);

    pool = new Pool(server.info.url, { connections: 16 });
    await fire(pool, warm.items, concurrency); // warm-up of the callback path
    // The open intents in timed batches, then the last batch under the profiler.
    const batches = 4;
    const size = Math.floor(intents / (batches + 1));
    const rates: number[] = [];
    const cpuBefore = await ask<Stats>(server, { cmd: 'stats' });
    let timed = 0;
    for (let b = 0; b < batches; b++) {
      const batch = open.items.slice(b * size, (b + 1) * size);
      rates.push(await fire(pool, batch, concurrency));
      timed += batch.length;
    }
    const cpuAfter = await ask<Stats>(server, { cmd: 'stats' });
    const cpuUs =
      (cpuAfter.cpu.user + cpuAfter.cpu.system - cpuBefore.cpu.user - cpuBefore.cpu.system) / timed;
    // The route alone: a token that cannot be ours is refused (404) before any lookup, so
    // this is Colyseus's router and node:http per POST, the floor under a verified callback.
    const bogus = Array.from({ length: size }, () => ({ token: 'x', remoteId: 'x' }));
    const routeBefore = await ask<Stats>(server, { cmd: 'stats' });
    const routeRates: number[] = [];
    for (let b = 0; b < 2; b++) routeRates.push(await fire(pool, bogus, concurrency, 404));
    const routeAfter = await ask<Stats>(server, { cmd: 'stats' });
    const routeCpuUs =
      (routeAfter.cpu.user +
        routeAfter.cpu.system -
        routeBefore.cpu.user -
        routeBefore.cpu.system) /
      (2 * size);
    await ask(server, { cmd: 'profile', on: true });
    await fire(pool, open.items.slice(batches * size), concurrency);
    const { top } = await ask<{ top: string[] }>(server, { cmd: 'profile', on: false });
    const stats = await ask<Stats>(server, { cmd: 'stats' });
    if (stats.settled !== all.length) {
      throw new Error(`${stats.settled} settled of ${all.length} claimed`);
    }
    // Delivery to the rooms is asynchronous (presence, then a ledger read): give it a moment.
    let heard = stats.heard;
    for (let i = 0; i < 50 && heard < all.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      heard = (await ask<Stats>(server, { cmd: 'stats' })).heard;
    }
    if (heard !== all.length) throw new Error(`rooms heard ${heard} of ${all.length} settlements`);
    const rate = median(rates);
    const retained = heapPerIntent + ledgerPerIntent;
    const rows: Row[] = [
      {
        bench: '3 scale',
        subject: `verified callbacks, ${int(rooms)} rooms, ${int(intents)} open`,
        value: `${int(rate)} /s`,
        detail: `${cpuUs.toFixed(0)} µs server CPU per callback; ${concurrency} in flight`,
        ratio: ratio(rate / GOAL_RATE),
        note: `goal ${int(GOAL_RATE)}/s: ${rate >= GOAL_RATE ? 'met' : 'NOT MET'}`,
      },
      {
        bench: '3 scale',
        subject: 'route only (refused token, 404)',
        value: `${int(median(routeRates))} /s`,
        detail: `${routeCpuUs.toFixed(0)} µs server CPU per POST: router + node:http`,
        ratio: ratio(routeCpuUs / cpuUs),
        note: 'ratio: share of a verified callback',
      },
      {
        bench: '3 scale',
        subject: `${int(rooms)} idle rooms (no callbacks)`,
        value: `${(idleShare * 100).toFixed(1)} % of a core`,
        detail: 'Colyseus patch ticks (every 50 ms per room), before any intent exists',
      },
      {
        bench: '3 scale',
        subject: 'memory per open intent',
        value: `${int(retained)} B`,
        detail: `JS heap ${int(heapPerIntent)} B + SQLite pages ${int(ledgerPerIntent)} B; RSS delta ${int(rssPerIntent)} B (V8 heap reserved +${int(reservedPerIntent)} B)`,
        ratio: ratio(GOAL_BYTES / retained),
        note: `goal < 2 KB retained: ${retained < GOAL_BYTES ? 'met' : 'NOT MET'}`,
      },
      {
        bench: '3 scale',
        subject: 'rewards created (setup)',
        value: `${int(intents / (open.ms / 1000))} /s`,
        detail: 'ledger write + POST + ledger move, 32 at once',
      },
    ];
    return { rows, profile: top };
  } finally {
    await pool?.close();
    await server?.stop();
    await emulator.stop();
  }
}
