/**
 * Benchmark 7, fair shares of the game's rate (issue 30): how long an honest 2-player match
 * takes to be funded once both players paid (their fees made, both paid half a second later,
 * from the two payments at the emulator to the `match.funded` event: the callbacks, their
 * proving re-reads, the ledger moves), at
 * `rateLimit` 20/s against an emulator limited to 20/s:
 * - quiet: nothing else calls the service;
 * - flood: one player with two guest accounts spends points as fast as the rate lets them
 *   (8 spends always in flight): every token is taken, all of them as players' actions;
 * - queue: 1,000 rewards queued by `rewardMany` drain at the rate (the reconciler's claims);
 * - both at once.
 * Each is RUNS honest matches one after the other, on its own emulator and game (one process,
 * in-memory SQLite, its callback routes on node:http through `lightning.attach`); the figure is
 * the median, the ratio is against quiet's median, measured in the same run. Goal: at most 2.
 */
import { createServer, type Server } from 'node:http';
import { type Emulator, startEmulator } from '../src/emulator/index.js';
import { createLightning, type Lightning } from '../src/lightning.js';
import { freePort } from '../test/support/ports.js';
import { median } from './support/stats.js';
import { type Row, ratio } from './support/table.js';

const SERVICE_LIMIT = { perSecond: 20, burst: 20 };
const GAME_LIMIT = { perSecond: 20, burst: 18 };
const RUNS = 9;
const PAY_AFTER_MS = 500;
const FLOODERS = ['flood-a', 'flood-b'];
const IN_FLIGHT_EACH = 4;
const QUEUED = 1_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

type Condition = 'quiet' | 'flood' | 'queue' | 'both';

interface Game {
  emulator: Emulator;
  lightning: Lightning;
  http: Server;
}

export async function benchFair(): Promise<Row[]> {
  const times = new Map<Condition, number[]>();
  for (const condition of ['quiet', 'flood', 'queue', 'both'] as const) {
    times.set(condition, await measure(condition));
  }
  const base = median(times.get('quiet') ?? []);
  const rows: Row[] = [];
  for (const [condition, ms] of times) {
    const m = median(ms);
    const r = m / base;
    rows.push({
      bench: '7 fair',
      subject: `an honest 2-player match funded after both paid: ${describe(condition)}`,
      value: `${m.toFixed(0)} ms`,
      limit: condition === 'quiet' ? undefined : `quiet ${base.toFixed(0)} ms`,
      ratio: condition === 'quiet' ? undefined : ratio(r),
      goal: condition === 'quiet' ? undefined : { text: '<= 2', met: r <= 2 },
      detail: `median of ${ms.length}; max ${Math.max(...ms).toFixed(0)} ms; rate 20/s`,
    });
  }
  return rows;
}

function describe(condition: Condition): string {
  switch (condition) {
    case 'quiet':
      return 'nothing else';
    case 'flood':
      return `one player floods (2 accounts, ${FLOODERS.length * IN_FLIGHT_EACH} spends in flight)`;
    case 'queue':
      return `${QUEUED.toLocaleString('en-US')} queued payouts draining`;
    case 'both':
      return 'the flood and the queue at once';
  }
}

async function measure(condition: Condition): Promise<number[]> {
  const game = await startGame();
  const stops: (() => Promise<void>)[] = [];
  try {
    if (condition === 'flood' || condition === 'both') stops.push(await flood(game));
    if (condition === 'queue' || condition === 'both') await queue(game);
    // One match first, not counted: every condition measured warm.
    await honestMatch(game, `${condition}-warm`);
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) ms.push(await honestMatch(game, `${condition}-${i}`));
    return ms;
  } finally {
    for (const stop of stops) await stop();
    await game.lightning.close();
    await new Promise((resolve) => game.http.close(resolve));
    await game.emulator.close();
  }
}

async function startGame(): Promise<Game> {
  const emulator = await startEmulator({ logger: quiet, rateLimit: SERVICE_LIMIT });
  emulator.control.setWallet(1_000_000_000_000);
  const port = await freePort();
  const http = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  const lightning = createLightning({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    publicUrl: `http://127.0.0.1:${port}`,
    logger: quiet,
    ledger: ':memory:',
    rateLimit: GAME_LIMIT,
    limits: { maxOpenPerGame: 100_000 },
  });
  await lightning.ready();
  lightning.attach(http);
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return { emulator, lightning, http };
}

/** One player, two accounts, spending a point at a time in IN_FLIGHT_EACH loops each. */
async function flood(game: Game): Promise<() => Promise<void>> {
  let stopped = false;
  const loops: Promise<void>[] = [];
  for (const playerId of FLOODERS) {
    const userId = game.emulator.control.createUser({ email: `${playerId}@example.com` });
    game.emulator.control.setPoints(userId, 'USDZ', 1_000_000);
    for (let i = 0; i < IN_FLIGHT_EACH; i++) {
      loops.push(
        (async () => {
          while (!stopped) {
            await game.lightning
              .spendPoints({ playerId, roomId: 'flood', userId, amount: 1 })
              .catch(() => {});
          }
        })(),
      );
    }
  }
  // Until the rate is all taken: the bucket's burst spent, the flood waiting for each token.
  await until(() => game.emulator.control.count('POST', '/api/v1/widget/users/deplete') >= 40);
  return async () => {
    stopped = true;
    await Promise.all(loops);
  };
}

/** QUEUED rewards queued at once; returns once the queue drains at the rate. */
async function queue(game: Game): Promise<void> {
  const rewards = Array.from({ length: QUEUED }, (_, i) => ({
    playerId: `winner-${i}`,
    amountMsat: 1_000,
    description: 'prize',
  }));
  const { refused } = await game.lightning.rewardMany(rewards);
  if (refused.length > 0) throw new Error(`rewardMany refused ${refused.length}`);
  await until(() => game.emulator.control.count('POST', '/v0/withdrawal-requests') >= 30);
}

/** From both payments to `match.funded`, in ms. */
async function honestMatch(game: Game, name: string): Promise<number> {
  const { lightning, emulator } = game;
  const players = [`${name}-a`, `${name}-b`];
  const match = await lightning.matches.open({ entryFeeMsat: 10_000, description: name, players });
  const fees = await Promise.all(
    players.map((playerId) => lightning.matches.enter({ matchId: match.id, playerId })),
  );
  const funded = new Promise<void>((resolve) => {
    const stop = lightning.on('match.funded', (view) => {
      if (view.id !== match.id) return;
      stop();
      resolve();
    });
  });
  // A person pays a while after the code is shown (seconds, scanning it): half a second here.
  await new Promise((resolve) => setTimeout(resolve, PAY_AFTER_MS));
  const from = performance.now();
  for (const fee of fees) emulator.control.payStaticCharge(fee.remoteId as string);
  await funded;
  return performance.now() - from;
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the load never started');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
