/**
 * The payout queue (issue 26): a settle with many winners records every payout `queued` at once
 * and returns; the reconcilers of the game's processes send them in their turn, at the game's
 * rate, exactly once each (one withdrawal request per winner at the emulator), and the match
 * settles once the last is made, telling its progress on the way. Two processes sharing a PostgreSQL
 * ledger drain one queue between them, never a payout twice.
 */
import { expect } from 'chai';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import type { MatchView } from '../../src/server/match/view.js';
import type { LightningOptions } from '../../src/server/options.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { openPaidMatch } from '../support/paid-match.js';
import { freshSchema } from '../support/postgres.js';
import { postgresWorld } from '../support/postgres-world.js';
import { overLimit } from '../support/rate-check.js';

const SERVICE_LIMIT = { perSecond: 100, burst: 100 };
const GAME_LIMIT = { perSecond: 100, burst: 60 };
const REQUESTS = '/v0/withdrawal-requests';

describe('the payout queue: a settle with many winners drains at the rate, once each', function () {
  this.timeout(30_000);
  const world = postgresWorld();

  /** A process of the game on the shared ledger (a schema), known to the service by its port. */
  async function gameProcess(
    schema: string,
    port: number,
    options: Partial<LightningOptions> = {},
  ): Promise<Lightning> {
    const ledger = new PostgresLedger(world.pg.url, { schema, durability: 'none' });
    world.closing.push(ledger);
    const lightning = createLightning({
      apiKey: world.emulator.apiKey,
      baseUrl: world.emulator.url,
      publicUrl: `http://127.0.0.1:${port}`,
      logger: quietLogger,
      ledger,
      ...options,
    } as LightningOptions);
    world.closing.push(lightning);
    await lightning.ready();
    return lightning;
  }

  /** The winners' withdrawal requests at the world.emulator, by player. */
  function requestsByPlayer(): Map<string, string[]> {
    const byPlayer = new Map<string, string[]>();
    for (const wr of world.emulator.control.withdrawalRequests()) {
      const player = wr.internalId ?? '';
      byPlayer.set(player, [...(byPlayer.get(player) ?? []), wr.callbackUrl ?? '']);
    }
    return byPlayer;
  }

  it('120 winners (twice the burst): settle returns with every payout queued, each sent once within the rate, then settled', async () => {
    const schema = freshSchema();
    const setup = await gameProcess(schema, 2001, { reconciler: { enabled: false } });
    const paid = await openPaidMatch(setup, world.emulator, 120, 'big');
    const settler = await gameProcess(schema, 2002, {
      rateLimit: GAME_LIMIT,
      reconciler: { intervalMs: 250 },
    });
    const progress: MatchView[] = [];
    const settled: MatchView[] = [];
    settler.on('match.progress', (view) => progress.push(view));
    settler.on('match.settled', (view) => settled.push(view));
    world.emulator.control.setRateLimit(SERVICE_LIMIT);
    const from = Date.now();

    const decided = await settler.matches.settle(paid.matchId, paid.shares);
    expect(decided.status).to.equal('settling');
    expect(decided.total).to.equal(120);
    expect(decided.payouts).to.have.length(120);
    // Each recorded at once as queued (its history starts there), sent later in its turn: how
    // far the queue got by the time settle returned is a bench row, not an outcome.
    for (const payout of decided.payouts) {
      const intent = await settler.books.ledger.get(payout.intentId);
      expect(intent?.history[0]?.to, payout.intentId).to.equal('queued');
    }

    await eventually(
      () => settled.length === 1,
      20_000,
      () => {
        return `the match settles (${progress.at(-1)?.made ?? 0} of 120 made)`;
      },
    );
    const view = await settler.matches.get(paid.matchId);
    expect(view).to.include({ status: 'settled', made: 120, total: 120 });
    expect(view.payouts.every((p) => p.status === 'pending')).to.equal(true);
    // Progress, as often as it is told on the way (a bench row says how often), never backwards.
    const made = progress.map((p) => p.made);
    expect(made.every((n) => n <= 120)).to.equal(true);
    expect([...made].sort((a, b) => a - b)).to.deep.equal(made);
    // Exactly one request per winner, none refused, the service's limit kept.
    const byPlayer = requestsByPlayer();
    expect(byPlayer.size).to.equal(120);
    expect([...byPlayer.values()].every((urls) => urls.length === 1)).to.equal(true);
    expect(world.emulator.control.limited).to.equal(0);
    const times = world.emulator.control.requests
      .filter((r) => r.at >= from && r.method === 'POST' && r.path === REQUESTS)
      .map((r) => r.at);
    expect(times).to.have.length(120);
    expect(overLimit(times, SERVICE_LIMIT)).to.equal(null);
    expect(
      await settler.books.ledger.balances([`escrow:${paid.matchId}`, 'inflight']),
    ).to.deep.equal([
      { account: `escrow:${paid.matchId}`, unit: 'msats', balance: '0' },
      { account: 'inflight', unit: 'msats', balance: '0' },
    ]);
  });

  it('two processes on one PostgreSQL drain one queue: every payout sent once, by one of them', async () => {
    const schema = freshSchema();
    const setup = await gameProcess(schema, 2003, { reconciler: { enabled: false } });
    const paid = await openPaidMatch(setup, world.emulator, 80, 'shared');
    const settled: string[] = [];
    const processes = [];
    for (const port of [2004, 2005]) {
      const p = await gameProcess(schema, port, {
        rateLimit: { perSecond: 60, burst: 10 },
        reconciler: { intervalMs: 100 },
      });
      p.on('match.settled', (view) => settled.push(view.id));
      processes.push(p);
    }
    world.emulator.control.setRateLimit(SERVICE_LIMIT);
    await processes[0]?.matches.settle(paid.matchId, paid.shares);
    await eventually(
      async () => (await setup.matches.get(paid.matchId)).status === 'settled',
      20_000,
      'the match settles',
    );
    // The event follows the ledger's move (its process reads the match's view first).
    await eventually(() => settled.length > 0, 5_000, 'match.settled in a process');
    expect(settled, 'settled once, by one process').to.deep.equal([paid.matchId]);
    const byPlayer = requestsByPlayer();
    expect(byPlayer.size).to.equal(80);
    const urls = [...byPlayer.values()];
    expect(
      urls.every((u) => u.length === 1),
      'one withdrawal request per payout',
    ).to.equal(true);
    // Both processes took turns (a payout's callback URL names the process that sent it).
    const senders = new Set(urls.map((u) => new URL(u[0] as string).port));
    expect([...senders].sort()).to.deep.equal(['2004', '2005']);
    expect(world.emulator.control.limited).to.equal(0);
  });
});
