/**
 * The load test's printed figures, from the bots' stories (when each step reached its screen),
 * the emulator's records (withdrawal requests with their creation times, requests answered,
 * 429s), the processes' CPU time and the ledger database's statistics. Printed as one table
 * (soak/figures.ts).
 */
import { count, type Figure, percentile, seconds, tally, tallyOf } from '../soak/figures.js';
import type { BotStory } from './bots.js';
import type { Tournament } from './crowd.js';
import type { LoadOptions } from './options.js';

export interface Cpu {
  name: string;
  cpuMs: number;
  ageMs: number;
  /** The holds the process's 429s wrote for every process: [from, to], epoch ms. */
  holds?: [number, number][];
}

/** Ms of [from, to] covered by any of `spans` (their union). */
export function coveredMs(spans: readonly [number, number][], from: number, to: number): number {
  const sorted = spans
    .map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of sorted) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

export interface PgStats {
  commits: number;
  rows: number;
}

export interface Measured {
  options: LoadOptions;
  stories: readonly BotStory[];
  tournament: Tournament;
  withdrawals: readonly { createdAt: string }[];
  staticCharges: number;
  requests: number;
  limited: number;
  cpu: readonly Cpu[];
  pg: { before: PgStats; after: PgStats };
  times: { started: number; crowdEnd: number; ended: number };
  crashed: { killedAt: number; back: number } | null;
  load: { start: number; end: number };
}

export interface LoadFigures {
  rows: Figure[];
  /** The headline numbers, for bench/README.md and the test. */
  joinsPerSecond: number;
  feesPerSecond: number;
  tableSettleToScreen: { p50: number; p99: number; n: number };
  tournamentSettleToScreen: { p50: number; p99: number; n: number };
  payoutsPerSecond: number;
  limited: number;
}

/** Events per second over the span from the first to the last of them. */
function rate(times: readonly number[]): number {
  if (times.length < 2) return 0;
  const span = (Math.max(...times) - Math.min(...times)) / 1000;
  return span > 0 ? times.length / span : 0;
}

function latencies(stories: readonly BotStory[]): { p50: number; p99: number; n: number } {
  const ms = stories
    .filter((s) => s.outcome === 'won' && s.settlingAt !== undefined && s.codeShownAt !== undefined)
    .map((s) => (s.codeShownAt as number) - (s.settlingAt as number));
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), n: ms.length };
}

const ms = (v: number) => (Number.isNaN(v) ? 'none' : seconds(v));

