/**
 * Benchmark 7, the game's outbound rate (issue 26): a settle of 1,000 winners against an
 * emulator limited to 50 requests a second (burst 50), by one game process, then by four
 * processes sharing a PostgreSQL ledger (four matches of 250 winners, settled at once). Each process is a
 * child (bench/children/rate-settler.ts) with `rateLimit: { perSecond: 50, burst: 45 }` (a few
 * tokens under the service's burst: a request that reaches it a few ms late is still in), its
 * reconciler and breaker on as in production.
 *
 * Measured from the settle command to the last answer: payouts made per second, against the
 * 50/s allowed (the ratio; goal at least 0.9); from the emulator's own records: the 429s it
 * answered (goal 0), whether the arrivals of every request of the run kept to its bucket
 * (checked pair by pair, test/support/rate-check.ts), and the busiest second. Payouts failed or
 * unknown (goal 0) and breaker pauses (goal 0) come from the processes.
 *
 * The matches are set up first (fees paid and read back) by a process without a rate, while
 * the emulator has no limit: only the settles are measured.
 */
import { startEmulator } from '../src/emulator/index.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { createLightning } from '../src/lightning.js';
import { openPaidMatch, type PaidMatch } from '../test/support/paid-match.js';
import { freshSchema, type PostgresServer, startPostgres } from '../test/support/postgres.js';
import { busiestWindow, overLimit } from '../test/support/rate-check.js';
import { type Child, startChild } from './support/child.js';
import { int, type Row, ratio } from './support/table.js';

const SERVICE_LIMIT = { perSecond: 50, burst: 50 };
const GAME_LIMIT = { perSecond: 50, burst: 45 };
const WINNERS = 1_000;
const REQUESTS = '/v0/withdrawal-requests';
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

interface Settled {
  status: string;
  payouts: number;
  statuses: Record<string, number>;
  pauses: number;
  paused: boolean;
  startedAt: number;
  endedAt: number;
}

export interface RateFigures {
  processes: number;
  winners: number;
  seconds: number;
  payoutsPerSecond: number;
  requests: number;
  limited: number;
  withinLimit: boolean;
  busiestSecond: number;
  notMade: number;
  pauses: number;
  /** The longest a match took to be seen settled after its last payout's code was created. */
  settledAfterLast: number;
}

export async function benchRate(): Promise<Row[]> {
  const pg = await startPostgres({ disk: true });
  const emulator = await startEmulator({ logger: quiet });
  try {
    const rows: Row[] = [];
    for (const processes of [1, 4]) {
      const f = await settleRun(pg, emulator, processes);
      const r = f.payoutsPerSecond / SERVICE_LIMIT.perSecond;
      const met = r >= 0.9 && f.limited === 0 && f.withinLimit && f.notMade === 0 && f.pauses === 0;
      rows.push({
        bench: '7 rate',
        subject: `${f.processes} process${f.processes > 1 ? 'es on one PostgreSQL' : ''}: settle of ${int(f.winners)} winners`,
        value: `${f.payoutsPerSecond.toFixed(1)} payouts/s`,
        limit: `${SERVICE_LIMIT.perSecond} /s allowed`,
        ratio: ratio(r),
        goal: { text: '>= 0.9, 0 429s, 0 failed, no pause', met },
        detail: `${f.seconds.toFixed(1)} s, settled ${f.settledAfterLast.toFixed(1)} s after the last payout; 429s ${f.limited}; failed or unknown ${f.notMade}; pauses ${f.pauses}; ${int(f.requests)} requests, busiest second ${f.busiestSecond}, within the bucket: ${f.withinLimit ? 'yes' : 'NO'}`,
      });
    }
    return rows;
  } finally {
    await emulator.close();
    await pg.stop();
  }
}

async function settleRun(
  pg: PostgresServer,
  emulator: Awaited<ReturnType<typeof startEmulator>>,
  processes: number,
): Promise<RateFigures> {
  emulator.control.reset();
  const schema = freshSchema();
  const winnersEach = WINNERS / processes;
  const matches = await setUp(pg, emulator, schema, processes, winnersEach);
  const children: Child<{ ready: boolean }>[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      const args = {
        emulatorUrl: emulator.url,
        apiKey: emulator.apiKey,
        ledgerUrl: pg.url,
        schema,
        ...GAME_LIMIT,
      };
      children.push(
        await startChild(new URL('./children/rate-settler.ts', import.meta.url), [
          JSON.stringify(args),
        ]),
      );
    }
    emulator.control.setRateLimit(SERVICE_LIMIT);
    const from = Date.now();
    const settled = await Promise.all(
      children.map((child, i) =>
        child.ask<Settled>({
          cmd: 'settle',
          matchId: matches[i]?.matchId,
          shares: matches[i]?.shares,
        }),
      ),
    );
    const to = Math.max(...settled.map((s) => s.endedAt));
    const run = emulator.control.requests.filter((r) => r.at >= from);
    const payouts = run.filter((r) => r.method === 'POST' && r.path === REQUESTS && !r.limited);
    const made = settled.reduce((n, s) => n + (s.statuses.pending ?? 0), 0);
    const seconds = (to - from) / 1000;
    // Each match's players are named after it (`m<i>-p<n>`, openPaidMatch).
    const codes = emulator.control.withdrawalRequests();
    const lags = settled.map((s, i) => {
      const last = Math.max(
        ...codes
          .filter((w) => w.internalId?.startsWith(`m${i}-`))
          .map((w) => Date.parse(w.createdAt)),
      );
      return (s.endedAt - last) / 1000;
    });
    return {
      processes,
      winners: WINNERS,
      seconds,
      payoutsPerSecond: payouts.length / seconds,
      requests: run.length,
      limited: emulator.control.limited,
      withinLimit:
        overLimit(
          run.filter((r) => !r.limited).map((r) => r.at),
          SERVICE_LIMIT,
        ) === null,
      busiestSecond: busiestWindow(
        run.filter((r) => !r.limited).map((r) => r.at),
        1_000,
      ),
      notMade: WINNERS - made,
      pauses: settled.reduce((n, s) => n + s.pauses, 0),
      settledAfterLast: Math.max(...lags),
    };
  } finally {
    for (const child of children) {
      child.send({ cmd: 'stop' });
      await child.stop();
    }
  }
}

/** The matches, each with its players' fees paid and read back, by a process with no rate. */
async function setUp(
  pg: PostgresServer,
  emulator: Awaited<ReturnType<typeof startEmulator>>,
  schema: string,
  processes: number,
  winnersEach: number,
): Promise<PaidMatch[]> {
  const ledger = new PostgresLedger(pg.url, { schema });
  const setup = createLightning({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    publicUrl: 'http://127.0.0.1:2567',
    logger: quiet,
    ledger,
    reconciler: { enabled: false },
  });
  try {
    await setup.ready();
    const matches: PaidMatch[] = [];
    for (let i = 0; i < processes; i++) {
      matches.push(await openPaidMatch(setup, emulator, winnersEach, `m${i}`));
    }
    return matches;
  } finally {
    await setup.close();
    await ledger.close();
  }
}
