/**
 * Benchmark 9, entering a match (issue 31): 1,000 players enter a match of 1,000 seats, one after
 * the other, through `lightning.matches.enter` against the emulator, on an in-memory SQLite ledger
 * and on PostgreSQL (fsync on, synchronous_commit on), after 1,000 entries into another match to
 * warm up. Each entry's time is taken alone.
 *
 * The ratio is the median time of an entry among the last 100 over the median among the first
 * 100: an entry that read every fee already in the match grew with them (a ratio well above 1);
 * seats held by the ledger in the fee's create keep it flat. Goal: at most 1.3.
 */
import { randomUUID } from 'node:crypto';
import { startEmulator } from '../src/emulator/index.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { SqliteLedger } from '../src/ledger/sqlite.js';
import type { LedgerStore } from '../src/ledger/store.js';
import { createLightning } from '../src/lightning.js';
import { postgresAvailable, startPostgres } from '../test/support/postgres.js';
import { ms, type Row, ratio } from './support/table.js';

const PLAYERS = 1_000;
const BLOCK = 100;
const WARM_UP = 1_000;
const GOAL = 1.3;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

export async function benchMatches(): Promise<Row[]> {
  const emulator = await startEmulator({ logger: quiet });
  const pg = postgresAvailable() ? await startPostgres({ disk: true }) : null;
  try {
    const stores: { name: string; make: () => LedgerStore }[] = [
      { name: 'SqliteLedger (:memory:)', make: () => new SqliteLedger({ path: ':memory:' }) },
    ];
    if (pg) {
      stores.push({
        name: 'PostgresLedger (fsync, synchronous_commit on)',
        make: () => new PostgresLedger(pg.url, { schema: `b_${randomUUID().replaceAll('-', '')}` }),
      });
    }
    const rows: Row[] = [];
    for (const store of stores) {
      const ledger = store.make();
      const lightning = createLightning({
        apiKey: emulator.apiKey,
        baseUrl: emulator.url,
        publicUrl: 'http://127.0.0.1:9',
        ledger,
        reconciler: { enabled: false },
        logger: quiet,
      });
      try {
        await lightning.ready();
        // Warm up first (JIT, connections, statements): the first block is measured warm too.
        const warm = await lightning.matches.open({ entryFeeMsat: 20_000, seats: WARM_UP });
        for (let i = 0; i < WARM_UP; i++) {
          await lightning.matches.enter({ matchId: warm.id, playerId: `warm-${i}` });
        }
        const match = await lightning.matches.open({ entryFeeMsat: 20_000, seats: PLAYERS });
        const times: number[] = [];
        const started = performance.now();
        for (let i = 0; i < PLAYERS; i++) {
          const t = performance.now();
          await lightning.matches.enter({ matchId: match.id, playerId: `player-${i}` });
          times.push(performance.now() - t);
        }
        const seconds = (performance.now() - started) / 1000;
        const entered = (await lightning.matches.get(match.id)).entered;
        if (entered !== PLAYERS) throw new Error(`${entered} of ${PLAYERS} entered`);
        const first = median(times.slice(0, BLOCK));
        const last = median(times.slice(-BLOCK));
        rows.push({
          bench: '9 matches',
          subject: `enter 1,000 players into 1,000 seats, ${store.name}`,
          value: `${ms(last)} per entry, last 100`,
          limit: `${ms(first)} first 100`,
          ratio: ratio(last / first),
          goal: { text: `<= ${GOAL} (flat)`, met: last / first <= GOAL },
          detail: `${seconds.toFixed(1)} s for all 1,000; medians of 100 entries each`,
        });
      } finally {
        await lightning.close();
        await ledger.close();
      }
    }
    return rows;
  } finally {
    await pg?.stop();
    await emulator.close();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
