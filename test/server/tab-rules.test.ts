/**
 * Issue 34, the earning rules (docs/MATCHES.md), through the face against the emulator: a ceiling
 * per credit, a player's earning caps per hour and per day, a minimum withdrawal, the whole tab
 * by default, a player's daily withdrawal cap, the approvals hold and operator blocks; each
 * refusal a typed error with nothing recorded or sent, counted in `lightning.refused`; a
 * withdrawal recorded before its process died, finished by another and never sent twice; and
 * two processes on one PostgreSQL ledger whose racing credits and withdrawals never pass a cap.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Room } from '@colyseus/core';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { expect } from 'chai';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import {
  BudgetExceededError,
  ConfigurationError,
  CreditTooLargeError,
  EarningCapError,
  InsufficientFundsError,
  PlayerBlockedError,
  WithdrawalCapError,
  WithdrawalTooSmallError,
} from '../../src/errors.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { resolveOptions } from '../../src/server/options.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';
import { PullReader, pointsOf } from '../support/metrics.js';
import { nodeArgs } from '../support/node-child.js';
import { freshSchema } from '../support/postgres.js';
import { postgresWorld } from '../support/postgres-world.js';

class EmptyRoom extends Room {}

const HOUR = 3_600_000;
const FIXTURE = fileURLToPath(new URL('./fixtures/tab-process.ts', import.meta.url));

describe('player tabs: the earning rules (issue 34)', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  const owned: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const thing of owned.splice(0).reverse()) await thing.close();
  });

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Game> {
    const game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false }, ...options },
    );
    games.push(game);
    return game;
  }

  const tabOf = (game: Game, playerId: string) => game.lightning.tabs.balance(playerId);
  const posts = (game: Game) => game.emulator.control.count('POST', '/v0/withdrawal-requests');
  const entriesOf = async (game: Game, playerId: string) =>
    (await game.lightning.books.journal({ playerId })).entries.length;
  const credit = (game: Game, playerId: string, amountMsat: number, key?: string) =>
    game.lightning.tabs.credit({
      playerId,
      amountMsat,
      description: 'round won',
      ...(key ? { key } : {}),
    });
  const withdraw = (game: Game, playerId: string, amountMsat?: number) =>
    game.lightning.tabs.withdraw({
      playerId,
      description: 'cash out',
      ...(amountMsat === undefined ? {} : { amountMsat }),
    });
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (e: unknown) => e,
    );

  it('has safe defaults, one options group, and refuses nonsense at start', () => {
    const { tabs } = resolveOptions({});
    expect(tabs).to.deep.equal({
      maxCreditMsat: 100_000,
      earnPerHourMsat: 1_000_000,
      earnPerDayMsat: 5_000_000,
      minWithdrawalMsat: 10_000,
      withdrawPerDayMsat: 5_000_000,
    });
    for (const tabs of [{ maxCreditMsat: 0 }, { minWithdrawalMsat: -1 }, { earnPerHour: 5 }]) {
      expect(() => resolveOptions({ tabs } as never)).to.throw(ConfigurationError, /tabs/);
    }
  });

  it('refuses a credit above tabs.maxCreditMsat, recording nothing, and counts each refusal by reason', async () => {
    const reader = new PullReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    owned.push({ close: () => meterProvider.shutdown() });
    const game = await start({ meterProvider, tabs: { maxCreditMsat: 20_000 } });
    const err = await rejection(credit(game, 'alice', 20_001));
    expect(err).to.be.instanceOf(CreditTooLargeError);
    expect(err).to.include({ code: 'LN_CREDIT_TOO_LARGE', amountMsat: '20001', maxMsat: '20000' });
    expect(await entriesOf(game, 'alice')).to.equal(0);
    await credit(game, 'alice', 20_000);
    // A withdrawal under the minimum and one past the tab: two more refusals, two reasons.
    expect(await rejection(withdraw(game, 'alice', 9_999))).to.be.instanceOf(
      WithdrawalTooSmallError,
    );
    expect(await rejection(withdraw(game, 'alice', 20_001))).to.be.instanceOf(
      InsufficientFundsError,
    );
    const counts = Object.fromEntries(
      (await pointsOf(reader, 'lightning.refused')).map((p) => [
        `${p.attributes.kind}:${p.attributes.reason}`,
        p.value,
      ]),
    );
    expect(counts).to.deep.equal({
      'credit:LN_CREDIT_TOO_LARGE': 1,
      'withdrawal:LN_WITHDRAWAL_TOO_SMALL': 1,
      'withdrawal:LN_INSUFFICIENT_FUNDS': 1,
    });
    // A bad argument is the game's bug, not a rule's refusal: in neither the metric nor the
    // operator's refusals, which hold the same three.
    expect(await rejection(withdraw(game, 'alice', -5))).to.include({
      code: 'LN_INVALID_ARGUMENT',
    });
    const refused = await game.lightning.operator.refusals();
    expect(refused.counts.map((c) => `${c.call}:${c.code}:${c.count}`).sort()).to.deep.equal([
      'tabs.credit:LN_CREDIT_TOO_LARGE:1',
      'tabs.withdraw:LN_INSUFFICIENT_FUNDS:1',
      'tabs.withdraw:LN_WITHDRAWAL_TOO_SMALL:1',
    ]);
    expect((await pointsOf(reader, 'lightning.refused')).map((p) => p.value)).to.deep.equal([
      1, 1, 1,
    ]);
  });

  it("caps a player's earnings per hour and per day: EarningCapError, nothing recorded", async () => {
    const clock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock });
    owned.push(emulator);
    const tabs = { earnPerHourMsat: 30_000, earnPerDayMsat: 50_000 };
    const game = await start({ emulator, clock, tabs });
    await credit(game, 'alice', 20_000, 'round-1');
    await credit(game, 'alice', 10_000, 'round-2');
    const err = await rejection(credit(game, 'alice', 1));
    expect(err).to.be.instanceOf(EarningCapError);
    expect(err).to.include({
      code: 'LN_EARNING_CAP',
      retryable: true,
      limitMsat: '30000',
      earnedMsat: '30000',
      windowMs: HOUR,
    });
    expect((err as Error).message).to.match(/tabs\.earnPerHourMsat/);
    // A repeated key at the cap is the credit it repeats, not a refusal.
    const again = await credit(game, 'alice', 20_000, 'round-1');
    expect(again.status).to.equal('completed');
    // Another player earns on their own cap.
    await credit(game, 'bob', 30_000);
    expect(await tabOf(game, 'alice')).to.equal(30_000);
    expect(await entriesOf(game, 'alice')).to.equal(2);
    // An hour on, the day's cap is the line: 50,000.
    clock.advance(HOUR + 1);
    await credit(game, 'alice', 20_000);
    const day = await rejection(credit(game, 'alice', 1));
    expect(day).to.include({ earnedMsat: '50000', windowMs: 24 * HOUR });
    expect((day as Error).message).to.match(/tabs\.earnPerDayMsat/);
    clock.advance(24 * HOUR);
    await credit(game, 'alice', 1);
    expect(await tabOf(game, 'alice')).to.equal(50_001);
  });

  it('withdraws the whole tab without amountMsat; under tabs.minWithdrawalMsat it is refused, nothing sent', async () => {
    const game = await start({ tabs: { minWithdrawalMsat: 15_000 } });
    const before = posts(game);
    await credit(game, 'alice', 14_000);
    const small = await rejection(withdraw(game, 'alice'));
    expect(small).to.be.instanceOf(WithdrawalTooSmallError);
    expect(small).to.include({ code: 'LN_WITHDRAWAL_TOO_SMALL', amountMsat: '14000' });
    // An empty tab too: nothing to withdraw is under any minimum.
    expect(await rejection(withdraw(game, 'nobody'))).to.be.instanceOf(WithdrawalTooSmallError);
    expect(posts(game)).to.equal(before);
    expect(await entriesOf(game, 'alice')).to.equal(1);
    await credit(game, 'alice', 3_000);
    const all = await withdraw(game, 'alice');
    expect(all).to.include({ status: 'pending', amount: '17000' });
    expect(posts(game)).to.equal(before + 1);
    expect(await tabOf(game, 'alice')).to.equal(0);
  });

  it("caps a player's withdrawals per day (WithdrawalCapError); budgets.perPlayer applies, maxRewardMsat does not", async () => {
    const game = await start({
      tabs: { withdrawPerDayMsat: 40_000 },
      budgets: { maxRewardMsat: 10_000, perPlayer: { msat: 45_000, windowMs: 24 * HOUR } },
    });
    await credit(game, 'alice', 100_000);
    // One withdrawal gathers many credits: above the reward ceiling, and let through.
    await withdraw(game, 'alice', 30_000);
    const before = posts(game);
    const err = await rejection(withdraw(game, 'alice', 10_001));
    expect(err).to.be.instanceOf(WithdrawalCapError);
    expect(err).to.include({ code: 'LN_WITHDRAWAL_CAP', withdrawnMsat: '30000' });
    expect(posts(game)).to.equal(before);
    expect(await tabOf(game, 'alice')).to.equal(70_000);
    // The player's payout budget counts withdrawals and rewards together.
    await game.lightning.reward({ playerId: 'alice', amountMsat: 10_000, description: 'prize' });
    const budget = await rejection(withdraw(game, 'alice', 10_000));
    expect(budget).to.be.instanceOf(BudgetExceededError);
    expect(budget).to.include({ scope: 'player', reservedMsat: '40000' });
    expect(await tabOf(game, 'alice')).to.equal(70_000);
  });

  it('holds a withdrawal above approvals.aboveMsat: approve sends it once, reject returns it to the tab', async () => {
    const game = await start({ approvals: { aboveMsat: 20_000 } });
    await credit(game, 'alice', 80_000);
    const before = posts(game);
    const held = await withdraw(game, 'alice', 30_000);
    expect(held.status).to.equal('held');
    expect(posts(game)).to.equal(before);
    expect(await tabOf(game, 'alice')).to.equal(50_000);
    const sent = await game.lightning.operator.approve(held.id, 'ann');
    expect(sent.status).to.equal('pending');
    expect(sent.code).to.be.a('string');
    expect(posts(game)).to.equal(before + 1);
    const other = await withdraw(game, 'alice', 25_000);
    expect(other.status).to.equal('held');
    expect(await tabOf(game, 'alice')).to.equal(25_000);
    const rejected = await game.lightning.operator.reject(other.id, 'ann', 'farming');
    expect(rejected.status).to.equal('failed');
    expect(await tabOf(game, 'alice')).to.equal(50_000);
    expect(posts(game)).to.equal(before + 1);
    // Under the line: sent at once.
    expect((await withdraw(game, 'alice', 20_000)).status).to.equal('pending');
  });

  it('a blocked player earns nothing and cannot withdraw; unblocked, both work again', async () => {
    const game = await start();
    await credit(game, 'alice', 30_000);
    await game.lightning.operator.block('alice', 'ann', 'bot');
    const before = posts(game);
    expect(await rejection(credit(game, 'alice', 10_000))).to.be.instanceOf(PlayerBlockedError);
    expect(await rejection(withdraw(game, 'alice'))).to.be.instanceOf(PlayerBlockedError);
    expect(posts(game)).to.equal(before);
    expect(await tabOf(game, 'alice')).to.equal(30_000);
    expect(await entriesOf(game, 'alice')).to.equal(1);
    await game.lightning.operator.unblock('alice', 'ann');
    await credit(game, 'alice', 10_000);
    expect((await withdraw(game, 'alice')).amount).to.equal('40000');
  });

  it('finishes or returns the withdrawals of a process killed mid-call, never sending one twice', async () => {
    // The killed process's callbacks find nobody: quietly, as the re-reads recover them.
    const emulator = await startEmulator({ logger: quietLogger });
    owned.push(emulator);
    const dir = mkdtempSync(join(tmpdir(), 'tab-crash-'));
    owned.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const ledger = join(dir, 'ledger.sqlite');
    const config = JSON.stringify({ apiKey: emulator.apiKey, baseUrl: emulator.url, ledger });
    const child = spawn(process.execPath, [...(await nodeArgs(FIXTURE)), config], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    owned.push({ close: async () => child.kill('SIGKILL') });
    const reports: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      reports.push(JSON.parse(line) as Record<string, unknown>);
    });
    const answered = await eventually(
      () => reports.find((r) => r.event === 'answered'),
      15_000,
      'the first withdrawal answered in the child',
    );
    // The service makes the second code and holds its answer back; the process is killed.
    emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-hang',
      times: 1,
    });
    child.stdin?.write('withdraw\n');
    await eventually(() => emulator.control.withdrawalRequests().length === 2, 10_000, 'sent');
    child.kill('SIGKILL');
    await exited;
    // While no process runs, alice claims the code she was shown.
    emulator.control.claimWithdrawal(answered.remoteId as string);

    const clock = new ManualClock(Date.now());
    const game = await start({ emulator, ledger, clock });
    const [lost] = await game.lightning.books.ledger
      .openByPlayer('alice')
      .then((open) => open.filter((i) => i.status === 'creating'));
    expect(lost?.amount).to.equal('20000');
    expect(await tabOf(game, 'alice')).to.equal(10_000);
    const statusOf = async (id: string) => (await game.lightning.books.ledger.get(id))?.status;
    const run = () => game.lightning.operator.reconciler.runOnce();
    await run();
    expect(await statusOf(answered.id as string)).to.equal('completed');
    clock.advance(30_000);
    await run();
    expect(await statusOf(lost?.id ?? '')).to.equal('unknown');
    // Nobody ever held its code: at its deadline (and the margin) it ends, back in the tab.
    clock.advance(600_000 + 60_000);
    await run();
    await run();
    expect(await statusOf(lost?.id ?? '')).to.equal('expired');
    expect(await tabOf(game, 'alice')).to.equal(30_000);
    expect(emulator.control.count('POST', '/v0/withdrawal-requests')).to.equal(2);
    const sum = (await game.lightning.books.ledger.balances())
      .filter((b) => b.unit === 'msats')
      .reduce((total, b) => total + BigInt(b.balance), 0n);
    expect(sum).to.equal(0n);
  });
});

describe('player tabs: the earning rules across processes on one PostgreSQL ledger', function () {
  this.timeout(30_000);
  const world = postgresWorld();

  function processOn(schema: string): Lightning {
    const ledger = new PostgresLedger(world.pg.url, { schema, durability: 'none' });
    world.closing.push(ledger);
    const lightning = createLightning({
      apiKey: world.emulator.apiKey,
      baseUrl: world.emulator.url,
      publicUrl: 'http://127.0.0.1:2567',
      logger: quietLogger,
      ledger,
      reconciler: { enabled: false },
      tabs: { earnPerHourMsat: 100_000, withdrawPerDayMsat: 50_000 },
    });
    world.closing.push(lightning);
    return lightning;
  }

  it('never lets credits or withdrawals racing from two processes pass a cap', async () => {
    const schema = freshSchema();
    const both = [processOn(schema), processOn(schema)];
    const at = (i: number) => both[i % 2] as Lightning;
    const credits = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        at(i).tabs.credit({ playerId: 'alice', amountMsat: 30_000, description: 'won' }),
      ),
    );
    expect(credits.filter((r) => r.status === 'fulfilled')).to.have.length(3);
    for (const r of credits) {
      if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(EarningCapError);
    }
    expect(await at(1).tabs.balance('alice')).to.equal(90_000);
    const sent = () => world.emulator.control.count('POST', '/v0/withdrawal-requests');
    const withdrawals = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        at(i).tabs.withdraw({ playerId: 'alice', amountMsat: 20_000, description: 'out' }),
      ),
    );
    expect(withdrawals.filter((r) => r.status === 'fulfilled')).to.have.length(2);
    for (const r of withdrawals) {
      if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(WithdrawalCapError);
    }
    expect(sent()).to.equal(2);
    expect(await at(0).tabs.balance('alice')).to.equal(50_000);
  });
});
