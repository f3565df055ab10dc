/**
 * Benchmark 5, the two ledger stores side by side, durable settings on: SqliteLedger on a file
 * (WAL, synchronous=FULL), on its worker thread (the default) and inline on the event loop
 * (`worker: false`), and PostgresLedger on a throwaway PostgreSQL (fsync, synchronous_commit
 * on), all on this machine's disk. The measured call is a move, `creating -> pending` with the service's id and code (what
 * every reward's answer makes), timed from the call to its answer, in two forms side by side:
 * the move alone, and the same move carrying its journal posting (`inflight ->
 * claimable:<player>`, from `postingsFor`, as the engine writes it; computing it is timed too).
 * Issue 21's goal: the posting adds at most 25 % to the move's time.
 *
 * - alone: one move at a time, the two forms alternating move by move, so p50/p99 are the
 *   store's own latency (a round trip, a commit and its fsync) and each form's time per move is
 *   its mean latency;
 * - busy: 16 moves in flight (a process answering many callbacks at once), so the servers can
 *   commit several moves with one fsync; two batches of each form in the order ABBA (which form
 *   is A swaps every round), and a form's time per move is its batches' wall time over their
 *   moves.
 *
 * Interleaved rounds (each round runs every store once, in rotating order), medians across
 * rounds; the ratio is the median over rounds of (journaled - alone) / alone time per move in the
 * same round. Every intent is created with its creation posting (`house:rewards -> inflight`),
 * beforehand and untimed, so the two forms differ by the move's posting only, and the journal
 * grows as it does in a game. After each round the last moves are read back from the journal:
 * a store that dropped a posting fails the run. Costs about 35 s on a quiet machine.
 *
 * With `--against REF` (`npm run bench -- ledgers --against 090dc5b`), each store's journaled
 * moves/s of this checkout beside REF's, in the same run: REF checked out in a temporary git
 * worktree, each side in a process of its own (children/ledger-moves.ts), the two alternating
 * ABBA round by round on the same disk and the same PostgreSQL; the ratio is new / old.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import { PostgresLedger, SqliteLedger } from '../src/ledger/index.js';
import type { Intent, IntentPatch, NewIntent } from '../src/ledger/intent.js';
import { afterWrite, draftOf, postingsFor } from '../src/ledger/journal.js';
import type { LedgerStore } from '../src/ledger/store.js';
import { positionOf } from '../src/server/kinds/index.js';
import { startPostgres } from '../test/support/postgres.js';
import { startChild } from './support/child.js';
import { median, percentile, rotate, Samples } from './support/stats.js';
import { int, ms, type Row, ratio } from './support/table.js';

export interface LedgersBenchOptions {
  rounds?: number;
  /** Moves per round and form, one at a time. */
  alone?: number;
  /** Moves per round and form with `inFlight` at once. */
  busy?: number;
  inFlight?: number;
}

/** Issue 21: a journal entry costs at most this share of a move's time. */
const JOURNAL_LIMIT = 0.25;

/** One form of the move under one load, per round. */
interface Series {
  rate: number[];
  p50: number[];
  p99: number[];
  /** ms per move. */
  time: number[];
}

/** Both forms under one load; `extra` per round is (journaled - plain) / plain time per move. */
interface Load {
  plain: Series;
  journaled: Series;
  extra: number[];
  /** The same for the p50 latency: the ratio of a typical move, without the tails. */
  extraP50: number[];
}

interface Figures {
  alone: Load;
  busy: Load;
}

const load = (): Load => ({ plain: series(), journaled: series(), extra: [], extraP50: [] });

/** Records one round of both forms. */
function compare(
  l: Load,
  plain: Float64Array,
  plainMs: number,
  journaled: Float64Array,
  journaledMs: number,
): void {
  record(l.plain, plain, plainMs);
  record(l.journaled, journaled, journaledMs);
  l.extra.push((journaledMs - plainMs) / plainMs);
  const p50 = (s: Series) => s.p50.at(-1) as number;
  l.extraP50.push((p50(l.journaled) - p50(l.plain)) / p50(l.plain));
}

