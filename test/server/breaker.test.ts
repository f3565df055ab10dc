/**
 * The payout circuit breaker (issue 13): ambiguous or 5xx answers crossing a threshold, or a
 * wallet about to fall under its floor, pause payouts until `lightning.operator.resume()`. A paused
 * payout records nothing and sends nothing; money coming in (entry fees) is never paused.
 *
 * Issue 22, finding 1: one player must not be able to pause everyone's payouts. Failures count
 * per player and per recipient; they pause only when they span several players (or the
 * service fails reads of several intents), and `paused` says which. A Lightning address is
 * checked before a payout is sent to it; a match pays one that fails by claim code.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { RateLimitError } from '../../src/api/errors.js';
import { LN_ADDRESS_DOMAIN } from '../../src/emulator/index.js';
import { PayoutsPausedError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { PayoutPause } from '../../src/server/events.js';
import type { MatchView } from '../../src/server/match/view.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

const SEND = '/v0/ln-address/send-payment';
const REQUESTS = '/v0/withdrawal-requests';

describe('payout circuit breaker', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  const reward = (playerId: string) =>
    game.lightning.reward({ playerId, amountMsat: 20_000, description: 'x' });

  it('trips after `failures` ambiguous answers, refuses payouts until resume()', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      {
        reconciler: { enabled: false },
        breaker: { failures: 3, windowMs: 60_000 },
        api: { timeoutMs: 300, maxRetries: 0 },
      },
    );
    const pauses: PayoutPause[] = [];
    game.lightning.on('paused', (p) => pauses.push(p));
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 503,
      times: 3,
    });
    for (const player of ['a', 'b', 'c']) await reward(player).catch(() => {});
    expect(pauses).to.have.length(1);
    expect(pauses[0]?.reason).to.match(/3 ambiguous or 5xx answers/);
    // It says what tripped it, and whose payouts failed.
    expect(pauses[0]).to.include({ cause: 'payouts' });
    expect(pauses[0]?.players).to.deep.equal(['a', 'b', 'c']);
    expect(pauses[0]?.recipients).to.deep.equal([]);
    expect(game.lightning.operator.paused).to.deep.equal(pauses[0]);

    const sent = game.emulator.control.count('POST', '/v0/withdrawal-requests');
    const refused = await reward('d').catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(PayoutsPausedError);
    expect(game.emulator.control.count('POST', '/v0/withdrawal-requests')).to.equal(sent);
    expect(await game.lightning.books.ledger.openByPlayer('d')).to.deep.equal([]);
    // Money coming in is not paused.
    const fee = await game.lightning.chargeEntryFee({
      playerId: 'e',
      amountMsat: 1_000,
      description: 'x',
    });
    expect(fee.status).to.equal('pending');

    game.lightning.operator.resume();
    expect(game.lightning.operator.paused).to.equal(null);
    expect((await reward('d')).status).to.equal('pending');
    expect(pauses).to.have.length(1);
  });

  it('pauses rather than let the wallet fall below its floor', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false }, breaker: { walletFloorMsat: 0 } },
    );
    const { balance } = await game.lightning.service.api.wallet.get();
    const wallet = Number(balance) * 1000;
    await game.stop();
    game = await startGame(
      { empty: EmptyRoom },
      // Room for exactly two 20,000 msat payouts above the floor.
      { reconciler: { enabled: false }, breaker: { walletFloorMsat: wallet - 40_000 } },
    );
    const pauses: PayoutPause[] = [];
    game.lightning.on('paused', (p) => pauses.push(p));
    expect((await reward('a')).status).to.equal('pending');
    expect((await reward('b')).status).to.equal('pending');
    const refused = await reward('c').catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(PayoutsPausedError);
    expect((refused as PayoutsPausedError).reason).to.match(/floor/);
    expect(pauses).to.have.length(1);
    expect(pauses[0]).to.include({ cause: 'wallet' });
    expect(game.emulator.control.withdrawalRequests()).to.have.length(2);
  });

  describe('one player cannot pause the game (issue 22, finding 1)', () => {
    async function start(options: Parameters<typeof startGame>[1] = {}): Promise<PayoutPause[]> {
      game = await startGame(
        { empty: EmptyRoom },
        {
          reconciler: { enabled: false },
          api: { timeoutMs: 300, maxRetries: 0 },
          breaker: { validateTimeoutMs: 200 },
          ...options,
        },
      );
      const pauses: PayoutPause[] = [];
      game.lightning.on('paused', (p) => pauses.push(p));
      return pauses;
    }

    /** The player pays their fee at the emulator and the callback settles it. */
    async function pay(fee: Intent): Promise<void> {
      expect(game.emulator.control.payStaticCharge(fee.remoteId as string).status).to.equal('OK');
      await eventually(
        async () => (await game.lightning.books.ledger.get(fee.id))?.status === 'completed',
        5_000,
        `the fee of ${fee.playerId} paid`,
      );
    }

    /** A player enters a match with `lnAddress`, pays, and leaves: the match is aborted. */
    async function enterPayLeave(playerId: string, lnAddress: string): Promise<MatchView> {
      const match = await game.lightning.matches.open({ entryFeeMsat: 20_000 });
      await pay(await game.lightning.matches.enter({ matchId: match.id, playerId, lnAddress }));
      return game.lightning.matches.abort(match.id, `${playerId} left`);
    }

    /** An honest reward and an honest match afterwards: both pay. */
    async function honestPayoutsGoOn(): Promise<void> {
      expect((await reward('olive')).status).to.equal('pending');
      const match = await game.lightning.matches.open({ entryFeeMsat: 30_000 });
      for (const playerId of ['alice', 'bob']) {
        await pay(await game.lightning.matches.enter({ matchId: match.id, playerId }));
      }
      const settled = await game.lightning.matches.settle(match.id, { alice: 1 });
      expect(settled.status).to.equal('settled');
      expect(
        settled.payouts.map((p) => [p.playerId, p.kind, p.status, p.amountMsat]),
      ).to.deep.equal([['alice', 'reward', 'pending', '60000']]);
    }

    it('an address whose server hangs: its refunds become claim codes, honest payouts go on', async function () {
      this.timeout(30_000);
      const pauses = await start();
      const mallory = `mallory@${LN_ADDRESS_DOMAIN}`;
      // Mallory's server never answers: neither the service's check of the address nor a
      // payment to it does.
      game.emulator.control.faults.add({
        method: 'GET',
        path: /^\/v0\/ln-address\/validate\/mallory/,
        mode: 'hang',
      });
      game.emulator.control.faults.add({ method: 'POST', path: SEND, mode: 'hang' });
      const aborted: MatchView[] = [];
      for (let round = 0; round < 5; round++) aborted.push(await enterPayLeave('mallory', mallory));

      await honestPayoutsGoOn();
      expect(pauses).to.deep.equal([]);
      expect(game.lightning.operator.paused).to.equal(null);
      // Each refund is a claim code for mallory, made at once; nothing was sent to the address,
      // and after its first check timed out it was not asked about again.
      for (const view of aborted) {
        expect(view.status).to.equal('aborted');
        expect(view.refunds.map((r) => [r.playerId, r.kind, r.status])).to.deep.equal([
          ['mallory', 'reward', 'pending'],
        ]);
      }
      expect(game.emulator.control.count('POST', SEND)).to.equal(0);
      expect(game.emulator.control.count('GET', /^\/v0\/ln-address\/validate\/mallory/)).to.equal(
        1,
      );
      expect((await game.lightning.books.claims('mallory')).length).to.equal(5);
    });

    it("addresses that pass their check but whose payments hang: one player's failures never pause", async function () {
      this.timeout(30_000);
      const pauses = await start();
      game.emulator.control.faults.add({ method: 'POST', path: SEND, mode: 'hang' });
      // A new address each time: none is held, each refund is sent, and each send times out.
      for (let round = 0; round < 5; round++) {
        const view = await enterPayLeave('mallory', `mallory${round}@${LN_ADDRESS_DOMAIN}`);
        expect(view.refunds.map((r) => [r.kind, r.status])).to.deep.equal([['payment', 'unknown']]);
      }
      expect(game.emulator.control.count('POST', SEND)).to.equal(5);

      await honestPayoutsGoOn();
      expect(pauses).to.deep.equal([]);
      expect(game.lightning.operator.paused).to.equal(null);
      // The same address again: held, so the refund is a claim code and nothing is sent.
      const again = await enterPayLeave('mallory', `mallory0@${LN_ADDRESS_DOMAIN}`);
      expect(again.refunds.map((r) => [r.kind, r.status])).to.deep.equal([['reward', 'pending']]);
      expect(game.emulator.control.count('POST', SEND)).to.equal(5);
    });

    it('failed entry fees and spends never pause payouts', async () => {
      const pauses = await start({ breaker: { failures: 2, players: 1 } });
      game.emulator.control.faults.add({ method: 'POST', path: '/v0/static-charges', status: 503 });
      game.emulator.control.faults.add({
        method: 'POST',
        path: '/api/v1/widget/users/deplete',
        status: 503,
      });
      const userId = game.emulator.control.createUser({ email: 'p@example.com', referenceId: 'p' });
      game.emulator.control.setPoints(userId, 'USDZ', 500);
      for (const playerId of ['a', 'b', 'c', 'd', 'e']) {
        const fee = await game.lightning
          .chargeEntryFee({ playerId, amountMsat: 1_000, description: 'x' })
          .catch((e: unknown) => e);
        expect(fee).to.be.instanceOf(Error);
        const spend = await game.lightning
          .spendPoints({ playerId, userId, amount: 10 })
          .catch((e: unknown) => e);
        expect(spend).to.be.instanceOf(Error);
      }
      expect(pauses).to.deep.equal([]);
      expect((await reward('olive')).status).to.equal('pending');
    });

    it("one player's failures, however many, do not pause; failures across players do, and say whose", async () => {
      const pauses = await start({ breaker: { failures: 3, players: 3 } });
      game.emulator.control.faults.add({ method: 'POST', path: REQUESTS, status: 503 });
      for (let i = 0; i < 6; i++) await reward('mallory').catch(() => {});
      await reward('a').catch(() => {});
      expect(pauses).to.deep.equal([]);
      await reward('b').catch(() => {});
      expect(pauses).to.have.length(1);
      expect(pauses[0]).to.include({ cause: 'payouts' });
      expect(pauses[0]?.players).to.have.members(['mallory', 'a', 'b']);
      expect(pauses[0]?.reason).to.match(/payouts of 3 players \(.*mallory.*\)/);
      expect(game.lightning.operator.paused).to.deep.equal(pauses[0]);
      const refused = await reward('c').catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(PayoutsPausedError);
    });

    it('5xx answers to reads of several intents pause (the service), of one intent do not', async () => {
      const pauses = await start({ breaker: { failures: 3, players: 3 } });
      const made = [await reward('a'), await reward('b'), await reward('c')];
      game.emulator.control.faults.add({ method: 'GET', path: `${REQUESTS}/:id`, status: 500 });
      for (let i = 0; i < 5; i++) await game.lightning.books.refresh(made[0]?.id as string);
      expect(pauses).to.deep.equal([]);
      await game.lightning.books.refresh(made[1]?.id as string);
      expect(pauses).to.deep.equal([]);
      await game.lightning.books.refresh(made[2]?.id as string);
      expect(pauses).to.have.length(1);
      expect(pauses[0]).to.include({ cause: 'reads' });
      expect(pauses[0]?.reason).to.match(/reads of 3 intents with 5xx/);
    });

    it('a 429 never counts', async () => {
      const pauses = await start({ breaker: { failures: 2, players: 1 } });
      game.emulator.control.faults.add({
        method: 'POST',
        path: REQUESTS,
        status: 429,
        retryAfter: 0,
      });
      for (const playerId of ['a', 'b', 'c', 'd']) await reward(playerId).catch(() => {});
      expect(game.emulator.control.count('POST', REQUESTS)).to.equal(4);
      expect(pauses).to.deep.equal([]);
    });

    it('a burst past the service rate limit (its 429s, many players at once) pauses nothing', async () => {
      // The emulator's real limit, not an injected fault: 2 at once, then 429 with Retry-After.
      game = await startGame(
        { empty: EmptyRoom },
        {
          reconciler: { enabled: false },
          breaker: { failures: 2, players: 2 },
          api: { maxRetries: 0 },
        },
      );
      game.emulator.control.setRateLimit({ perSecond: 0.001, burst: 2 });
      const pauses: PayoutPause[] = [];
      game.lightning.on('paused', (p) => pauses.push(p));
      const players = ['a', 'b', 'c', 'd', 'e', 'f'];
      const results = await Promise.allSettled(players.map((playerId) => reward(playerId)));
      const refused = results.filter((r) => r.status === 'rejected');
      expect(refused).to.have.length(4);
      for (const r of refused)
        expect((r as PromiseRejectedResult).reason).to.be.instanceOf(RateLimitError);
      expect(game.emulator.control.limited).to.equal(4);
      expect(pauses).to.deep.equal([]);
      expect(game.lightning.operator.paused).to.equal(null);
    });
  });
});
