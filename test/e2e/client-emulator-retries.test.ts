/**
 * The retry policy end to end, with the emulator's fault injection: reads are retried, 429s
 * are retried after Retry-After, and a write without an idempotency key that may have been
 * processed is never sent twice (AmbiguousResultError), so money never moves twice.
 */

import { expect } from 'chai';
import {
  AmbiguousResultError,
  ConnectionError,
  RateLimitError,
  ServiceError,
  TimeoutError,
} from '../../src/api/index.js';
import { ManualClock } from '../../src/clock.js';
import { timersArmed } from '../api/armed.js';
import { failure, useClientAndEmulator } from './setup.js';

describe('e2e client -> emulator: retries and faults', () => {
  const t = useClientAndEmulator();

  describe('reads', () => {
    it('a GET answered 503 once is retried and succeeds', async () => {
      const fault = t.emu.control.faults.add({
        method: 'GET',
        path: '/v0/wallet',
        status: 503,
        times: 1,
      });
      const wallet = await t.api.wallet.get();
      expect(wallet.balance).to.equal(1_000_000);
      expect(fault.hits).to.equal(1);
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(2);
    });

    it('a GET that keeps failing: ServiceError after 1 + maxRetries attempts', async () => {
      const wr = await t.api.withdrawalRequests.create({ amount: 10_000, description: 'd' });
      t.emu.control.faults.add({ method: 'GET', path: '/v0/withdrawal-requests/:id', status: 500 });
      const error = await failure(() => t.api.withdrawalRequests.get(wr.id));
      expect(error).to.be.instanceOf(ServiceError);
      expect(error).to.include({ status: 500, attempts: 3, retryable: true });
      expect(t.emu.control.count('GET', `/v0/withdrawal-requests/${wr.id}`)).to.equal(3);
    });

    it('a GET whose connection drops (before or after processing) is retried', async () => {
      t.emu.control.faults.add({
        method: 'GET',
        path: '/v0/wallet',
        mode: 'destroy-before-processing',
        times: 1,
      });
      t.emu.control.faults.add({
        method: 'GET',
        path: '/v0/wallet',
        mode: 'process-then-destroy',
        times: 1,
      });
      expect((await t.api.wallet.get()).balance).to.equal(1_000_000);
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(3);
    });

    it('a GET that hangs: TimeoutError after every attempt timed out', async () => {
      const api = t.client({ timeoutMs: 100, maxRetries: 1 });
      t.emu.control.faults.add({ method: 'GET', path: '/v0/wallet', mode: 'hang' });
      const error = await failure(() => api.wallet.get());
      expect(error).to.be.instanceOf(TimeoutError);
      // Each attempt gave up at the client's limit, then the next was sent.
      expect(error.message).to.match(/no answer within 100 ms/);
      expect(error.attempts).to.equal(2);
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(2);
    });

    it('no emulator listening: ConnectionError after the retries', async () => {
      const url = t.emu.url;
      await t.emu.close();
      const error = await failure(() => t.client({ baseUrl: url }).wallet.get());
      expect(error).to.be.instanceOf(ConnectionError);
      expect(error).to.include({ attempts: 3, retryable: true });
    });
  });

  describe('429 and Retry-After', () => {
    /** Gets the wallet and checks the retry came after `waitMs` on the client clock, not before. */
    async function walletRetriedAfter(waitMs: number): Promise<number> {
      const clock = new ManualClock();
      const got = t.client({ clock }).wallet.get();
      await timersArmed(clock);
      clock.advance(waitMs - 1);
      expect(clock.pendingTimers, 'still waiting 1 ms before the end').to.equal(1);
      expect(t.emu.control.count('GET', '/v0/wallet'), 'not retried early').to.equal(1);
      clock.advance(1);
      const wallet = await got;
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(2);
      return wallet.balance;
    }

    it('is honoured: the retry waits the seconds the emulator asked for', async () => {
      t.emu.control.faults.add({
        method: 'GET',
        path: '/v0/wallet',
        status: 429,
        retryAfter: 1,
        times: 1,
      });
      expect(await walletRetriedAfter(1_000)).to.equal(1_000_000);
    });

    it('a write answered 429 was not processed, so it is retried: exactly one withdrawal request', async () => {
      t.emu.control.faults.add({
        method: 'POST',
        path: '/v0/withdrawal-requests',
        status: 429,
        retryAfter: 0,
        times: 2,
      });
      const wr = await t.api.withdrawalRequests.create({ amount: 10_000, description: 'd' });
      expect(t.emu.control.count('POST', '/v0/withdrawal-requests')).to.equal(3);
      expect(t.emu.control.withdrawalRequests().map((w) => w.id)).to.deep.equal([wr.id]);
    });

    it('a Retry-After longer than maxRetryAfterMs: RateLimitError at once, with the wait asked for', async () => {
      t.emu.control.faults.add({ path: '/v0/wallet', status: 429, retryAfter: 11 });
      // Time never moves: a client that waited would never settle.
      const clock = new ManualClock();
      const error = await failure(() => t.client({ clock }).wallet.get());
      expect(error).to.be.instanceOf(RateLimitError);
      expect((error as RateLimitError).retryAfterMs).to.equal(11_000);
      expect(error).to.include({ status: 429, attempts: 1 });
      expect(clock.pendingTimers).to.equal(0);
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(1);
    });

    it('429 on every attempt: RateLimitError after 1 + maxRetries attempts', async () => {
      t.emu.control.faults.add({ path: '/v0/wallet', status: 429, retryAfter: 0 });
      const error = await failure(() => t.api.wallet.get());
      expect(error).to.be.instanceOf(RateLimitError);
      expect(error.attempts).to.equal(3);
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(3);
    });

    it('a 503 with Retry-After is honoured too', async () => {
      t.emu.control.faults.add({
        method: 'GET',
        path: '/v0/wallet',
        status: 503,
        retryAfter: 1,
        times: 1,
      });
      expect(await walletRetriedAfter(1_000)).to.equal(1_000_000);
    });
  });

  describe('writes without an idempotency key: never sent twice', () => {
    it('withdrawal request processed, then the connection destroyed: AmbiguousResultError and exactly one request exists', async () => {
      // A warm keep-alive connection first, as in a running game server.
      expect((await t.api.wallet.get()).balance).to.equal(1_000_000);
      const fault = t.emu.control.faults.add({
        method: 'POST',
        path: '/v0/withdrawal-requests',
        mode: 'process-then-destroy',
        times: 1,
      });
      const error = await failure(() =>
        t.api.withdrawalRequests.create({
          amount: 50_000n,
          description: 'Winner of round 12',
          internalId: 'player-42',
        }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(error).to.include({
        code: 'LN_AMBIGUOUS_RESULT',
        retryable: false,
        method: 'POST',
        path: '/v0/withdrawal-requests',
        attempts: 1,
      });
      expect((error as AmbiguousResultError).idempotencyKey).to.equal(undefined);
      expect(fault.hits).to.equal(1);
      expect(t.emu.control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
      const created = t.emu.control.withdrawalRequests();
      expect(created).to.have.length(1);
      expect(created[0]).to.include({
        status: 'pending',
        amount: '50000',
        internalId: 'player-42',
      });
      // Looking it up, as the error advises, finds the one that was created.
      const id = created[0]?.id as string;
      expect((await t.api.withdrawalRequests.get(id)).status).to.equal('pending');
    });

    it('static charge answered 500: AmbiguousResultError, exactly one request reached the emulator', async () => {
      t.emu.control.faults.add({ method: 'POST', path: '/v0/static-charges', status: 500 });
      const error = await failure(() =>
        t.api.staticCharges.create({ minAmount: 1000, maxAmount: 5000, description: 'Entry' }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(error).to.include({ status: 500, retryable: false, attempts: 1 });
      expect(t.emu.control.count('POST', '/v0/static-charges')).to.equal(1);
      expect(t.emu.control.staticCharges()).to.have.length(0);
    });

    it('static charge processed, then the connection destroyed: exactly one charge', async () => {
      t.emu.control.faults.add({
        method: 'POST',
        path: '/v0/static-charges',
        mode: 'process-then-destroy',
      });
      const error = await failure(() =>
        t.api.staticCharges.create({ minAmount: 1000, maxAmount: 5000, description: 'Entry' }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(t.emu.control.count('POST', '/v0/static-charges')).to.equal(1);
      expect(t.emu.control.staticCharges()).to.have.length(1);
    });

    it('payment processed, then the connection destroyed: one payment, the wallet debited once', async () => {
      t.emu.control.setWallet(100_000);
      t.emu.control.faults.add({
        method: 'POST',
        path: '/v0/payments',
        mode: 'process-then-destroy',
      });
      const error = await failure(() =>
        t.api.payments.send({ amount: 30_000, description: 'payout', internalId: 'p1' }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(error.retryable).to.equal(false);
      expect(t.emu.control.count('POST', '/v0/payments')).to.equal(1);
      expect(t.emu.control.payments()).to.have.length(1);
      expect(t.emu.control.wallet()).to.equal(70_000);
    });

    it('a POST that hangs: AmbiguousResultError after one attempt, not a retry', async () => {
      const api = t.client({ timeoutMs: 100 });
      t.emu.control.faults.add({
        method: 'POST',
        path: '/v0/withdrawal-requests',
        mode: 'hang',
      });
      const error = await failure(() =>
        api.withdrawalRequests.create({ amount: 10_000, description: 'd' }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(error.attempts).to.equal(1);
      expect(t.emu.control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
    });

    it('PATCH answered 503: AmbiguousResultError, sent once', async () => {
      const charge = await t.api.staticCharges.create({
        minAmount: 1000,
        maxAmount: 1000,
        description: 'd',
      });
      t.emu.control.faults.add({ method: 'PATCH', path: '/v0/static-charges/:id', status: 503 });
      const error = await failure(() =>
        t.api.staticCharges.update(charge.id, { description: 'e' }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(t.emu.control.count('PATCH', `/v0/static-charges/${charge.id}`)).to.equal(1);
    });

    it('widget session and user creation on a 500: AmbiguousResultError, sent once each', async () => {
      t.emu.control.faults.add({ method: 'POST', path: '/api/v1/widget/users*', status: 500 });
      t.emu.control.faults.add({ method: 'POST', path: '/api/v1/ramp-widget', status: 500 });
      for (const call of [
        () => t.api.widgetUsers.create({ reference_id: 'r', email: 'r@example.com' }),
        () => t.api.widgetSessions.create({ email: 'r@example.com' }),
        () => t.api.ramp.createSession({ email: 'r@example.com', webhook_url: 'http://x.test/h' }),
      ]) {
        expect(await failure(call)).to.be.instanceOf(AmbiguousResultError);
      }
      expect(t.emu.control.count('POST', '/api/v1/widget/users')).to.equal(1);
      expect(t.emu.control.count('POST', '/api/v1/widget/users/session')).to.equal(1);
      expect(t.emu.control.count('POST', '/api/v1/ramp-widget')).to.equal(1);
    });
  });

  describe('deplete (keyed): retried with the same key', () => {
    it('processed, then the connection destroyed: retried, debited exactly once', async () => {
      const userId = t.emu.control.createUser({ email: 'u@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 500);
      t.emu.control.faults.add({
        method: 'POST',
        path: '/api/v1/widget/users/deplete',
        mode: 'process-then-destroy',
        times: 1,
      });
      const key = '3b241101-e2bb-4255-8caf-4136c566a962';
      const result = await t.api.widgetUsers.deplete({
        user_id: userId,
        amount: 200,
        idempotency_key: key,
      });
      expect(result).to.include({ status: 'COMPLETED', idempotencyKey: key });
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(2);
      expect(t.emu.control.transfers()).to.have.length(1);
      expect(t.emu.control.transfers()[0]).to.include({
        transferId: result.transfer_id,
        idempotencyKey: key,
      });
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(300);
    });

    it('answered 503 then OK: retried, debited once', async () => {
      const userId = t.emu.control.createUser({ email: 'u@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 500);
      t.emu.control.faults.add({
        method: 'POST',
        path: '/api/v1/widget/users/deplete',
        status: 503,
        times: 2,
      });
      const result = await t.api.widgetUsers.deplete({ user_id: userId, amount: 200 });
      expect(result.status).to.equal('COMPLETED');
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(3);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(300);
    });
  });
});
