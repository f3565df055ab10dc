/**
 * Model-based tests of the ledger stores: random interleavings of create, transition, update,
 * claimDue and release from several writers on one database (three SqliteLedger instances on
 * one temporary file; three PostgresLedger instances, each on its own pool, on one test
 * PostgreSQL), checked after every command against the model in ./model.ts. They show
 * that no sequence breaks TRANSITIONS, applies a move twice (of writers racing one
 * compare-and-set exactly one wins, and history has one entry per applied move) or hands a
 * running lease to a second owner, and that calls fired together act as some order of them;
 * and that the journal holds the postings of exactly the writes applied, its balances their sums
 * (conserved: every unit's class balances sum to zero). Players' tabs are among the creates: a
 * credit recorded settled (completed at its create, once per id), a withdrawal refused past the
 * tab (the `funds` guard; three writers drawing one whole tab at once, at most one through),
 * and, moved on like any payout, back in the tab when it ends expired or failed.
 *
 * Runs MODEL_RUNS sequences per store (default 40: `npm test`'s short form, 5 to 20 s per store
 * on the 2-core development machine); for a longer hunt, `npm run test:model` (500), or
 *   MODEL_RUNS=2000 npx mocha test/ledger/model.test.ts
 * A failure prints the shrunk command list with its seed, path and replayPath; replay it with
 *   MODEL_SEED=<seed> MODEL_PATH=<path> MODEL_REPLAY=<replayPath> npx mocha test/ledger/model.test.ts
 * MODEL_COMMANDS (default 50) caps the commands per sequence.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { z } from 'zod';
import { PostgresLedger, SqliteLedger } from '../../src/ledger/index.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';
import { WRITERS } from './model.js';
import { checkModel, type ModelRunOptions } from './model-commands.js';

const env = z
  .object({
    MODEL_RUNS: z.coerce.number().int().positive().default(40),
    MODEL_COMMANDS: z.coerce.number().int().positive().default(50),
    MODEL_SEED: z.coerce.number().int().optional(),
    MODEL_PATH: z
      .string()
      .regex(/^\d+(:\d+)*$/)
      .optional(),
    MODEL_REPLAY: z.string().optional(),
  })
  .parse(process.env);

const options: ModelRunOptions = {
  numRuns: env.MODEL_RUNS,
  maxCommands: env.MODEL_COMMANDS,
  seed: env.MODEL_SEED,
  path: env.MODEL_PATH,
  replayPath: env.MODEL_REPLAY,
};
/**
 * A ceiling, not a claim: a failing run also spends time shrinking, and PostgreSQL's 40 runs,
 * 19 to 30 s beside another suite, took over 50 s at a load average of 15.
 */
const timeout = 60_000 + env.MODEL_RUNS * 1_500;

describe('ledger stores against the model, several writers on one database', function () {
  this.timeout(timeout);

  describe('SqliteLedger', () => {
    let dir: string;
    let runs = 0;

    before(() => {
      // On tmpfs where there is one: every write fsyncs (synchronous=FULL), and this test is
      // about atomicity, not durability (sqlite.test.ts covers that), so a disk only adds time.
      const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
      dir = mkdtempSync(join(base, 'ledger-model-'));
    });

    after(() => rmSync(dir, { recursive: true, force: true }));

    // Both modes the store ships for a file: its worker thread (the default) and inline. They
    // share every statement (sqlite-core.ts); a run starts three threads (about 50 ms each under
    // tsx), so the thread mode runs a quarter of the sequences, unless a seed is replayed.
    for (const worker of [true, false]) {
      const runOptions =
        worker && env.MODEL_SEED === undefined
          ? { ...options, numRuns: Math.ceil(env.MODEL_RUNS / 4) }
          : options;
      it(`keeps the model with ${WRITERS} instances on one file (${worker ? 'worker thread' : 'inline'})`, async () => {
        await checkModel(async () => {
          const path = join(dir, `run-${runs++}.sqlite`);
          const writers = Array.from({ length: WRITERS }, () => new SqliteLedger({ path, worker }));
          return {
            writers,
            async close() {
              for (const writer of writers) await writer.close();
              for (const suffix of ['', '-wal', '-shm'])
                rmSync(`${path}${suffix}`, { force: true });
            },
          };
        }, runOptions);
      });
    }
  });

  describe('PostgresLedger', () => {
    let server: PostgresServer;
    let pools: pg.Pool[] = [];
    before(async function () {
      needPostgres(this);
      // Not durable: no fsync per commit, and restarts are postgres.test.ts's business.
      server = await startPostgres({ durable: false });
      pools = Array.from({ length: WRITERS }, () => server.pool({ max: 4 }));
    });

    after(async () => {
      for (const pool of pools) await pool.end();
      await server?.stop();
    });

    it(`keeps the model with ${WRITERS} instances on their own pools`, async () => {
      await checkModel(async () => {
        // One schema, emptied before each sequence (new DDL would cost more than the sequence);
        // closing a store leaves a pool it was given open.
        const writers = pools.map(
          (pool) => new PostgresLedger(pool, { schema: 'model', durability: 'none' }),
        );
        await (writers[0] as PostgresLedger).open();
        await (pools[0] as pg.Pool).query(
          'DELETE FROM model.intents; DELETE FROM model.events; DELETE FROM model.journal; DELETE FROM model.balances',
        );
        return {
          writers,
          async close() {
            for (const writer of writers) await writer.close();
          },
        };
      }, options);
    });
  });
});
