/**
 * Issue 24: OpenTelemetry metrics through the API alone. A paid round against the emulator (a
 * fee, a match funded, settled and its payout claimed, a reward claimed, points spent, a callback
 * refused, a reconciler pass) read through the SDK's own reader, every instrument with the values
 * an operator would check; and without an SDK, nothing breaks and nothing is subscribed or read.
 */
import { channel } from 'node:diagnostics_channel';
import { Room } from '@colyseus/core';
import { metrics } from '@opentelemetry/api';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import { expect } from 'chai';
import { REQUEST_CHANNEL } from '../../src/api/diagnostics.js';
import type { Intent } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import { VERSION } from '../../src/version.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';
import { PullReader } from '../support/metrics.js';

class EmptyRoom extends Room {}

/** A store that counts the reads the gauges make. */
class CountingLedger extends SqliteLedger {
  reads = { unknowns: 0, balances: 0, held: 0, openCount: 0 };
  override unknowns(limit?: number): Promise<Intent[]> {
    this.reads.unknowns++;
    return super.unknowns(limit);
  }
  override held(limit?: number): Promise<Intent[]> {
    this.reads.held++;
    return super.held(limit);
  }
  override openCount(): Promise<number> {
    this.reads.openCount++;
    return super.openCount();
  }
  override balances(accounts?: readonly string[]) {
    this.reads.balances++;
    return super.balances(accounts);
  }
}

async function collect(reader: MetricReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).to.deep.equal([]);
  const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'colyseus-lightning');
  expect(scope?.scope.version).to.equal(VERSION);
  return new Map((scope?.metrics ?? []).map((m) => [m.descriptor.name, m]));
}

function metric(all: Map<string, MetricData>, name: string, unit: string): MetricData {
  const found = all.get(name);
  expect(found, name).to.not.equal(undefined);
  expect(found?.descriptor.unit, `${name}'s unit`).to.equal(unit);
  return found as MetricData;
}

function points(m: MetricData, attributes: Record<string, unknown> = {}): DataPoint<unknown>[] {
  return (m.dataPoints as DataPoint<unknown>[]).filter((p) =>
    Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
  );
}

/** The sum of a counter's or a gauge's points that carry `attributes`. */
function total(m: MetricData, attributes: Record<string, unknown> = {}): number {
  return points(m, attributes).reduce((s, p) => s + (p.value as number), 0);
}

/** How many values a histogram's points that carry `attributes` recorded. */
function recorded(m: MetricData, attributes: Record<string, unknown> = {}): number {
  return points(m, attributes).reduce((s, p) => s + (p.value as Histogram).count, 0);
}

