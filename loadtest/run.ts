/**
 * The load test (issue 26): several game processes on RedisPresence + RedisDriver and one
 * PostgreSQL ledger, the emulator limiting the game's key to `rate` requests a second and the
 * game's own `rateLimit` a little under it; thousands of bots at four-seat tables (entry fees,
 * a winner paid, some leaving early and refunded) and, beside them, one tournament whose
 * `winners` entrants are all paid by one settle; half-way through the tables, the last game
 * process is SIGKILLed and started again. Once every match has ended, the invariants
 * (loadtest/checks.ts) are checked against the emulator's records and the ledger, and the figures
 * (loadtest/figures.ts) are gathered. `runLoadtest` never throws for a broken invariant: the
 * result says `ok: false`.
 *
 * Cost: a few seconds of start-up, then the crowd (bound by the rate: every fee and payout is a
 * request), then the drain (a killed process's open matches time out after 10 s), then the
 * reading of the ledger and its journal.
 */
import { loadavg } from 'node:os';
import type pg from 'pg';
import { readBooks, readLedger } from '../soak/books.js';
import type { Check } from '../soak/invariants.js';
import { Random } from '../soak/random.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { eventually } from '../test/support/eventually.js';
import type { BotContext, BotStory, TableBot } from './bots.js';
import { checkLoad, crowdChecks } from './checks.js';
import { playTables, playTournament } from './crowd.js';
import { type Cpu, type LoadFigures, loadFigures, type PgStats } from './figures.js';
import { inFlight, waitingForDeadline } from './in-flight.js';
import type { LoadOptions } from './options.js';
import type { GameSettings } from './settings.js';
import { World } from './world.js';

export interface LoadResult {
  ok: boolean;
  figures: LoadFigures;
  checks: Check[];
}

export async function runLoadtest(o: LoadOptions): Promise<LoadResult> {
  const settings: GameSettings = {
    // The service's rate; a burst under the service's (docs/DEPLOY.md), by `--burst-share`.
    rateLimit: { perSecond: o.rate, burst: Math.max(1, Math.floor(o.rate * o.burstShare)) },
    feeMsat: 20_000,
    feeExpiresIn: 120,
    claimExpiresIn: 3_600,
    winners: o.winners,
    seed: o.seed,
  };
  o.log(
    `loadtest: starting ${o.processes} processes, Redis, PostgreSQL, the emulator at ${o.rate}/s`,
  );
  const world = await World.start(o.processes, o.rate, settings);
  const pgPool = world.postgres.pool({ max: 4 });
  // Interrupted (Ctrl-C): the servers it started go with it, rather than outliving it.
  const interrupted = () => void world.stop().finally(() => process.exit(130));
  if (o.stopOnSignal)
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, interrupted);
  try {
    return await run(o, world, pgPool);
  } finally {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, interrupted);
    await pgPool.end();
    await world.stop();
  }
}

async function run(o: LoadOptions, world: World, pgPool: pg.Pool): Promise<LoadResult> {
  const { emulator } = world;
  const started = Date.now();
  const load = { start: loadavg()[0] ?? 0, end: 0 };
  const cpu0 = process.cpuUsage();
  const pg0 = await pgStats(pgPool);
  const cpu: Cpu[] = [];
  const ctx: BotContext = { emulator, patienceMs: o.patienceMs, stepMs: 60_000 };
  const urls = () => world.nodes.map((n) => n.process.url);
  const random = new Random(o.seed);

  const hall = await world.nodes[0]?.process.request<{ roomId: string }>({ cmd: 'createHall' });
  const queue = await world.nodes[0]?.process.request<{ roomId: string }>({ cmd: 'createQueue' });
  if (!hall || !queue) throw new Error('no hall or queue');
  const tables: TableBot[] = Array.from({ length: o.bots }, (_, i) => {
    const r = random.next();
    const leaves = r < o.leaveShare / 2 ? 'unpaid' : r < o.leaveShare ? 'paid' : 'no';
    return { urls, first: i % o.processes, queueId: queue.roomId, playerId: `p${i}`, leaves };
  });

  // Half-way through the tables: the last process dies (SIGKILL) and is started again.
  const victim = world.nodes[world.nodes.length - 1];
  if (!victim) throw new Error('no process');
  let crash: Promise<{ killedAt: number; back: number }> | undefined;
  const halfway = () => {
    crash = (async () => {
      cpu.push(await cpuOf(victim.name, victim.process.request.bind(victim.process)));
      const killedAt = Date.now();
      o.log(`loadtest: SIGKILL ${victim.name}`);
      await world.kill(victim);
      await world.restart(victim);
      o.log(`loadtest: ${victim.name} is back after ${Date.now() - killedAt} ms`);
      return { killedAt, back: Date.now() };
    })();
  };

  o.log(`loadtest: ${o.bots} table bots and ${o.winners} tournament entrants`);
  const node0 = world.nodes[0];
  const [tableStories, tournament] = await Promise.all([
    playTables(tables, o.concurrency, ctx, halfway),
    playTournament(
      urls,
      hall.roomId,
      o.winners,
      ctx,
      () => {
        o.log('loadtest: every entrant paid; the tournament settles');
        return (
          node0?.process.request({ cmd: 'settleHall' }) ?? Promise.reject(new Error('no node0'))
        );
      },
      Math.max(60_000, (o.winners / o.rate) * 4_000),
      async () => ownersOf(pgPool, waitingForDeadline(await inFlight(pgPool), Date.now())),
    ),
  ]);
  const crashed = crash ? await crash : null;
  const crowdEnd = Date.now();
  o.log(
    `loadtest: the crowd is done after ${((crowdEnd - started) / 1000).toFixed(1)} s; draining`,
  );

  // Every match ends: rooms left empty abort theirs, the killed process's time out. What only
  // its deadline can end (a payout whose create answer was lost) is excused, and counted.
  let excused = new Set<string>();
  const drained = await eventually(
    async () => {
      const flying = await inFlight(pgPool);
      excused = waitingForDeadline(flying, Date.now());
      // Every code claimed at the service has been heard of (callback or re-read) by the ledger.
      const claimed = emulator.control
        .withdrawalRequests()
        .filter((w) => w.status === 'completed').length;
      return flying.every((i) => excused.has(i.id)) && (await completedRewards(pgPool)) === claimed;
    },
    Math.max(30_000, o.deadlineMs - (Date.now() - started)),
    'every match to end',
  ).then(
    () => null,
    (err: Error) => err.message,
  );
  const ended = Date.now();
  for (const node of world.live()) {
    cpu.push(
      await cpuOf(`${node.name}${node.incarnation > 0 ? ' (restarted)' : ''}`, (c) =>
        node.process.request(c),
      ),
    );
  }
  const own = process.cpuUsage(cpu0);
  cpu.push({
    name: 'runner (bots, emulator)',
    cpuMs: (own.user + own.system) / 1000,
    ageMs: ended - started,
  });
  const pg1 = await pgStats(pgPool);
  load.end = loadavg()[0] ?? 0;

  const stories: BotStory[] = [...tableStories, ...tournament.entrants];
  const checks = await verdict(world, pgPool, drained, excused);
  checks.push(...crowdChecks(stories, o.winners, await ownersOf(pgPool, excused)));
  return {
    ok: checks.every((c) => c.violations.length === 0),
    checks,
    figures: loadFigures({
      options: o,
      stories,
      tournament,
      withdrawals: emulator.control.withdrawalRequests(),
      staticCharges: emulator.control.staticCharges().length,
      requests: emulator.control.count('*', /.*/),
      limited: emulator.control.limited,
      cpu,
      pg: { before: pg0, after: pg1 },
      times: { started, crowdEnd, ended },
      crashed,
      load,
    }),
  };
}