const series = (): Series => ({ rate: [], p50: [], p99: [], time: [] });

let players = 0;

/** Rewards in `creating`, each recorded with its creation posting, for 1,000 players in turn. */
async function createMany(store: LedgerStore, n: number): Promise<Intent[]> {
  const intents: Intent[] = [];
  for (let i = 0; i < n; i++) {
    const now = Date.now();
    const fields: NewIntent = {
      kind: 'reward',
      roomId: `room-${i % 100}`,
      playerId: `player-${players++ % 1_000}`,
      amount: '21000',
      unit: 'msats',
      description: 'bench',
      callbackToken: uuidv4().replaceAll('-', ''),
      nextCheckAt: now + 60_000,
    };
    intents.push(
      await store.create(fields, now, {}, postingsFor(null, draftOf(fields, now), positionOf)),
    );
  }
  return intents;
}

interface Job {
  intent: Intent;
  journaled: boolean;
}

interface Timed {
  /** Latencies (ms) of the plain moves and of the journaled ones. */
  plain: Float64Array;
  journaled: Float64Array;
  seconds: number;
}

/** Moves every job's intent to pending, `inFlight` at a time, each with its posting or without. */
async function moveAll(store: LedgerStore, jobs: Job[], inFlight: number): Promise<Timed> {
  const plain = new Samples();
  const journaled = new Samples();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as Job;
      const { id } = job.intent;
      const patch: IntentPatch = {
        remoteId: `wr-${id}`,
        code: `LNURL1${id}`,
        uri: `lightning:LNURL1${id}`,
      };
      const t = performance.now();
      const now = Date.now();
      const moved = await store.transition(id, 'creating', 'pending', {
        patch,
        now,
        ...(job.journaled
          ? {
              postings: postingsFor(
                job.intent,
                afterWrite(job.intent, 'pending', patch, now),
                positionOf,
              ),
            }
          : {}),
      });
      (job.journaled ? journaled : plain).push(performance.now() - t);
      if (moved?.status !== 'pending') throw new Error(`move of ${id} did not apply`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return {
    plain: Float64Array.from(plain.values()),
    journaled: Float64Array.from(journaled.values()),
    seconds: (performance.now() - started) / 1000,
  };
}

const sum = (values: Float64Array) => values.reduce((a, b) => a + b, 0);

function record(s: Series, latencies: Float64Array, msPerMove: number): void {
  s.rate.push(1000 / msPerMove);
  s.p50.push(percentile(latencies, 0.5));
  s.p99.push(percentile(latencies, 0.99));
  s.time.push(msPerMove);
}

/** Fails the run unless the journal holds the move's posting (or not) for this intent. */
async function expectJournal(store: LedgerStore, job: Job, name: string): Promise<void> {
  const { entries } = await store.journal({ intentId: job.intent.id });
  const tags = entries.map((e) => e.tag).join(',');
  const want = job.journaled ? 'created,pending' : 'created';
  if (tags !== want) {
    throw new Error(
      `${name}: intent ${job.intent.id} has journal entries [${tags}], not [${want}]`,
    );
  }
}

export async function benchLedgers(options: LedgersBenchOptions = {}): Promise<Row[]> {
  const at = process.argv.indexOf('--against');
  const against = at === -1 ? undefined : process.argv[at + 1];
  if (against !== undefined) return benchAgainst(against, options);
  const rounds = options.rounds ?? 8;
  const alone = options.alone ?? 150;
  const busy = options.busy ?? 500;
  const inFlight = options.inFlight ?? 16;
  // On the disk, not tmpfs: fsync must reach storage for the figures to mean durable.
  const dir = mkdtempSync(join(tmpdir(), 'lightning-bench-ledgers-'));
  const postgres = await startPostgres({ disk: true });
  const stores: { name: string; store: LedgerStore }[] = [
    {
      name: 'SqliteLedger (file, synchronous=FULL, worker thread)',
      store: new SqliteLedger(join(dir, 'worker.sqlite')),
    },
    {
      name: 'SqliteLedger (file, synchronous=FULL, inline)',
      store: new SqliteLedger({ path: join(dir, 'inline.sqlite'), worker: false }),
    },
    {
      name: 'PostgresLedger (fsync, synchronous_commit on)',
      store: new PostgresLedger({ connectionString: postgres.url, max: inFlight }),
    },
  ];
  const jobs = (intents: Intent[], journaled: (i: number) => boolean): Job[] =>
    intents.map((intent, i) => ({ intent, journaled: journaled(i) }));
  try {
    const figures = new Map<string, Figures>();
    for (const { name, store } of stores) {
      await store.open();
      const warm = jobs(await createMany(store, 200), (i) => i % 2 === 1);
      await moveAll(store, warm, inFlight);
      for (const job of warm.slice(-2)) await expectJournal(store, job, name);
      figures.set(name, { alone: load(), busy: load() });
    }
    for (let round = 0; round < rounds; round++) {
      for (const { name, store } of rotate(stores, round)) {
        const f = figures.get(name) as Figures;
        // Alone: the forms alternate move by move, the first one swapped every round.
        const paired = jobs(await createMany(store, 2 * alone), (i) => i % 2 === round % 2);
        const one = await moveAll(store, paired, 1);
        const plainMs = sum(one.plain) / one.plain.length;
        const journaledMs = sum(one.journaled) / one.journaled.length;
        compare(f.alone, one.plain, plainMs, one.journaled, journaledMs);
        // Busy: two batches of each form in the order ABBA, so a drift in the machine's load
        // weighs on both; which form is A swaps every round.
        const half = Math.ceil(busy / 2);
        const forms = [false, true, true, false].map((b) => b !== (round % 2 === 1));
        const batches: Job[][] = [];
        for (const journaled of forms) {
          batches.push(jobs(await createMany(store, half), () => journaled));
        }
        const plain = { latencies: new Samples(), seconds: 0, moves: 0 };
        const journaled = { latencies: new Samples(), seconds: 0, moves: 0 };
        for (const [i, batch] of batches.entries()) {
          const t = await moveAll(store, batch, inFlight);
          const form = forms[i] ? journaled : plain;
          for (const l of forms[i] ? t.journaled : t.plain) form.latencies.push(l);
          form.seconds += t.seconds;
          form.moves += batch.length;
        }
        const plainBusyMs = (1000 * plain.seconds) / plain.moves;
        const journaledBusyMs = (1000 * journaled.seconds) / journaled.moves;
        compare(
          f.busy,
          plain.latencies.values(),
          plainBusyMs,
          journaled.latencies.values(),
          journaledBusyMs,
        );
        for (const job of [...paired.slice(-2), ...batches.map((b) => b.at(-1))]) {
          await expectJournal(store, job as Job, name);
        }
      }
    }
    const rows: Row[] = [];
    for (const { name } of stores) {
      const f = figures.get(name) as Figures;
      const loads = [
        { load: 'one move at a time', figures: f.alone, n: alone },
        { load: `${inFlight} in flight`, figures: f.busy, n: busy },
      ];
      for (const { load, figures: g, n } of loads) {
        const plainRate = `${int(median(g.plain.rate))} moves/s`;
        const extra = median(g.extra);
        const addedUs = 1000 * (median(g.journaled.time) - median(g.plain.time));
        rows.push({
          bench: '5 ledgers',
          subject: `${name}, ${load}`,
          value: plainRate,
          detail: `p50 ${ms(median(g.plain.p50), 3)}, p99 ${ms(median(g.plain.p99), 3)}`,
          note: `the move alone; ${rounds}x${n} moves, medians`,
        });
        rows.push({
          bench: '5 ledgers',
          subject: `${name}, ${load}, with its journal entry`,
          value: `${int(median(g.journaled.rate))} moves/s`,
          limit: `${plainRate} (alone)`,
          ratio: ratio(extra),
          goal: { text: `<= ${JOURNAL_LIMIT} more time per move`, met: extra <= JOURNAL_LIMIT },
          detail: `p50 ${ms(median(g.journaled.p50), 3)}, p99 ${ms(median(g.journaled.p99), 3)}; ${addedUs >= 0 ? '+' : ''}${int(addedUs)} µs per move; p50 ratio ${ratio(median(g.extraP50))}`,
          note: `ratio: (with - without) / without, time per move; ${rounds}x${n} moves, medians`,
        });
      }
    }
    return rows;
  } finally {
    for (const { store } of stores) await store.close();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const STORES = {
  'sqlite-worker': 'SqliteLedger (file, synchronous=FULL, worker thread)',
  'sqlite-inline': 'SqliteLedger (file, synchronous=FULL, inline)',
  postgres: 'PostgresLedger (fsync, synchronous_commit on)',
} as const;

/** This checkout's ledger beside `ref`'s, store by store, in child processes (see the header). */
async function benchAgainst(ref: string, options: LedgersBenchOptions): Promise<Row[]> {
  const rounds = options.rounds ?? 4;
  const moves = options.busy ?? 1000;
  const inFlight = options.inFlight ?? 16;
  const here = new URL('..', import.meta.url).pathname;
  const dir = mkdtempSync(join(tmpdir(), 'lightning-bench-against-'));
  const old = join(dir, 'old');
  execFileSync('git', ['-C', here, 'worktree', 'add', '--detach', old, ref], { stdio: 'ignore' });
  symlinkSync(join(here, 'node_modules'), join(old, 'node_modules'));
  const postgres = await startPostgres();
  const figures = new Map<string, { alone: number[]; busy: number[] }>();
  let runs = 0;
  const run = async (root: string, store: keyof typeof STORES) => {
    const n = runs++;
    const where = store === 'postgres' ? postgres.url : join(dir, `${n}.sqlite`);
    const task = { root, store, where, schema: `bench_${n}`, moves, inFlight };
    const child = await startChild<{ alone: number; busy: number }>(
      new URL('./children/ledger-moves.ts', import.meta.url),
      [JSON.stringify(task)],
    );
    await child.stop();
    const key = `${store}:${root === old ? 'old' : 'new'}`;
    const f = figures.get(key) ?? { alone: [], busy: [] };
    f.alone.push(child.info.alone);
    f.busy.push(child.info.busy);
    figures.set(key, f);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const store of Object.keys(STORES) as (keyof typeof STORES)[]) {
        const sides = round % 2 === 0 ? [old, here] : [here, old];
        for (const root of sides) await run(root, store);
      }
    }
  } finally {
    await postgres.stop();
    execFileSync('git', ['-C', here, 'worktree', 'remove', '--force', old], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
  const rows: Row[] = [];
  for (const [store, name] of Object.entries(STORES)) {
    for (const load of ['alone', 'busy'] as const) {
      const mine = median(
        (figures.get(`${store}:new`) as { alone: number[]; busy: number[] })[load],
      );
      const theirs = median(
        (figures.get(`${store}:old`) as { alone: number[]; busy: number[] })[load],
      );
      rows.push({
        bench: '5 ledgers',
        subject: `${name}, ${load === 'alone' ? 'one move at a time' : `${inFlight} in flight`}, with its journal entry: this checkout`,
        value: `${int(mine)} moves/s`,
        limit: `${int(theirs)} moves/s (${ref})`,
        ratio: ratio(mine / theirs),
        note: `ratio: this / ${ref}; ${rounds}x${moves} moves per side, ABBA, medians`,
      });
    }
  }
  return rows;
}
