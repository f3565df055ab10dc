/**
 * Matches at the server level (issue 14), against a real emulator: the pot is what the ledger
 * saw paid, payouts never exceed pot minus rake, settle and abort are idempotent and exclusive,
 * every refund and payout is made exactly once, under duplicated and dropped callbacks, a
 * crash (a process that stops mid-match) and a lost create answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { InvalidArgumentError, MatchClosedError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import { splitPot } from '../../src/server/match/terms.js';
import type { MatchView } from '../../src/server/match/view.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.js';

class EmptyRoom extends Room {}

const quiet = { enabled: false } as const;

describe('matches: pots in escrow, paid out or refunded exactly once', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  const proxies: HoldingProxy[] = [];
  const emulators: Emulator[] = [];
  let dir: string | undefined;

  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const proxy of proxies.splice(0)) await proxy.close();
    for (const emulator of emulators.splice(0)) await emulator.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Game> {
    const game = await startGame({ empty: EmptyRoom }, { reconciler: quiet, ...options });
    games.push(game);
    return game;
  }

  function record(game: Game) {
    const seen = {
      funded: [] as MatchView[],
      settled: [] as MatchView[],
      aborted: [] as MatchView[],
      refunds: [] as [Intent, string][],
    };
    game.lightning.on('match.funded', (m) => seen.funded.push(m));
    game.lightning.on('match.settled', (m) => seen.settled.push(m));
    game.lightning.on('match.aborted', (m) => seen.aborted.push(m));
    game.lightning.on('match.refund', (r, why) => seen.refunds.push([r, why]));
    return seen;
  }

  /** The player pays their fee at the emulator and the callback settles it. */
  async function pay(game: Game, fee: Intent): Promise<void> {
    expect(game.emulator.control.payStaticCharge(fee.remoteId as string).status).to.equal('OK');
    await eventually(
      async () => (await game.lightning.books.ledger.get(fee.id))?.status === 'completed',
      5_000,
      `the fee of ${fee.playerId} paid`,
    );
  }

  /** The withdrawal requests the emulator holds for a player, oldest first. */
  function requestsOf(game: Game, playerId: string) {
    return game.emulator.control.withdrawalRequests().filter((w) => w.internalId === playerId);
  }

  it('settles a funded match once: the pot minus the rake to the winner, to the msat', async () => {
    const game = await start();
    const seen = record(game);
    const match = await game.lightning.matches.open({
      roomId: null,
      entryFeeMsat: 100_000,
      rake: 0.1,
      players: ['alice', 'bob', 'carol'],
    });
    expect(match).to.include({ status: 'open', potMsat: '0', funded: false });
    const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    const bob = await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' });
    const carol = await game.lightning.matches.enter({ matchId: match.id, playerId: 'carol' });
    // Entering again returns the open fee: one charge each.
    expect(
      (await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' })).id,
    ).to.equal(alice.id);
    expect(game.emulator.control.count('POST', '/v0/static-charges')).to.equal(3);
    await pay(game, alice);
    await pay(game, bob);
    expect(seen.funded).to.deep.equal([]);
    await pay(game, carol);
    await eventually(() => seen.funded.length === 1, 5_000, 'the funded event');
    expect(
      (await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' })).id,
    ).to.equal(bob.id);

    const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settled).to.include({ status: 'settled', potMsat: '300000', rakeMsat: '30000' });
    expect(settled.payouts).to.have.length(1);
    expect(settled.payouts[0]).to.include({ playerId: 'alice', amountMsat: '270000' });
    expect(seen.settled.map((m) => m.id)).to.deep.equal([match.id]);
    // Settling again changes nothing; aborting a settled match is refused.
    const again = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(again.payouts).to.deep.equal(settled.payouts);
    const refused = await game.lightning.matches.abort(match.id, 'late').catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(MatchClosedError);
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(requestsOf(game, 'alice')[0]?.amount).to.equal('270000');
    expect(seen.settled).to.have.length(1);

    // The winner finds the claim in the lobby, claims it once.
    const [claim] = await game.lightning.books.claims('alice');
    expect(claim).to.include({ amountMsat: '270000', matchId: match.id });
    expect(await game.lightning.books.claims('bob')).to.deep.equal([]);
    game.emulator.control.claimWithdrawal(requestsOf(game, 'alice')[0]?.id as string);
    await eventually(
      async () =>
        (await game.lightning.books.ledger.get(claim?.intentId as string))?.status === 'completed',
      5_000,
      'the payout claimed',
    );
    // Entering a settled match is refused, nothing charged.
    const late = await game.lightning.matches
      .enter({ matchId: match.id, playerId: 'dave' })
      .catch((e: unknown) => e);
    expect(late).to.be.instanceOf(MatchClosedError);
    expect(game.emulator.control.count('POST', '/v0/static-charges')).to.equal(3);
  });

  it('settles once when every callback is dropped: the reconciler reads what happened', async () => {
    const clock = new ManualClock(Date.now());
    const game = await start({ clock });
    game.emulator.control.callbacks.set({ drop: true });
    const seen = record(game);
    const match = await game.lightning.matches.open({ entryFeeMsat: 60_000, seats: 1 });
    const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    expect(game.emulator.control.payStaticCharge(alice.remoteId as string).status).to.equal('OK');
    clock.advance(15_000);
    await game.lightning.operator.reconciler.runOnce();
    expect((await game.lightning.books.ledger.get(alice.id))?.status).to.equal('completed');
    await eventually(() => seen.funded.length === 1, 5_000, 'funded without a callback');
    const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
    const payout = settled.payouts[0];
    game.emulator.control.claimWithdrawal(requestsOf(game, 'alice')[0]?.id as string);
    clock.advance(15_000);
    await game.lightning.operator.reconciler.runOnce();
    expect((await game.lightning.books.ledger.get(payout?.intentId as string))?.status).to.equal(
      'completed',
    );
    await game.lightning.matches.settle(match.id, { alice: 1 });
    clock.advance(600_000);
    await game.lightning.operator.reconciler.runOnce();
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(seen.settled).to.have.length(1);
  });

  it('pays a winner straight to the Lightning address they entered with, once', async () => {
    const game = await start();
    const match = await game.lightning.matches.open({ entryFeeMsat: 50_000, rake: 0.1 });
    const alice = await game.lightning.matches.enter({
      matchId: match.id,
      playerId: 'alice',
      lnAddress: 'alice@emulator.test',
    });
    await pay(game, alice);
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' }));
    const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settled.status).to.equal('settled');
    expect(settled.payouts).to.have.length(1);
    expect(settled.payouts[0]).to.include({ kind: 'payment', amountMsat: '90000' });
    expect(game.emulator.control.lnAddressPayments('alice@emulator.test')).to.have.length(1);
    expect(requestsOf(game, 'alice')).to.deep.equal([]);
    await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(game.emulator.control.lnAddressPayments('alice@emulator.test')).to.have.length(1);
    // A bad address is refused before anything is recorded.
    const bad = await game.lightning.matches
      .enter({ matchId: match.id, playerId: 'carol', lnAddress: 'not an address' })
      .catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(InvalidArgumentError);
  });

  it('an address payout whose answer was lost is never sent again: unknown for an operator, the match ends', async () => {
    const clock = new ManualClock(Date.now());
    const game = await start({ clock, api: { timeoutMs: 300, maxRetries: 0 } });
    const match = await game.lightning.matches.open({ entryFeeMsat: 40_000 });
    await pay(
      game,
      await game.lightning.matches.enter({
        matchId: match.id,
        playerId: 'alice',
        lnAddress: 'alice@emulator.test',
      }),
    );
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/ln-address/send-payment',
      mode: 'process-then-destroy',
      times: 1,
    });
    const settling = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settling.status).to.equal('settling');
    clock.advance(20_000);
    await game.lightning.operator.reconciler.runOnce();
    clock.advance(20_000);
    await game.lightning.operator.reconciler.runOnce();
    const ended = await game.lightning.matches.get(match.id);
    expect(ended.status).to.equal('settled');
    expect(ended.payouts.map((p) => [p.kind, p.status])).to.deep.equal([['payment', 'unknown']]);
    clock.advance(3 * 24 * 3600_000);
    await game.lightning.operator.reconciler.runOnce();
    expect(game.emulator.control.count('POST', '/v0/ln-address/send-payment')).to.equal(1);
    expect(requestsOf(game, 'alice')).to.deep.equal([]);
    expect((await game.lightning.operator.unknowns()).map((i) => i.kind)).to.deep.equal([
      'payment',
    ]);
  });

  it('splits by shares rounding down, the dust to the house: payouts never exceed pot minus rake', async () => {
    const game = await start();
    const match = await game.lightning.matches.open({ entryFeeMsat: 33_333, rake: 0.07 });
    for (const playerId of ['a', 'b', 'c']) {
      await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId }));
    }
    const settled = await game.lightning.matches.settle(match.id, { a: 2, b: 1, c: 1 });
    // pot 99,999; rake floor(6,999.93) = 6,999; 93,000 shared 2:1:1 = 46,500 / 23,250 / 23,250.
    expect(settled.potMsat).to.equal('99999');
    const paid = settled.payouts.map((p) => BigInt(p.amountMsat));
    const total = paid.reduce((s, x) => s + x, 0n);
    expect(total + BigInt(settled.rakeMsat as string)).to.equal(99_999n);
    expect(settled.payouts.map((p) => p.amountMsat)).to.deep.equal(['46500', '23250', '23250']);
    expect(settled.rakeMsat).to.equal('6999');
  });

  it('refuses to pay a winner who never paid in, and bad shares', async () => {
    const game = await start();
    const match = await game.lightning.matches.open({ entryFeeMsat: 20_000 });
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' }));
    await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' });
    const bad: Record<string, number>[] = [
      { bob: 1 },
      { mallory: 1 },
      {},
      { alice: -1 },
      { alice: Number.NaN },
    ];
    for (const shares of bad) {
      const err = await game.lightning.matches.settle(match.id, shares).catch((e: unknown) => e);
      expect(err, JSON.stringify(shares)).to.be.instanceOf(InvalidArgumentError);
    }
    expect((await game.lightning.matches.get(match.id)).status).to.equal('open');
    const missing = await game.lightning.matches
      .settle('nope', { alice: 1 })
      .catch((e: unknown) => e);
    expect(missing).to.be.instanceOf(InvalidArgumentError);
  });

  it('an abort refunds each paid player once and closes every open fee, under duplicate callbacks', async () => {
    const game = await start();
    game.emulator.control.callbacks.set({ duplicate: 3 });
    const seen = record(game);
    const match = await game.lightning.matches.open({ entryFeeMsat: 50_000 });
    const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    const bob = await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' });
    await pay(game, alice);
    const aborted = await game.lightning.matches.abort(match.id, 'not enough players');
    expect(aborted).to.include({ status: 'aborted', reason: 'not enough players' });
    expect(aborted.refunds.map((r) => [r.playerId, r.amountMsat])).to.deep.equal([
      ['alice', '50000'],
    ]);
    expect(seen.refunds.map(([r, why]) => [r.playerId, why])).to.deep.equal([
      ['alice', 'match aborted: not enough players'],
    ]);
    expect(seen.aborted).to.have.length(1);
    // Bob's charge is closed at the service: his payment is refused, nothing to refund.
    expect((await game.lightning.books.ledger.get(bob.id))?.status).to.equal('expired');
    expect(game.emulator.control.payStaticCharge(bob.remoteId as string).status).to.equal('ERROR');
    // Aborting again is the same abort; nothing more is paid.
    await game.lightning.matches.abort(match.id, 'again');
    await game.emulator.control.callbacks.idle();
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(requestsOf(game, 'bob')).to.have.length(0);
    expect(seen.refunds).to.have.length(1);
  });

  it('a fee paid after its deadline, into an ended match, is refunded once', async () => {
    const game = await start();
    const seen = record(game);
    const match = await game.lightning.matches.open({ entryFeeMsat: 40_000 });
    const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    await game.lightning.matches.abort(match.id, 'nobody came');
    expect((await game.lightning.books.ledger.get(alice.id))?.status).to.equal('expired');
    // The charge is reopened at the service (as a wallet that paid a cached invoice would),
    // and alice pays it: the callback tells of money for a fee that had ended.
    await game.lightning.service.api.staticCharges.update(alice.remoteId as string, {
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
    });
    expect(game.emulator.control.payStaticCharge(alice.remoteId as string).status).to.equal('OK');
    await eventually(() => seen.refunds.length === 1, 5_000, 'the refund of the late fee');
    expect(seen.refunds[0]?.[1]).to.equal('paid after its deadline');
    expect(seen.refunds[0]?.[0]).to.include({ playerId: 'alice', amount: '40000' });
    // Another callback for the same payment refunds nothing more.
    await game.lightning.books.refresh(alice.id);
    await game.emulator.control.callbacks.idle();
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(seen.refunds).to.have.length(1);
  });

  it('a winner whose address payment fails after the match settled is paid again, as a claim code, once', async () => {
    // The emulator keeps payments processing until its own clock moves: the payout is
    // accepted (pending), the match settles, and only then does the payment fail.
    const emuClock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock: emuClock, paymentDelayMs: 2_000 });
    try {
      const game = await start({ emulator });
      const match = await game.lightning.matches.open({ entryFeeMsat: 50_000 });
      const address = 'alice@emulator.test';
      await pay(
        game,
        await game.lightning.matches.enter({
          matchId: match.id,
          playerId: 'alice',
          lnAddress: address,
        }),
      );
      game.emulator.control.setLnAddress(address, { failPayments: true });
      const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
      expect(settled.status).to.equal('settled');
      expect(settled.payouts.map((p) => [p.kind, p.status])).to.deep.equal([
        ['payment', 'pending'],
      ]);
      emuClock.advance(2_000); // the payment fails; its callback tells the game
      // Its reward is in the match's view once its create answered (the request exists before).
      await eventually(
        async () =>
          (await game.lightning.matches.get(match.id)).payouts.some(
            (p) => p.kind === 'reward' && p.status === 'pending',
          ),
        5_000,
        'a claim code issued in place of the failed payment',
      );
      const after = await game.lightning.matches.get(match.id);
      expect(after.payouts.map((p) => [p.kind, p.status, p.amountMsat])).to.deep.equal([
        ['payment', 'failed', '50000'],
        ['reward', 'pending', '50000'],
      ]);
      // The failed payment heard again (a refresh, a duplicate callback) pays nothing more.
      const failed = after.payouts[0]?.intentId as string;
      await game.lightning.books.refresh(failed);
      await game.emulator.control.callbacks.idle();
      expect(requestsOf(game, 'alice')).to.have.length(1);
      expect(game.emulator.control.lnAddressPayments(address)).to.have.length(1);
    } finally {
      for (const game of games.splice(0).reverse()) await game.stop();
      await emulator.close();
    }
  });

  it('a late fee whose refund the service refused at first is refunded again, once', async () => {
    const game = await start();
    const seen = record(game);
    const match = await game.lightning.matches.open({ entryFeeMsat: 40_000 });
    const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    await game.lightning.matches.abort(match.id, 'nobody came');
    await game.lightning.service.api.staticCharges.update(alice.remoteId as string, {
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
    });
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 400,
      times: 1,
    });
    expect(game.emulator.control.payStaticCharge(alice.remoteId as string).status).to.equal('OK');
    // The second attempt's answer recorded (the request at the service comes a moment before).
    const refunds = await eventually(
      async () => {
        const group = await game.lightning.books.ledger.byGroup(match.id);
        const made = group.filter((i) => i.meta.matchRole === 'refund');
        return made.at(-1)?.status === 'pending' ? made : null;
      },
      5_000,
      'the refund of the late fee, issued again',
    );
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(refunds.map((r) => [r.status, r.amount])).to.deep.equal([
      ['failed', '40000'],
      ['pending', '40000'],
    ]);
    expect(seen.refunds.map(([r]) => r.status)).to.include('pending');
    await game.lightning.books.refresh(alice.id);
    await game.emulator.control.callbacks.idle();
    expect(requestsOf(game, 'alice')).to.have.length(1);
  });

  it('a match its process left open is refunded by another after the timeout, once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'match-'));
    const ledger = join(dir, 'ledger.sqlite');
    const clock = new ManualClock(Date.now());
    const first = await start({ ledger, clock });
    const match = await first.lightning.matches.open({ entryFeeMsat: 30_000, timeoutMs: 60_000 });
    await pay(first, await first.lightning.matches.enter({ matchId: match.id, playerId: 'alice' }));
    await pay(first, await first.lightning.matches.enter({ matchId: match.id, playerId: 'bob' }));
    // The first process stops mid-match: nobody settles, aborts or keeps it alive.
    await first.lightning.close();

    const second = await start({ ledger, clock, emulator: first.emulator });
    const seen = record(second);
    await second.lightning.operator.reconciler.runOnce();
    expect((await second.lightning.matches.get(match.id)).status).to.equal('open');
    clock.advance(60_000);
    await second.lightning.operator.reconciler.runOnce();
    const ended = await second.lightning.matches.get(match.id);
    expect(ended.status).to.equal('aborted');
    expect(ended.reason).to.match(/timed out/);
    expect(ended.refunds.map((r) => r.playerId).sort()).to.deep.equal(['alice', 'bob']);
    expect(seen.aborted.map((m) => m.id)).to.deep.equal([match.id]);
    // More passes, and a third process, pay nothing more.
    clock.advance(600_000);
    await second.lightning.operator.reconciler.runOnce();
    const third = await start({ ledger, clock, emulator: first.emulator });
    await third.lightning.operator.reconciler.runOnce();
    expect(requestsOf(second, 'alice')).to.have.length(1);
    expect(requestsOf(second, 'bob')).to.have.length(1);
  });

  it('refuses a fee or a payout below the least claim code the service makes (10 sats): neither could ever be paid back', async () => {
    // Found by the soak: a 5-sat fee was taken, then its refund refused three times by the
    // service ("The minimum withdrawal amount is 10 sats") and left to be paid by hand.
    const game = await start();
    const small = await game.lightning.matches
      .open({ entryFeeMsat: 5_000 })
      .catch((err: unknown) => err);
    expect(small).to.be.instanceOf(InvalidArgumentError);
    expect((small as InvalidArgumentError).message).to.match(/10,000 msats/);
    const match = await game.lightning.matches.open({ entryFeeMsat: 10_000, rake: 0.1 });
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' }));
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' }));
    // 18,000 msats shared 4:1: bob's 3,600 msats could never be claimed.
    const refused = await game.lightning.matches
      .settle(match.id, { alice: 4, bob: 1 })
      .catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(InvalidArgumentError);
    expect((refused as InvalidArgumentError).message).to.match(/bob 3600 msats/);
    expect((await game.lightning.matches.get(match.id)).status).to.equal('open');
    const even = await game.lightning.matches
      .settle(match.id, { alice: 1, bob: 1 })
      .catch((err: unknown) => err);
    expect(even, '9,000 msats each').to.be.instanceOf(InvalidArgumentError);
    const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settled.payouts.map((p) => p.amountMsat)).to.deep.equal(['18000']);
  });

  it('a payout another process made and lost the answer of does not count as made: the match is not settled without it', async () => {
    // Found by the soak: A's finish hit B's fixed payout id (DuplicateIntentError), counted it as
    // made and ended the match `settled` while that payout was unknown, its code shown to nobody.
    dir = mkdtempSync(join(tmpdir(), 'match-'));
    const ledger = join(dir, 'ledger.sqlite');
    const a = await start({ ledger, api: { timeoutMs: 5_000, maxRetries: 0 } });
    const b = await start({
      ledger,
      emulator: a.emulator,
      api: { timeoutMs: 5_000, maxRetries: 0 },
    });
    const match = await a.lightning.matches.open({ entryFeeMsat: 20_000 });
    await pay(a, await a.lightning.matches.enter({ matchId: match.id, playerId: 'p1' }));
    await pay(a, await a.lightning.matches.enter({ matchId: match.id, playerId: 'p2' }));
    const create = { method: 'POST', path: '/v0/withdrawal-requests' } as const;
    a.emulator.control.faults.add({ ...create, latencyMs: 1_500, times: 1 });
    a.emulator.control.faults.add({ ...create, mode: 'process-then-destroy', times: 1 });
    const byA = a.lightning.matches.settle(match.id, { p1: 1, p2: 1 });
    // A is making the first payout (slowly): B finishes the same match meanwhile.
    await eventually(
      async () => (await a.lightning.matches.get(match.id)).payouts.length === 1,
      5_000,
      "A's first payout recorded",
    );
    const byB = await b.lightning.matches.settle(match.id, { p1: 1, p2: 1 });
    expect(byB.payouts.map((p) => p.status).sort()).to.deep.equal(['creating', 'unknown']);
    const view = await byA;
    expect(view.payouts.map((p) => p.status).sort()).to.deep.equal(['pending', 'unknown']);
    expect(view.status, 'a winner has no code yet').to.equal('settling');
  });

  it('a payout whose create answer was lost is never sent twice, and issued again once it could not have been claimed', async () => {
    const clock = new ManualClock(Date.now());
    const game = await start({ clock, api: { timeoutMs: 300, maxRetries: 0 } });
    const match = await game.lightning.matches.open({ entryFeeMsat: 25_000, claimExpiresIn: 600 });
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' }));
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    const settling = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settling.status).to.equal('settling');
    expect(settling.payouts[0]?.status).to.equal('unknown');
    expect(requestsOf(game, 'alice')).to.have.length(1);
    // Checks before the deadline send nothing.
    clock.advance(300_000);
    await game.lightning.operator.reconciler.runOnce();
    expect(requestsOf(game, 'alice')).to.have.length(1);
    // Past the deadline and its margin, the lost payout is expired (nobody ever had its code)
    // and the match issues it again, once.
    clock.advance(400_000);
    await game.lightning.operator.reconciler.runOnce();
    await game.lightning.operator.reconciler.runOnce();
    clock.advance(20_000);
    await game.lightning.operator.reconciler.runOnce();
    const settled = await game.lightning.matches.get(match.id);
    expect(settled.status).to.equal('settled');
    expect(settled.payouts.map((p) => p.status)).to.deep.equal(['expired', 'pending']);
    expect(requestsOf(game, 'alice')).to.have.length(2);
    await game.lightning.operator.reconciler.runOnce();
    expect(requestsOf(game, 'alice')).to.have.length(2);
  });

  // ---- issue 22: the first decision stands, a late entry is refused, shares weigh something --

  /** A match with alice and bob paid in (`entryFeeMsat` each). */
  async function paidMatch(game: Game, entryFeeMsat = 50_000): Promise<MatchView> {
    const match = await game.lightning.matches.open({ entryFeeMsat });
    for (const playerId of ['alice', 'bob']) {
      await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId }));
    }
    return match;
  }

  it('a second settle with other shares is refused, naming the decision; the same shares again are the same settlement', async () => {
    const game = await start();
    const seen = record(game);
    const match = await paidMatch(game);
    const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settled.payouts.map((p) => [p.playerId, p.amountMsat])).to.deep.equal([
      ['alice', '100000'],
    ]);
    const others: Record<string, number>[] = [{ bob: 1 }, { alice: 1, bob: 1 }, { alice: 2 }];
    for (const other of others) {
      const err = await game.lightning.matches.settle(match.id, other).catch((e: unknown) => e);
      expect(err, JSON.stringify(other)).to.be.instanceOf(MatchClosedError);
      expect(err).to.deep.include({
        matchId: match.id,
        matchStatus: 'settled',
        decision: { kind: 'settle', shares: { alice: 1 }, reason: null },
      });
      expect((err as Error).message).to.include('settled with shares {"alice":1}');
    }
    const again = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(again.payouts).to.deep.equal(settled.payouts);
    // An abort after it names the settlement too.
    const abort = await game.lightning.matches.abort(match.id, 'no').catch((e: unknown) => e);
    expect(abort).to.be.instanceOf(MatchClosedError);
    expect((abort as MatchClosedError).decision?.kind).to.equal('settle');
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(requestsOf(game, 'bob')).to.deep.equal([]);
    expect(seen.settled).to.have.length(1);
  });

  it('two processes settling one match with other shares: one settlement stands, the other is refused, each winner paid once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'match-'));
    const ledger = join(dir, 'ledger.sqlite');
    const first = await start({ ledger });
    const second = await start({ ledger, emulator: first.emulator });
    const match = await paidMatch(first);
    const results = await Promise.allSettled([
      first.lightning.matches.settle(match.id, { alice: 1 }),
      second.lightning.matches.settle(match.id, { bob: 1 }),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won, 'exactly one settle resolves').to.have.length(1);
    expect(lost).to.have.length(1);
    const view = (won[0] as PromiseFulfilledResult<MatchView>).value;
    const winner = view.payouts[0]?.playerId as string;
    const refused = (lost[0] as PromiseRejectedResult).reason as MatchClosedError;
    expect(refused).to.be.instanceOf(MatchClosedError);
    expect(refused.decision).to.deep.equal({
      kind: 'settle',
      shares: { [winner]: 1 },
      reason: null,
    });
    // The settlement that stands, asked of either process, is the same one; the other shares
    // are refused in both.
    const loser = winner === 'alice' ? 'bob' : 'alice';
    for (const game of [first, second]) {
      const again = await game.lightning.matches.settle(match.id, { [winner]: 1 });
      expect(again.payouts.map((p) => p.intentId)).to.deep.equal(
        view.payouts.map((p) => p.intentId),
      );
      const other = await game.lightning.matches
        .settle(match.id, { [loser]: 1 })
        .catch((e: unknown) => e);
      expect(other).to.be.instanceOf(MatchClosedError);
    }
    const ended = await first.lightning.matches.get(match.id);
    expect(ended.status).to.equal('settled');
    expect(ended.payouts.map((p) => [p.playerId, p.amountMsat])).to.deep.equal([
      [winner, '100000'],
    ]);
    expect(requestsOf(first, winner)).to.have.length(1);
    expect(requestsOf(first, loser)).to.deep.equal([]);
  });

  it('an entry whose fee is recorded while the match is being settled is refused, its charge closed, nothing paid twice', async () => {
    const emulator = await startEmulator({ logger: quietLogger });
    emulators.push(emulator);
    const proxy = await startHoldingProxy(emulator.url);
    proxies.push(proxy);
    const game = await start({ emulator, baseUrl: proxy.url });
    const seen = record(game);
    const match = await game.lightning.matches.open({ entryFeeMsat: 50_000 });
    await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' }));
    // Bob's entry is recorded, and its charge is on its way to the service when the game settles.
    proxy.hold('POST', '/v0/static-charges');
    const entering = game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' }).then(
      (fee) => ({ fee }),
      (err: unknown) => ({ err }),
    );
    await proxy.held();
    const settling = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(settling.potMsat).to.equal('50000');
    proxy.release();
    const entered = await entering;
    expect(entered, 'the late entry is refused, not returned open').to.have.property('err');
    const err = (entered as { err: unknown }).err as MatchClosedError;
    expect(err).to.be.instanceOf(MatchClosedError);
    expect(err.decision).to.deep.include({ kind: 'settle', shares: { alice: 1 } });

    // Bob's charge was created and is closed: his payment is refused, nothing to refund.
    const [bobFee] = (await game.lightning.books.ledger.byGroup(match.id)).filter(
      (i) => i.kind === 'entryFee' && i.playerId === 'bob',
    );
    await eventually(
      async () =>
        (await game.lightning.books.ledger.get(bobFee?.id as string))?.status === 'expired',
      5_000,
      "bob's fee closed",
    );
    expect(game.emulator.control.payStaticCharge(bobFee?.remoteId as string).status).to.equal(
      'ERROR',
    );
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).status === 'settled',
      5_000,
      'the match settled',
    );
    const ended = await game.lightning.matches.get(match.id);
    expect(ended.payouts.map((p) => [p.playerId, p.amountMsat])).to.deep.equal([
      ['alice', '50000'],
    ]);
    expect(ended.refunds).to.deep.equal([]);
    expect(requestsOf(game, 'alice')).to.have.length(1);
    expect(requestsOf(game, 'bob')).to.deep.equal([]);
    expect(seen.settled).to.have.length(1);
    // Entering again is refused at once.
    const again = await game.lightning.matches
      .enter({ matchId: match.id, playerId: 'bob' })
      .catch((e: unknown) => e);
    expect(again).to.be.instanceOf(MatchClosedError);
  });

  it('refuses shares that round to nothing, naming the player: the pot never goes to the house alone', async () => {
    const game = await start();
    const match = await game.lightning.matches.open({ entryFeeMsat: 20_000 });
    for (const playerId of ['alice', 'frank']) {
      await pay(game, await game.lightning.matches.enter({ matchId: match.id, playerId }));
    }
    const tiny: Record<string, number>[] = [
      { frank: 1e-7 },
      { alice: 1, frank: 4e-7 },
      { frank: Number.MIN_VALUE },
    ];
    for (const shares of tiny) {
      const err = await game.lightning.matches.settle(match.id, shares).catch((e: unknown) => e);
      expect(err, JSON.stringify(shares)).to.be.instanceOf(InvalidArgumentError);
      expect(err).to.have.property('field', 'shares.frank');
    }
    const open = await game.lightning.matches.get(match.id);
    expect(open).to.include({ status: 'open', rakeMsat: null });
    expect(open.payouts).to.deep.equal([]);
    // The finest share that weighs something, alone, takes the pot.
    const settled = await game.lightning.matches.settle(match.id, { frank: 1e-6 });
    expect(settled.payouts.map((p) => [p.playerId, p.amountMsat])).to.deep.equal([
      ['frank', '40000'],
    ]);
  });

  it('refuses a split in which every part rounds down to 0 msats', () => {
    // Two msats after the rake, three winners: each part is 0.
    const refused = (() => {
      try {
        return splitPot(4n, 5_000, { a: 1, b: 1, c: 1 });
      } catch (err) {
        return err;
      }
    })();
    expect(refused).to.be.instanceOf(InvalidArgumentError);
    expect((refused as Error).message).to.match(/would pay nobody/);
    // Parts above 0 but below the least claim code (10,000 msats) are refused too, by name.
    expect(() => splitPot(40_000n, 5_000, { a: 1, b: 1, c: 1 })).to.throw(
      InvalidArgumentError,
      /would pay a 6666 msats/,
    );
    expect(splitPot(40_004n, 5_000, { a: 1, b: 1 })).to.deep.equal({
      rakeMsat: 20_002n,
      payouts: [
        { playerId: 'a', amountMsat: '10001' },
        { playerId: 'b', amountMsat: '10001' },
      ],
    });
  });
});
