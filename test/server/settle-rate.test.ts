/**
 * The short form of `npm run bench:rate` (issue 26): matches of 100 paid players settled
 * against an emulator limited to 50 requests a second, by one process and by two sharing a
 * PostgreSQL ledger. Every payout is made, none meets a 429, the breaker never trips. (How fast, as a
 * ratio of the allowed rate, is the benchmark's to say: bench/rate.ts.)
 */
import { expect } from 'chai';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import type { LightningOptions } from '../../src/server/options.js';
import { quietLogger } from '../support/game.js';
import { openPaidMatch, type PaidMatch } from '../support/paid-match.js';
import { freshSchema } from '../support/postgres.js';
import { postgresWorld } from '../support/postgres-world.js';
import { overLimit } from '../support/rate-check.js';

const SERVICE_LIMIT = { perSecond: 50, burst: 50 };
// Well under the service's burst: a request that reaches it up to 400 ms late (a busy machine)
// is still within its limit. (The benchmark keeps 45: 100 ms.)
const GAME_LIMIT = { perSecond: 50, burst: 30 };
const REQUESTS = '/v0/withdrawal-requests';

describe('a settle of 100 winners at the service’s rate', function () {
  this.timeout(30_000);
  const world = postgresWorld();

  /** A process of the game on the shared ledger (a schema), with or without the game's rate. */
  async function gameProcess(schema: string, rateLimit?: typeof GAME_LIMIT): Promise<Lightning> {
    const ledger = new PostgresLedger(world.pg.url, { schema, durability: 'none' });
    world.closing.push(ledger);
    const lightning = createLightning({
      apiKey: world.emulator.apiKey,
      baseUrl: world.emulator.url,
      publicUrl: 'http://127.0.0.1:2567',
      logger: quietLogger,
      reconciler: { enabled: false },
      ledger,
      breaker: { failures: 2, players: 2 },
      ...(rateLimit ? { rateLimit } : {}),
    } as LightningOptions);
    world.closing.push(lightning);
    await lightning.ready();
    return lightning;
  }

  async function settleAtRate(processes: number, winnersEach: number): Promise<void> {
    const schema = freshSchema();
    const setup = await gameProcess(schema);
    const matches: PaidMatch[] = [];
    for (let i = 0; i < processes; i++) {
      matches.push(await openPaidMatch(setup, world.emulator, winnersEach, `m${i}`));
    }
    const settlers = [];
    for (let i = 0; i < processes; i++) settlers.push(await gameProcess(schema, GAME_LIMIT));
    world.emulator.control.setRateLimit(SERVICE_LIMIT);
    const from = Date.now();
    const views = await Promise.all(
      settlers.map((s, i) =>
        s.matches.settle(matches[i]?.matchId as string, matches[i]?.shares ?? {}),
      ),
    );
    for (const view of views) {
      expect(view.status).to.equal('settled');
      expect(view.payouts).to.have.length(winnersEach);
      expect(view.payouts.every((p) => p.status === 'pending')).to.equal(true);
    }
    expect(world.emulator.control.limited).to.equal(0);
    for (const s of settlers) expect(s.operator.paused).to.equal(null);
    const times = world.emulator.control.requests
      .filter((r) => r.at >= from && r.method === 'POST' && r.path === REQUESTS)
      .map((r) => r.at);
    expect(times).to.have.length(processes * winnersEach);
    expect(overLimit(times, SERVICE_LIMIT)).to.equal(null);
  }

  it('one process: every payout made, no 429, no pause', async () => {
    await settleAtRate(1, 100);
  });

  it('two processes on one PostgreSQL, settling at once: together within the limit', async () => {
    await settleAtRate(2, 50);
  });
});