export function loadFigures(m: Measured): LoadFigures {
  const o = m.options;
  const tables = m.stories.filter((s) => s.where === 'table');
  const hall = m.stories.filter((s) => s.where === 'hall');
  const joins = m.stories.flatMap((s) => (s.joinedAt === undefined ? [] : [s.joinedAt]));
  const joinMs = m.stories.flatMap((s) =>
    s.joinedAt === undefined ? [] : [s.joinedAt - s.joinStart],
  );
  const paid = m.stories.flatMap((s) => (s.feePaidAt === undefined ? [] : [s.feePaidAt]));
  const tableLatency = latencies(tables);
  const hallLatency = latencies(hall);
  const settle = m.tournament.settle;
  const payoutsPerSecond = settle && settle.ms > 0 ? settle.payouts / (settle.ms / 1000) : 0;
  const wall = (m.times.ended - m.times.started) / 1000;
  const commits = m.pg.after.commits - m.pg.before.commits;
  const written = m.pg.after.rows - m.pg.before.rows;
  const rows: Figure[] = [];
  const add = (section: string, name: string, value: string) => rows.push({ section, name, value });

  add(
    'run',
    "processes, bots, winners, rate (the game's burst), seed",
    `${o.processes}, ${count(o.bots)}, ${count(o.winners)}, ${o.rate}/s (${Math.max(1, Math.floor(o.rate * o.burstShare))}), ${o.seed}`,
  );
  add(
    'run',
    'crowd, then drain',
    `${seconds(m.times.crowdEnd - m.times.started)}, ${seconds(m.times.ended - m.times.crowdEnd)}`,
  );
  add(
    'run',
    'machine load average (1 min), start and end',
    `${m.load.start.toFixed(1)}, ${m.load.end.toFixed(1)}`,
  );
  add(
    'run',
    'SIGKILL',
    m.crashed
      ? `at ${seconds(m.crashed.killedAt - m.times.started)}, back after ${seconds(m.crashed.back - m.crashed.killedAt)}`
      : 'none',
  );
  add(
    'players',
    'joins/s (tables and hall)',
    `${rate(joins).toFixed(1)} (${count(joins.length)} joins; join p50 ${ms(percentile(joinMs, 0.5))}, p99 ${ms(percentile(joinMs, 0.99))})`,
  );
  // Where a player's wait goes: the join (matchmaker, seat reservation, first state) and the
  // answer to `enter` (the fee recorded and its charge created), tables and hall apart.
  const spans = (of: readonly BotStory[], from: keyof BotStory, to: keyof BotStory) => {
    const v = of.flatMap((s) => {
      const a = s[from];
      const b = s[to];
      return typeof a === 'number' && typeof b === 'number' ? [b - a] : [];
    });
    return `p50 ${ms(percentile(v, 0.5))}, p99 ${ms(percentile(v, 0.99))}, max ${ms(Math.max(...v))}`;
  };
  add(
    'players',
    'join: tables; hall',
    `${spans(tables, 'joinStart', 'joinedAt')}; ${spans(hall, 'joinStart', 'joinedAt')}`,
  );
  add(
    'players',
    'answer to enter: tables; hall',
    `${spans(tables, 'enterSentAt', 'enteredAt')}; ${spans(hall, 'enterSentAt', 'enteredAt')}`,
  );
  add(
    'players',
    'fees paid/s',
    `${rate(paid).toFixed(1)} (${count(paid.length)} paid of ${count(m.staticCharges)} charged)`,
  );
  add('players', 'table outcomes', tally(tallyOf(tables.map((s) => s.outcome))));
  add('players', 'tournament outcomes', tally(tallyOf(hall.map((s) => s.outcome))));
  add(
    'settle to screen',
    'table winner: p50, p99',
    `${ms(tableLatency.p50)}, ${ms(tableLatency.p99)} (${tableLatency.n} winners)`,
  );
  add(
    'settle to screen',
    'tournament winner: p50, p99',
    `${ms(hallLatency.p50)}, ${ms(hallLatency.p99)} (${hallLatency.n} winners)`,
  );
  add(
    'rate',
    'tournament settle',
    settle
      ? `${count(settle.payouts)} payouts in ${seconds(settle.ms)}: ${payoutsPerSecond.toFixed(1)}/s of ${o.rate}/s allowed (${(payoutsPerSecond / o.rate).toFixed(2)}), tables' fees served first`
      : `failed: ${m.tournament.error}`,
  );
  add(
    'rate',
    'requests to the service',
    `${count(m.requests)} (${(m.requests / wall).toFixed(1)}/s over the run); ${count(m.withdrawals.length)} withdrawal requests`,
  );
  add('rate', "429s (the emulator's count)", count(m.limited));
  const holds = m.cpu.flatMap((c) => c.holds ?? []);
  const heldRun = coveredMs(holds, m.times.started, m.times.ended);
  const drain = settle ? coveredMs(holds, settle.at, settle.at + settle.ms) : 0;
  add(
    'rate',
    "time every process waited out a 429's Retry-After: the run; the tournament's settle",
    `${seconds(heldRun)} of ${seconds(wall * 1000)}; ${settle ? `${seconds(drain)} of ${seconds(settle.ms)}` : 'none'}`,
  );
  for (const c of m.cpu)
    add(
      'cpu',
      c.name,
      `${seconds(c.cpuMs)} in ${seconds(c.ageMs)} (${((100 * c.cpuMs) / Math.max(1, c.ageMs)).toFixed(0)} % of a core)`,
    );
  add(
    'ledger (PostgreSQL)',
    'transactions committed/s',
    `${(commits / wall).toFixed(1)} (${count(commits)})`,
  );
  add(
    'ledger (PostgreSQL)',
    'rows written/s',
    `${(written / wall).toFixed(1)} (${count(written)})`,
  );
  return {
    rows,
    joinsPerSecond: rate(joins),
    feesPerSecond: rate(paid),
    tableSettleToScreen: tableLatency,
    tournamentSettleToScreen: hallLatency,
    payoutsPerSecond,
    limited: m.limited,
  };
}
