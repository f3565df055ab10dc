/**
 * Benchmark 5, the three ledger stores side by side, durable settings on: SqliteLedger on a file
 * (WAL, synchronous=FULL), on its worker thread (the default) and inline on the event loop
 * (`worker: false`), RedisLedger on a throwaway redis-server (AOF, appendfsync always) and
 * PostgresLedger on a throwaway PostgreSQL (fsync, synchronous_commit on), all on this machine's
 * disk. The measured call is a move, `creating -> pending` with the service's id and code (what
 * every reward's answer makes), timed from the call to its answer:
 *
 * - alone: one move at a time, so p50/p99 are the store's own latency (a round trip, a commit
 *   and its fsync);
 * - busy: 16 moves in flight (a process answering many callbacks at once), so the servers can
 *   commit several moves with one fsync; moves per second and the latency under that load.
 *
 * Interleaved rounds (each round runs every store once, in rotating order), medians across
 * rounds. The intents a round moves are created beforehand, untimed. Costs about 30 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import { PostgresLedger, RedisLedger, SqliteLedger } from '../src/ledger/index.js';
import type { LedgerStore } from '../src/ledger/store.js';
import { startPostgres } from '../test/support/postgres.js';
import { startRedis } from '../test/support/redis.js';
import { median, percentile, rotate, Samples } from './support/stats.js';
import { int, ms, type Row } from './support/table.js';

export interface LedgersBenchOptions {
  rounds?: number;
  /** Moves per round, one at a time. */
  alone?: number;
  /** Moves per round with `inFlight` at once. */
  busy?: number;
  inFlight?: number;
}

interface Figures {
  aloneRate: number[];
  aloneP50: number[];
  aloneP99: number[];
  busyRate: number[];
  busyP50: number[];
  busyP99: number[];
}

async function createMany(store: LedgerStore, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const intent = await store.create({
      kind: 'reward',
      roomId: `room-${i % 100}`,
      playerId: `player-${i}`,
      amount: '21000',
      unit: 'msats',
      description: 'bench',
      callbackToken: uuidv4().replaceAll('-', ''),
      nextCheckAt: Date.now() + 60_000,
    });
    ids.push(intent.id);
  }
  return ids;
}

/** Moves every id, `inFlight` at a time; returns each move's latency (ms) and the wall time. */
async function moveAll(
  store: LedgerStore,
  ids: string[],
  inFlight: number,
): Promise<{ latencies: Float64Array; seconds: number }> {
  const samples = new Samples();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      const t = performance.now();
      const moved = await store.transition(id, 'creating', 'pending', {
        patch: { remoteId: `wr-${id}`, code: `LNURL1${id}`, uri: `lightning:LNURL1${id}` },
      });
      samples.push(performance.now() - t);
      if (moved?.status !== 'pending') throw new Error(`move of ${id} did not apply`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return {
    latencies: Float64Array.from(samples.values()),
    seconds: (performance.now() - started) / 1000,
  };
}

export async function benchLedgers(options: LedgersBenchOptions = {}): Promise<Row[]> {
  const rounds = options.rounds ?? 4;
  const alone = options.alone ?? 300;
  const busy = options.busy ?? 1_000;
  const inFlight = options.inFlight ?? 16;
  // On the disk, not tmpfs: fsync must reach storage for the figures to mean durable.
  const dir = mkdtempSync(join(tmpdir(), 'lightning-bench-ledgers-'));
  const redis = await startRedis();
  const postgres = await startPostgres();
  const stores: { name: string; store: LedgerStore }[] = [
    {
      name: 'SqliteLedger (file, synchronous=FULL, worker thread)',
      store: new SqliteLedger(join(dir, 'worker.sqlite')),
    },
    {
      name: 'SqliteLedger (file, synchronous=FULL, inline)',
      store: new SqliteLedger({ path: join(dir, 'inline.sqlite'), worker: false }),
    },
    { name: 'RedisLedger (AOF, appendfsync always)', store: new RedisLedger(redis.url) },
    {
      name: 'PostgresLedger (fsync, synchronous_commit on)',
      store: new PostgresLedger({ connectionString: postgres.url, max: inFlight }),
    },
  ];
  try {
    const figures = new Map<string, Figures>();
    for (const { name, store } of stores) {
      await store.open();
      await moveAll(store, await createMany(store, 200), inFlight); // warm-up
      figures.set(name, {
        aloneRate: [],
        aloneP50: [],
        aloneP99: [],
        busyRate: [],
        busyP50: [],
        busyP99: [],
      });
    }
    for (let round = 0; round < rounds; round++) {
      for (const { name, store } of rotate(stores, round)) {
        const f = figures.get(name) as Figures;
        const one = await moveAll(store, await createMany(store, alone), 1);
        f.aloneRate.push(alone / one.seconds);
        f.aloneP50.push(percentile(one.latencies, 0.5));
        f.aloneP99.push(percentile(one.latencies, 0.99));
        const many = await moveAll(store, await createMany(store, busy), inFlight);
        f.busyRate.push(busy / many.seconds);
        f.busyP50.push(percentile(many.latencies, 0.5));
        f.busyP99.push(percentile(many.latencies, 0.99));
      }
    }
    const rows: Row[] = [];
    for (const { name } of stores) {
      const f = figures.get(name) as Figures;
      rows.push({
        bench: '5 ledgers',
        subject: `${name}, one move at a time`,
        value: `${int(median(f.aloneRate))} moves/s`,
        detail: `p50 ${ms(median(f.aloneP50), 3)}, p99 ${ms(median(f.aloneP99), 3)}`,
        note: `${rounds}x${alone} moves, medians`,
      });
      rows.push({
        bench: '5 ledgers',
        subject: `${name}, ${inFlight} in flight`,
        value: `${int(median(f.busyRate))} moves/s`,
        detail: `p50 ${ms(median(f.busyP50), 3)}, p99 ${ms(median(f.busyP99), 3)}`,
        note: `${rounds}x${busy} moves, medians`,
      });
    }
    return rows;
  } finally {
    for (const { store } of stores) await store.close();
    await redis.stop();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
