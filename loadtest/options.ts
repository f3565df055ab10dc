/**
 * The load test's options: the command line (`--processes 4 --bots 2000 --winners 1000 --rate
 * 100 --seed 1`, or `--short` for the form `npm test` runs), each flag checked, defaults in one
 * place.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';

export interface LoadOptions {
  /** Game processes (Colyseus + RedisPresence + RedisDriver + PostgresLedger). */
  processes: number;
  /** Bot players at the tables (four seats each). */
  bots: number;
  /** Entrants of the tournament, each a winner of its one settle. */
  winners: number;
  /** Requests a second the emulator allows the game's key (its burst the same). */
  rate: number;
  /**
   * The game's burst, as a share of `rate`: its margin under the service's bucket (of `rate`
   * tokens) is what a request taken on time but sent late on a loaded machine may use.
   */
  burstShare: number;
  seed: number;
  /** Share of table players who leave before their round starts (their table is refunded). */
  leaveShare: number;
  /** Table visits at once (each a WebSocket): the crowd's size at any moment. */
  concurrency: number;
  /** How long a bot that paid waits for its round to start before it leaves, ms. */
  patienceMs: number;
  /** How long, at most, the whole run may take before it gives up waiting, ms. */
  deadlineMs: number;
  /** Where progress lines go (stderr for the CLI, nowhere in the test). */
  log: (line: string) => void;
  /** On SIGINT or SIGTERM, stop the servers it started and exit (the CLI). */
  stopOnSignal?: boolean;
}

export const DEFAULTS: Omit<LoadOptions, 'log'> = {
  processes: 4,
  bots: 2_000,
  winners: 1_000,
  rate: 100,
  burstShare: 0.9,
  seed: 1,
  leaveShare: 0.1,
  concurrency: 200,
  patienceMs: 60_000,
  deadlineMs: 900_000,
};

/** The short form: two processes, 60 bots, a 50-winner settle, one SIGKILL. */
export const SHORT: Omit<LoadOptions, 'log' | 'seed'> = {
  processes: 2,
  bots: 60,
  winners: 50,
  rate: 100,
  burstShare: 0.9,
  leaveShare: 0.1,
  concurrency: 60,
  // As the default's: a queued payout that the killed process had leased waits for its lease
  // to run out before another process sends it (reconciler.leaseMs).
  patienceMs: 60_000,
  deadlineMs: 120_000,
};

const count = (min: number) => z.coerce.number().int().min(min);
const flags = z.strictObject({
  processes: count(2).optional(),
  bots: count(4).optional(),
  winners: count(2).optional(),
  rate: count(5).optional(),
  'burst-share': z.coerce.number().min(0.01).max(1).optional(),
  seed: z.coerce.number().int().optional(),
  short: z.boolean().optional(),
});

export function parseOptions(argv: string[]): Omit<LoadOptions, 'log'> {
  const { values } = parseArgs({
    args: argv,
    options: {
      processes: { type: 'string' },
      bots: { type: 'string' },
      winners: { type: 'string' },
      rate: { type: 'string' },
      'burst-share': { type: 'string' },
      seed: { type: 'string' },
      short: { type: 'boolean' },
    },
    strict: true,
  });
  const f = flags.parse(values);
  const base = f.short ? { ...SHORT, seed: DEFAULTS.seed } : DEFAULTS;
  const { 'burst-share': burstShare, ...rest } = f;
  const defined = Object.fromEntries(
    Object.entries({ ...rest, burstShare }).filter(([k, v]) => k !== 'short' && v !== undefined),
  );
  return { ...base, ...defined };
}