describe('metrics through the OpenTelemetry API (issue 24)', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  const ledgers: SqliteLedger[] = [];
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const ledger of ledgers.splice(0)) await ledger.close();
    metrics.disable();
  });

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Game> {
    const game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false, firstCheckMs: 1 }, audit: { enabled: false }, ...options },
    );
    games.push(game);
    return game;
  }

  async function until(game: Game, id: string, status: string): Promise<void> {
    await eventually(
      async () => (await game.lightning.books.ledger.get(id))?.status === status,
      5_000,
      `${id} ${status}`,
    );
  }

  /** A paid round: a fee, a match of two, a reward, points; what each leaves is known. */
  async function playRound(game: Game): Promise<{ open: Intent }> {
    const { lightning, emulator } = game;
    const fee = await lightning.chargeEntryFee({
      playerId: 'carol',
      amountMsat: 50_000,
      description: 'fee',
    });
    emulator.control.payStaticCharge(fee.remoteId as string);
    await until(game, fee.id, 'completed');

    const match = await lightning.matches.open({ entryFeeMsat: 100_000 });
    for (const playerId of ['alice', 'bob']) {
      const entry = await lightning.matches.enter({ matchId: match.id, playerId });
      emulator.control.payStaticCharge(entry.remoteId as string);
      await until(game, entry.id, 'completed');
    }
    const settled = await lightning.matches.settle(match.id, { alice: 1 });
    const payout = settled.payouts[0]?.intentId as string;
    const [claim] = await lightning.books.claims('alice');
    emulator.control.claimWithdrawal(
      (await lightning.books.ledger.get(claim?.intentId as string))?.remoteId as string,
    );
    await until(game, payout, 'completed');

    const reward = await lightning.reward({
      playerId: 'dave',
      amountMsat: 21_000,
      description: 'gg',
    });
    emulator.control.claimWithdrawal(reward.remoteId as string);
    await until(game, reward.id, 'completed');

    const userId = emulator.control.createUser({ email: 'e@example.com', referenceId: 'erin' });
    emulator.control.setPoints(userId, 'USDZ', 500);
    await lightning.spendPoints({ playerId: 'erin', userId, amount: 40 });

    // A callback naming no intent of ours: refused.
    const refused = await fetch(game.callbackUrl('A'.repeat(32)), { method: 'POST', body: '{}' });
    expect(refused.status).to.equal(404);

    // A reward left open, for the reconciler to re-read once it is due.
    const open = await lightning.reward({
      playerId: 'frank',
      amountMsat: 30_000,
      description: 'later',
    });
    await eventually(() => lightning.operator.reconciler.runOnce(), 5_000, 'a due re-read');
    return { open };
  }

  it('counts a paid round, times it, and reads the books once per collection', async () => {
    const reader = new PullReader();
    const provider = new MeterProvider({ readers: [reader] });
    const ledger = new CountingLedger({ path: ':memory:' });
    ledgers.push(ledger);
    const game = await start({ meterProvider: provider, ledger });
    await playRound(game);
    await game.lightning.books.audit(); // the wallet's first reading: cover is known from here
    const balances = await game.lightning.books.balances();

    ledger.reads = { unknowns: 0, balances: 0, held: 0, openCount: 0 };
    const all = await collect(reader);
    // One read of each per collection, however many gauges: two balance reads, one of unknowns,
    // one of held payouts, one of the open count.
    expect(ledger.reads).to.deep.equal({ unknowns: 1, balances: 2, held: 1, openCount: 1 });

    const moneyIn = metric(all, 'lightning.money.in', 'msat');
    expect(total(moneyIn, { kind: 'entryFee' })).to.equal(250_000);
    const moneyOut = metric(all, 'lightning.money.out', 'msat');
    expect(total(moneyOut, { kind: 'reward' })).to.equal(200_000 + 21_000);
    expect(total(moneyOut, { kind: 'payment' })).to.equal(0);
    expect(total(metric(all, 'lightning.points.spent', '{point}'), { currency: 'USDZ' })).to.equal(
      40,
    );

    const moves = metric(all, 'lightning.intent.moves', '{move}');
    expect(total(moves, { kind: 'entryFee', status: 'completed' })).to.equal(3);
    expect(total(moves, { kind: 'reward', status: 'completed' })).to.equal(2);
    expect(total(moves, { kind: 'reward', status: 'pending' })).to.equal(3);
    expect(total(moves, { kind: 'spend', status: 'completed' })).to.equal(1);
    expect(total(moves, { kind: 'match', status: 'completed' })).to.equal(1);

    const callbacks = metric(all, 'lightning.callbacks', '{callback}');
    expect(total(callbacks, { outcome: 'verified' })).to.be.at.least(5);
    expect(total(callbacks, { outcome: 'refused', 'http.response.status_code': 404 })).to.equal(1);
    // Each fee and each claim was moved by its callback: one latency each.
    const latency = metric(all, 'lightning.callback.duration', 's');
    expect(recorded(latency, { kind: 'entryFee', status: 'completed' })).to.equal(3);
    expect(recorded(latency, { kind: 'reward', status: 'completed' })).to.equal(2);

    expect(
      total(metric(all, 'lightning.reconciler.checks', '{check}'), { outcome: 'ok' }),
    ).to.be.at.least(1);

    const service = metric(all, 'lightning.service.request.duration', 's');
    expect(recorded(service, { operation: 'staticCharges.create', outcome: 'ok' })).to.equal(3);
    expect(recorded(service, { operation: 'withdrawalRequests.create' })).to.equal(3);
    expect(
      recorded(service, { operation: 'wallet.get', 'http.response.status_code': 200 }),
    ).to.be.at.least(1);

    expect(total(metric(all, 'lightning.intents.unknown', '{intent}'))).to.equal(0);
    expect(total(metric(all, 'lightning.payouts.held', '{payout}'))).to.equal(0);
    // Open: frank's reward, left for the reconciler.
    expect(total(metric(all, 'lightning.intents.open', '{intent}'))).to.equal(1);
    expect(total(metric(all, 'lightning.payouts.paused', '{state}'))).to.equal(0);
    expect(total(metric(all, 'lightning.money.escrow', 'msat'))).to.equal(0);
    expect(total(metric(all, 'lightning.money.owed', 'msat'))).to.equal(30_000);
    expect(total(metric(all, 'lightning.money.in_flight', 'msat'))).to.equal(0);
    expect(total(metric(all, 'lightning.money.cover', 'msat'))).to.equal(
      Number(balances.coverMsat),
    );
  });

  it('shows held payouts and the open count in its gauges', async () => {
    const reader = new PullReader();
    const game = await start({
      meterProvider: new MeterProvider({ readers: [reader] }),
      approvals: { aboveMsat: 50_000 },
    });
    for (const amountMsat of [60_000, 70_000, 10_000]) {
      await game.lightning.reward({ playerId: 'alice', amountMsat, description: 'x' });
    }
    let all = await collect(reader);
    expect(total(metric(all, 'lightning.payouts.held', '{payout}'))).to.equal(2);
    expect(total(metric(all, 'lightning.intents.open', '{intent}'))).to.equal(3);
    const [first] = await game.lightning.operator.held();
    await game.lightning.operator.reject(first?.id as string, 'ann', 'too much');
    all = await collect(reader);
    expect(total(metric(all, 'lightning.payouts.held', '{payout}'))).to.equal(1);
    expect(total(metric(all, 'lightning.intents.open', '{intent}'))).to.equal(2);
  });

  it('shows a pause and an unknown in its gauges', async () => {
    const reader = new PullReader();
    const game = await start({
      meterProvider: new MeterProvider({ readers: [reader] }),
      breaker: { failures: 1, players: 1 },
    });
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 503,
    });
    await game.lightning
      .reward({ playerId: 'alice', amountMsat: 21_000, description: 'x' })
      .catch(() => {});
    expect(game.lightning.operator.paused).to.not.equal(null);
    const all = await collect(reader);
    expect(total(metric(all, 'lightning.payouts.paused', '{state}'))).to.equal(1);
    expect(total(metric(all, 'lightning.intents.unknown', '{intent}'))).to.equal(1);
    expect(total(metric(all, 'lightning.intent.moves', '{move}'), { status: 'unknown' })).to.equal(
      1,
    );
    // No wallet reading yet: no cover to show, rather than a made-up one.
    expect(all.get('lightning.money.cover')?.dataPoints ?? []).to.deep.equal([]);
  });

  it('uses the global MeterProvider by default, as the server starts', async () => {
    const reader = new PullReader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    const game = await start();
    const reward = await game.lightning.reward({
      playerId: 'a',
      amountMsat: 21_000,
      description: 'x',
    });
    game.emulator.control.claimWithdrawal(reward.remoteId as string);
    await until(game, reward.id, 'completed');
    const all = await collect(reader);
    expect(total(metric(all, 'lightning.money.out', 'msat'), { kind: 'reward' })).to.equal(21_000);
  });

  it('without an SDK: the round plays, nothing is subscribed, the books are not read', async () => {
    const ledger = new CountingLedger({ path: ':memory:' });
    ledgers.push(ledger);
    const game = await start({ ledger });
    expect(channel(REQUEST_CHANNEL).hasSubscribers).to.equal(false);
    const { open } = await playRound(game);
    expect((await game.lightning.books.ledger.get(open.id))?.status).to.equal('pending');
    expect(channel(REQUEST_CHANNEL).hasSubscribers).to.equal(false);
    // Nothing but the game's own calls read the unknowns (the audit and alerts are off).
    expect(ledger.reads.unknowns).to.equal(0);
  });
});