/** The checks of loadtest/checks.ts, the game's own audit, and the deaths the runner did not cause. */
async function verdict(
  world: World,
  pgPool: pg.Pool,
  drained: string | null,
  excused: ReadonlySet<string>,
): Promise<Check[]> {
  const ledger = new PostgresLedger(pgPool);
  const intents = await readLedger(ledger, pgPool);
  const books = await readBooks(ledger, intents);
  const control = world.emulator.control;
  const checks = checkLoad({
    intents,
    books,
    withdrawalRequests: control.withdrawalRequests(),
    money: {
      staticCharges: control.staticCharges().map((c) => ({ ...c, amount: c.minAmount })),
      withdrawalRequests: control.withdrawalRequests(),
      payments: control.payments(),
    },
    makerOf: (url) => world.makerOf(url),
    excused,
  });
  if (drained)
    checks.unshift({ name: 'the run drained in time', checked: 1, violations: [drained] });
  const live = world.live();
  const audits = await Promise.all(
    live.map((n) =>
      n.process
        .request<string[]>({ cmd: 'audit' })
        .catch((e: Error) => [`audit failed: ${e.message}`]),
    ),
  );
  checks.push({
    name: "the game's own audit (lightning.books.audit()) found nothing",
    checked: live.length,
    violations: [...new Set(audits.flat())],
  });
  checks.push({
    name: 'no game process died but the one the run killed',
    checked: world.nodes.length,
    violations: world.nodes
      .filter((n) => !n.process.alive)
      .map((n) => `${n.name} died: ${n.process.output.slice(-2_000)}`),
  });
  return checks;
}

/** The players whose excused intents (a payout waiting for its deadline) are theirs. */
async function ownersOf(pgPool: pg.Pool, excused: ReadonlySet<string>): Promise<Set<string>> {
  const { rows } = await pgPool.query<{ player_id: string }>(
    `SELECT player_id FROM lightning.intents WHERE id = ANY($1::text[]) AND kind <> 'match'`,
    [[...excused]],
  );
  return new Set(rows.map((r) => r.player_id));
}

async function completedRewards(pgPool: pg.Pool): Promise<number> {
  const { rows } = await pgPool.query<{ n: string }>(
    `SELECT count(*) AS n FROM lightning.intents WHERE kind = 'reward' AND status = 'completed'`,
  );
  return Number(rows[0]?.n ?? 0);
}

/** The ledger database's committed transactions and rows written so far. */
async function pgStats(pgPool: pg.Pool): Promise<PgStats> {
  const { rows } = await pgPool.query<{ commits: string; rows: string }>(
    `SELECT xact_commit AS commits, tup_inserted + tup_updated + tup_deleted AS rows
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  return { commits: Number(rows[0]?.commits ?? 0), rows: Number(rows[0]?.rows ?? 0) };
}

async function cpuOf(
  name: string,
  request: (command: Record<string, unknown>) => Promise<unknown>,
): Promise<Cpu> {
  const answer = (await request({ cmd: 'cpu' })) as { cpuMs: number; ageMs: number };
  return { name, ...answer };
}
