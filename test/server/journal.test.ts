/**
 * Issue 21: every msat in a journal, balances from it, and a live audit — through the public
 * face, against a real emulator. Each flow's entries are what an accountant would write, the
 * balances add up to what the service's wallet did, and each audit finding is one a broken rule
 * really produces, reported once.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { type Emulator, ManualClock, startEmulator } from '../../src/emulator/index.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { JournalEntry, Posting } from '../../src/ledger/journal.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { AuditFinding } from '../../src/server/findings.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

const quiet = { enabled: false } as const;

describe('the journal, balances and the live audit (issue 21)', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  const owned: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const thing of owned.splice(0)) await thing.close();
  });

  async function emulatorFor(options: Parameters<typeof startEmulator>[0] = {}): Promise<Emulator> {
    const emulator = await startEmulator(options);
    owned.push(emulator);
    return emulator;
  }

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Game> {
    const game = await startGame({ empty: EmptyRoom }, { reconciler: quiet, ...options });
    games.push(game);
    return game;
  }

  async function settled(game: Game, id: string, status = 'completed'): Promise<Intent> {
    await eventually(
      async () => (await game.lightning.books.ledger.get(id))?.status === status,
      5_000,
      `${id} ${status}`,
    );
    return (await game.lightning.books.ledger.get(id)) as Intent;
  }

  async function entriesOf(
    game: Game,
    query: Parameters<Game['lightning']['books']['journal']>[0],
  ) {
    const all: JournalEntry[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await game.lightning.books.journal({ ...query, ...(after ? { after } : {}) });
      all.push(...page.entries);
      if (page.next === null) return all;
      after = page.next;
    }
  }

  const moves = (entries: JournalEntry[]) =>
    entries.map((e) => `${e.debit} -> ${e.credit} ${e.amount}`);

  it('journals a reward from the house to the player and out of the wallet when claimed', async () => {
    const game = await start();
    const before = game.emulator.control.wallet();
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 21_000,
      description: 'first blood',
    });
    let balances = await game.lightning.books.balances();
    expect(balances).to.include({ claimableMsat: '21000', owedToPlayersMsat: '21000' });
    expect(balances.house.rewardsMsat).to.equal('21000');
    game.emulator.control.claimWithdrawal(reward.remoteId as string);
    await settled(game, reward.id);
    const entries = await entriesOf(game, { intentId: reward.id });
    expect(moves(entries)).to.deep.equal([
      'house:rewards -> inflight 21000',
      'inflight -> claimable:alice 21000',
      'claimable:alice -> wallet 21000',
    ]);
    expect(entries.map((e) => e.id)).to.deep.equal([
      `${reward.id}:created`,
      `${reward.id}:pending`,
      `${reward.id}:completed`,
    ]);
    expect(entries.every((e) => e.playerId === 'alice' && e.unit === 'msats')).to.equal(true);
    balances = await game.lightning.books.balances();
    expect(balances).to.include({ claimableMsat: '0', inFlightMsat: '0', walletNetMsat: '-21000' });
    expect(balances.house).to.include({ rewardsMsat: '21000', netMsat: '-21000' });
    expect(game.emulator.control.wallet()).to.equal(before - 21_000);
    const report = await game.lightning.books.audit();
    expect(report.findings).to.deep.equal([]);
  });

  it('journals a match: fees into escrow, the rake to the house, the payout out of the pot; an ended escrow is zero', async () => {
    const game = await start();
    const match = await game.lightning.matches.open({ entryFeeMsat: 50_000, rake: 0.1 });
    for (const playerId of ['alice', 'bob']) {
      const fee = await game.lightning.matches.enter({ matchId: match.id, playerId });
      game.emulator.control.payStaticCharge(fee.remoteId as string);
      await settled(game, fee.id);
    }
    expect((await game.lightning.books.balances()).escrowMsat).to.equal('100000');
    const view = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(view.status).to.equal('settled');
    const entries = await entriesOf(game, { matchId: match.id });
    expect(moves(entries)).to.have.members([
      `wallet -> escrow:${match.id} 50000`,
      `wallet -> escrow:${match.id} 50000`,
      `escrow:${match.id} -> house:rake 10000`,
      `escrow:${match.id} -> inflight 90000`,
      'inflight -> claimable:alice 90000',
    ]);
    const balances = await game.lightning.books.balances();
    expect(balances).to.include({ escrowMsat: '0', claimableMsat: '90000' });
    expect(balances.house).to.include({ rakeMsat: '10000', netMsat: '10000' });
    expect(balances.walletNetMsat).to.equal('100000');
    // Only alice's entries, under her id.
    const alices = await entriesOf(game, { playerId: 'alice' });
    expect(alices.every((e) => e.playerId === 'alice')).to.equal(true);
    expect(moves(alices)).to.include('inflight -> claimable:alice 90000');
  });

  it('journals points in their own currency, never with msats', async () => {
    const game = await start();
    const userId = game.emulator.control.createUser({ email: 'p@example.com', referenceId: 'p' });
    game.emulator.control.setPoints(userId, 'USDZ', 500);
    const spent = await game.lightning.spendPoints({ playerId: 'p', userId, amount: 300 });
    expect(spent.status).to.equal('completed');
    const entries = await entriesOf(game, { intentId: spent.id });
    expect(entries.map((e) => [e.debit, e.credit, e.amount, e.unit])).to.deep.equal([
      ['points:p', 'inflight', '300', 'USDZ'],
      ['inflight', 'house:points', '300', 'USDZ'],
    ]);
    const balances = await game.lightning.books.balances();
    expect(balances.points).to.deep.equal({ USDZ: { spent: '300', inFlight: '0' } });
    expect(balances).to.include({ inFlightMsat: '0', walletNetMsat: '0' });
  });

  it('refuses a bad journal query with a typed error, and pages', async () => {
    const game = await start();
    for (let i = 0; i < 3; i++) {
      await game.lightning.reward({ playerId: 'carol', amountMsat: 10_000, description: 'r' });
    }
    const first = await game.lightning.books.journal({ playerId: 'carol', limit: 4 });
    expect(first.entries).to.have.length(4);
    expect(first.next).to.be.a('string');
    const rest = await game.lightning.books.journal({
      playerId: 'carol',
      limit: 4,
      after: first.next as string,
    });
    expect(rest.entries).to.have.length(2);
    expect(rest.next).to.equal(null);
    for (const bad of [{ limit: 0 }, { limit: 1001 }, { after: 'x' }, { nope: 1 }, 'carol']) {
      const err = await game.lightning.books.journal(bad as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(bad)).to.have.property('code', 'LN_INVALID_ARGUMENT');
    }
  });

  it('finds a winner left unpaid once the service refused every attempt, and reports it once', async () => {
    const errors: string[] = [];
    const game = await start({
      audit: { settleMs: 1 },
      logger: { info: () => {}, warn: () => {}, error: (m) => errors.push(m) },
    });
    const match = await game.lightning.matches.open({ entryFeeMsat: 20_000 });
    const fee = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    game.emulator.control.payStaticCharge(fee.remoteId as string);
    await settled(game, fee.id);
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'status',
      status: 400,
      times: 3,
    });
    const seen: AuditFinding[][] = [];
    game.lightning.on('audit', (findings) => seen.push(findings));
    let view = await game.lightning.matches.settle(match.id, { alice: 1 });
    await eventually(
      async () => {
        view = await game.lightning.matches.get(match.id);
        return view.status === 'settled';
      },
      5_000,
      'the match ended',
    );
    expect(view.payouts.map((p) => p.status)).to.deep.equal(['failed', 'failed', 'failed']);
    // The money is owed to the player by hand, and the pot is empty.
    const balances = await game.lightning.books.balances();
    expect(balances).to.include({ escrowMsat: '0', toPayByHandMsat: '20000' });
    await eventually(
      async () => (await game.lightning.books.audit()).findings.length > 0,
      5_000,
      'the audit finds it',
    );
    const again = await game.lightning.books.audit();
    expect(again.findings.map((f) => f.type)).to.deep.equal([]);
    const found = seen.flat();
    expect(found.map((f) => f.type)).to.deep.equal(['winner-unpaid']);
    expect(found[0]).to.include({ matchId: match.id, playerId: 'alice', status: 'failed' });
    expect(errors.filter((m) => m.startsWith('audit:'))).to.have.length(1);
  });

  it('finds money that left the wallet with no record, and a wallet that no longer covers what is owed, each once', async () => {
    const game = await start({ audit: { walletSettleMs: 0 } });
    await game.lightning.reward({ playerId: 'alice', amountMsat: 50_000, description: 'prize' });
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    // Someone spends from the project's wallet outside the game: the journal never saw it.
    game.emulator.control.setWallet(30_000);
    const report = await game.lightning.books.audit();
    expect(report.reported.map((f) => f.type).sort()).to.deep.equal([
      'cover-short',
      'wallet-mismatch',
    ]);
    const short = report.reported.find((f) => f.type === 'cover-short');
    expect(short).to.include({ coverMsat: '-20000' });
    const mismatch = report.reported.find((f) => f.type === 'wallet-mismatch');
    expect(mismatch).to.include({ walletMsat: '30000' });
    const again = await game.lightning.books.audit();
    expect(again.reported).to.deep.equal([]);
    expect(again.findings.map((f) => f.type)).to.deep.equal(['cover-short']);
  });

  it('finds 1,500 sats taken while 2,000 sats of codes wait unclaimed, once the shortfall outlasts walletSettleMs', async () => {
    const clock = new ManualClock(Date.now());
    const emulator = await emulatorFor({ clock });
    const game = await start({ emulator, clock, audit: { walletSettleMs: 60_000 } });
    for (const playerId of ['alice', 'bob']) {
      await game.lightning.reward({ playerId, amountMsat: 1_000_000, description: 'prize' });
    }
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    emulator.control.setWallet(emulator.control.wallet() - 1_500_000);
    // A code claimed a moment ago whose callback is late looks the same, for a while.
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    clock.advance(30_000);
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    clock.advance(31_000);
    const report = await game.lightning.books.audit();
    expect(report.reported.map((f) => f.type)).to.deep.equal(['wallet-mismatch']);
    expect(report.reported[0]).to.include({ differenceMsat: '-1500000' });
    expect((await game.lightning.books.audit()).reported).to.deep.equal([]);
  });

  it('does not report a code claimed while its callback was lost, once the journal catches up within walletSettleMs', async () => {
    const clock = new ManualClock(Date.now());
    const emulator = await emulatorFor({ clock, callbacks: { drop: true } });
    const game = await start({ emulator, clock, audit: { walletSettleMs: 60_000 } });
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 2_000_000,
      description: 'prize',
    });
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    emulator.control.claimWithdrawal(reward.remoteId as string);
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    clock.advance(40_000);
    expect((await game.lightning.books.refresh(reward.id))?.status).to.equal('completed');
    clock.advance(40_000);
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
  });

  it('finds 4,000 sats taken while a 5,000-sat payout is held: a held payout never left the wallet', async () => {
    const game = await start({
      approvals: { aboveMsat: 1_000_000 },
      audit: { walletSettleMs: 0 },
    });
    const held = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 5_000_000,
      description: 'jackpot',
    });
    expect(held.status).to.equal('held');
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    game.emulator.control.setWallet(game.emulator.control.wallet() - 4_000_000);
    const report = await game.lightning.books.audit();
    expect(report.reported.map((f) => f.type)).to.include('wallet-mismatch');
    expect(report.reported.find((f) => f.type === 'wallet-mismatch')).to.include({
      differenceMsat: '-4000000',
    });
  });

  it('finds an unknown left past its deadline when nothing reconciles it', async () => {
    const clock = new ManualClock(Date.now());
    // The service's expiry callback would prove the request expired: it is lost here.
    const emulator = await emulatorFor({ clock, callbacks: { drop: true } });
    const game = await start({
      emulator,
      clock,
      audit: { settleMs: 1_000 },
      api: { timeoutMs: 300, maxRetries: 0 },
    });
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    const lost = await game.lightning
      .reward({ playerId: 'bob', amountMsat: 10_000, description: 'lost', expiresIn: 60 })
      .catch(() => null);
    expect(lost).to.equal(null);
    const [unknown] = await game.lightning.operator.unknowns();
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
    clock.advance(60_000 + 60_000 + 2_000);
    const report = await game.lightning.books.audit();
    expect(report.reported.map((f) => [f.type, 'intentId' in f ? f.intentId : null])).to.deep.equal(
      [['unknown-overdue', unknown?.id]],
    );
  });

  it('finds a match that ended with money left in its escrow (a store that lost a posting)', async () => {
    const ledger = new LossyLedger();
    owned.push(ledger);
    const game = await start({ ledger, audit: { settleMs: 1 } });
    const match = await game.lightning.matches.open({ entryFeeMsat: 30_000 });
    const fee = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    game.emulator.control.payStaticCharge(fee.remoteId as string);
    await settled(game, fee.id);
    ledger.loseCreatedPostings = true;
    await game.lightning.matches.settle(match.id, { alice: 1 });
    const findings = await eventually(
      async () => {
        const report = await game.lightning.books.audit();
        return report.findings.length > 0 && report.findings;
      },
      5_000,
      'the audit finds it',
    );
    expect(findings.map((f) => f.type)).to.deep.equal(['escrow-left']);
    expect(findings.find((f) => f.type === 'escrow-left')).to.include({
      matchId: match.id,
      escrowMsat: '30000',
    });
  });

  it('reports a finding once across two processes on one ledger', async () => {
    const emulator = await emulatorFor();
    const ledger = new SqliteLedger({ path: ':memory:' });
    owned.push(ledger);
    const a = await start({ emulator, ledger, audit: { walletSettleMs: 0 } });
    const b = await start({ emulator, ledger, audit: { walletSettleMs: 0 } });
    await a.lightning.reward({ playerId: 'dan', amountMsat: 40_000, description: 'r' });
    await a.lightning.books.audit();
    await b.lightning.books.audit();
    emulator.control.setWallet(1_000);
    const [ra, rb] = [await a.lightning.books.audit(), await b.lightning.books.audit()];
    expect(ra.findings.map((f) => f.type)).to.include('cover-short');
    expect(rb.findings.map((f) => f.type)).to.include('cover-short');
    expect([...ra.reported, ...rb.reported].filter((f) => f.type === 'cover-short')).to.have.length(
      1,
    );
  });
});

/** A store that loses every `created` posting while asked to: money moved with no record. */
class LossyLedger extends SqliteLedger {
  loseCreatedPostings = false;

  constructor() {
    super({ path: ':memory:' });
  }

  override create(...args: Parameters<SqliteLedger['create']>): ReturnType<SqliteLedger['create']> {
    const [intent, now, guards, postings] = args;
    const kept: readonly Posting[] | undefined = this.loseCreatedPostings
      ? postings?.filter((p) => p.tag !== 'created')
      : postings;
    return super.create(intent, now, guards, kept);
  }
}
