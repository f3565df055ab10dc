/**
 * Error cases against the emulator, each mapped to the client's error class, with what a
 * user checks: the class, the status, the service's code, that nothing was retried or sent,
 * and that nothing moved (no debit, no resource).
 */

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { expect } from 'chai';
import {
  AmbiguousResultError,
  AuthenticationError,
  ConnectionError,
  InsufficientPointsError,
  InvalidArgumentError,
  InvalidRequestError,
  LightningError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  REQUEST_CHANNEL,
  ServiceError,
} from '../../src/api/index.js';
import { apiRequests, failure, useClientAndEmulator } from './setup.js';

describe('e2e client -> emulator: errors', () => {
  const t = useClientAndEmulator();

  describe('keys', () => {
    it('an unknown key: AuthenticationError (401) on v0 and widget calls, not retried', async () => {
      const api = t.client({ apiKey: 'emu_live_not_a_key_of_this_emulator' });
      const onWallet = await failure(() => api.wallet.get());
      expect(onWallet).to.be.instanceOf(AuthenticationError);
      expect(onWallet).to.include({ status: 401, code: 'LN_AUTHENTICATION', retryable: false });
      expect(onWallet.attempts).to.equal(undefined); // thrown on the first answer
      const onWidget = await failure(() =>
        api.widgetUsers.create({ reference_id: 'r', email: 'r@example.com' }),
      );
      expect(onWidget).to.be.instanceOf(AuthenticationError);
      expect(onWidget.status).to.equal(401);
      expect(t.emu.control.count('GET', '/v0/wallet')).to.equal(1);
      expect(t.emu.control.count('POST', '/api/v1/widget/users')).to.equal(1);
      expect(t.emu.control.users()).to.have.length(0);
    });

    it("carries the emulator's request id, a different one for each answer", async () => {
      const api = t.client({ apiKey: 'emu_live_not_a_key_of_this_emulator' });
      const first = await failure(() => api.wallet.get());
      const second = await failure(() => api.wallet.get());
      expect(first.requestId).to.match(/^[0-9a-f-]{36}$/);
      expect(second.requestId).to.match(/^[0-9a-f-]{36}$/);
      expect(first.requestId).not.to.equal(second.requestId);
      expect(first.headers?.['x-request-id']).to.equal(first.requestId);
    });

    it('a revoked key: AuthenticationError at once', async () => {
      expect((await t.api.wallet.get()).balance).to.equal(1_000_000);
      t.emu.control.revokeKey(t.emu.apiKey);
      const error = await failure(() => t.api.wallet.get());
      expect(error).to.be.instanceOf(AuthenticationError);
    });

    it('a sandbox key: reads the wallet, but every widget call is a PermissionError (403)', async () => {
      const userId = t.emu.control.createUser({ email: 'u@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 100);
      const api = t.client({ apiKey: t.emu.sandboxKey });
      expect((await api.wallet.get()).balance).to.equal(1_000_000);
      const calls: Array<() => Promise<unknown>> = [
        () => api.widgetUsers.create({ reference_id: 'r', email: 'r@example.com' }),
        () => api.widgetUsers.deplete({ user_id: userId, amount: 10 }),
        () => api.widgetUsers.update(userId, { email: 'v@example.com' }),
        () => api.widgetUsers.acceptDisclosures(userId, [2]),
        () => api.widgetSessions.create({ email: 'u@example.com' }),
        () => api.ramp.createSession({ email: 'u@example.com', webhook_url: 'http://x.test/h' }),
      ];
      for (const call of calls) {
        const error = await failure(call);
        expect(error).to.be.instanceOf(PermissionError);
        expect(error).to.include({ status: 403, code: 'LN_PERMISSION' });
      }
      expect(t.emu.control.count('*', /^\/api\/v1\//)).to.equal(calls.length);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(100);
      expect(t.emu.control.users()).to.have.length(1);
      expect(t.emu.control.users()[0]?.email).to.equal('u@example.com');
      expect(t.emu.control.sessions()).to.have.length(0);
    });
  });

  describe('widget users', () => {
    it('disclosure interface denied to the project: PermissionError, nothing accepted', async () => {
      const user = await t.api.widgetUsers.create({ reference_id: 'r', email: 'r@example.com' });
      t.emu.control.setDisclosures(t.emu.projectId, false);
      const error = await failure(() => t.api.widgetUsers.acceptDisclosures(user.id, [2, 3]));
      expect(error).to.be.instanceOf(PermissionError);
      expect(error.status).to.equal(403);
      expect(t.emu.control.users()[0]?.outstanding_disclosures).to.deep.equal([2, 3, 6]);
    });

    it('a user of another project: NotFoundError on disclosures, update and deplete', async () => {
      const other = t.emu.control.createProject();
      const foreign = t.emu.control.createUser({
        email: 'f@example.com',
        projectId: other.projectId,
      });
      t.emu.control.setPoints(foreign, 'USDZ', 500);
      for (const call of [
        () => t.api.widgetUsers.acceptDisclosures(foreign, [2]),
        () => t.api.widgetUsers.update(foreign, { email: 'g@example.com' }),
        () => t.api.widgetUsers.deplete({ user_id: foreign, amount: 10 }),
      ]) {
        const error = await failure(call);
        expect(error).to.be.instanceOf(NotFoundError);
        expect(error).to.include({ status: 404, code: 'LN_NOT_FOUND' });
      }
      const [user] = t.emu.control.users(other.projectId);
      expect(user).to.include({ email: 'f@example.com' });
      expect(user?.outstanding_disclosures).to.deep.equal([2, 3, 6]);
      expect(t.emu.control.points(foreign, 'USDZ')).to.equal(500);
      // The other project's own key reaches the user.
      const owner = t.client({ apiKey: other.apiKey });
      expect(
        (await owner.widgetUsers.acceptDisclosures(foreign, [2])).acceptedDisclosureTypeIds,
      ).to.deep.equal([2]);
    });

    it('resources of another project: NotFoundError', async () => {
      const other = t.emu.control.createProject({ walletMsat: 1_000_000 });
      const owner = t.client({ apiKey: other.apiKey });
      const wr = await owner.withdrawalRequests.create({ amount: 10_000, description: 'd' });
      const sc = await owner.staticCharges.create({
        minAmount: 1000,
        maxAmount: 1000,
        description: 'd',
      });
      const p = await owner.payments.send({ amount: 1, description: 'd', internalId: 'i' });
      for (const call of [
        () => t.api.withdrawalRequests.get(wr.id),
        () => t.api.staticCharges.get(sc.id),
        () => t.api.staticCharges.update(sc.id, { description: 'mine now' }),
        () => t.api.payments.get(p.id),
      ]) {
        expect(await failure(call)).to.be.instanceOf(NotFoundError);
      }
      expect(t.emu.control.staticCharges(other.projectId)[0]?.description).to.equal('d');
    });

    it('empty or unknown disclosure types: InvalidArgumentError, and nothing reaches the emulator', async () => {
      const userId = t.emu.control.createUser({ email: 'u@example.com' });
      for (const ids of [[], [1], [2, 4], [2.5]]) {
        const error = await failure(
          () => t.api.widgetUsers.acceptDisclosures(userId, ids),
          InvalidArgumentError,
        );
        expect(error.field, JSON.stringify(ids)).to.match(/^typeIds/);
      }
      expect(t.emu.control.count('*', /disclosures/)).to.equal(0);
      expect(apiRequests(t.emu)).to.equal(0);
    });

    it('TX3017: InsufficientPointsError, nothing debited, no transfer, not retried', async () => {
      const userId = t.emu.control.createUser({ email: 'u@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 99);
      const error = await failure(() =>
        t.api.widgetUsers.deplete({ user_id: userId, amount: 100 }),
      );
      expect(error).to.be.instanceOf(InsufficientPointsError);
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error).to.include({
        status: 400,
        serviceCode: 'TX3017',
        code: 'LN_INSUFFICIENT_POINTS',
        retryable: false,
      });
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(99);
      expect(t.emu.control.transfers()).to.have.length(0);
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(1);
    });

    it('a currency other than the project point currency: InvalidRequestError', async () => {
      const userId = t.emu.control.createUser({ email: 'u@example.com' });
      t.emu.control.setPoints(userId, 'EURZ', 1000);
      const error = await failure(() =>
        t.api.widgetUsers.deplete({ user_id: userId, amount: 10, currency: 'EURZ' }),
      );
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error.serviceCode).to.equal('VALIDATION_ERROR');
      expect(t.emu.control.points(userId, 'EURZ')).to.equal(1000);
    });

    it("an email another user has: InvalidRequestError (409), the user's email unchanged", async () => {
      await t.api.widgetUsers.create({ reference_id: 'a', email: 'a@example.com' });
      const b = await t.api.widgetUsers.create({ reference_id: 'b', email: 'b@example.com' });
      const error = await failure(() => t.api.widgetUsers.update(b.id, { email: 'A@example.com' }));
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error).to.include({ status: 409, serviceCode: 'EMAIL_IN_USE' });
      expect(t.emu.control.users().find((u) => u.id === b.id)?.email).to.equal('b@example.com');
    });
  });

  describe('amounts and wallet', () => {
    it('a withdrawal request below 10 sats: InvalidRequestError; 10 sats exactly works', async () => {
      const error = await failure(() =>
        t.api.withdrawalRequests.create({ amount: 9_999, description: 'tiny' }),
      );
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error.status).to.equal(400);
      expect(error.message).to.match(/10 sats/);
      expect(t.emu.control.withdrawalRequests()).to.have.length(0);
      const ok = await t.api.withdrawalRequests.create({ amount: 10_000, description: 'min' });
      expect(ok.amount).to.equal('10000');
    });

    it('a withdrawal request the wallet cannot cover: InvalidRequestError, nothing created', async () => {
      t.emu.control.setWallet(49_999);
      const error = await failure(() =>
        t.api.withdrawalRequests.create({ amount: 50_000, description: 'too big' }),
      );
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error.status).to.equal(400);
      expect(t.emu.control.withdrawalRequests()).to.have.length(0);
      expect(t.emu.control.wallet()).to.equal(49_999);
    });

    it('invalid amounts are refused by the client before anything is sent', async () => {
      for (const amount of [0, -1, 1.5, '12abc', 2n ** 80n]) {
        const error = await failure(
          () => t.api.withdrawalRequests.create({ amount, description: 'd' }),
          InvalidArgumentError,
        );
        expect(error.field, String(amount)).to.equal('amount');
      }
      const long = await failure(
        () =>
          t.api.staticCharges.create({
            minAmount: 1000,
            maxAmount: 1000,
            description: 'd',
            successMessage: 'x'.repeat(145),
          }),
        InvalidArgumentError,
      );
      expect(long.field).to.equal('successMessage');
      expect(apiRequests(t.emu)).to.equal(0);
    });

    it("a static charge with a minimum the service refuses: InvalidRequestError from the emulator's answer", async () => {
      const error = await failure(() =>
        t.api.staticCharges.create({ minAmount: 999, maxAmount: 5000, description: 'd' }),
      );
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error.status).to.equal(400);
      expect(t.emu.control.staticCharges()).to.have.length(0);
    });
    it('an identifier change is refused by the client before the emulator sees it', async () => {
      const charge = await t.api.staticCharges.create({
        minAmount: 1000,
        maxAmount: 1000,
        description: 'd',
        identifier: 'my-shop',
      });
      let caught: unknown;
      try {
        await t.api.staticCharges.update(charge.id, { identifier: 'new-shop' } as never);
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(InvalidArgumentError);
      expect((caught as InvalidArgumentError).field).to.equal('identifier');
      expect(t.emu.control.count('PATCH', `/v0/static-charges/${charge.id}`)).to.equal(0);
    });
  });

  describe('the API key never leaks', () => {
    it('is absent from every error produced against the emulator, and from diagnostics', async () => {
      const key = t.emu.apiKey;
      const seen: unknown[] = [];
      const listener = (message: unknown) => seen.push(message);
      subscribe(REQUEST_CHANNEL, listener);
      const errors: LightningError[] = [];
      try {
        const userId = t.emu.control.createUser({ email: 'u@example.com' });
        errors.push(await failure(() => t.api.withdrawalRequests.get('missing'))); // 404
        errors.push(
          await failure(() => t.api.withdrawalRequests.create({ amount: 1, description: 'd' })),
        ); // 400
        errors.push(await failure(() => t.api.widgetUsers.deplete({ user_id: userId, amount: 1 }))); // TX3017
        t.emu.control.faults.add({ method: 'GET', path: '/v0/wallet', status: 503 });
        errors.push(await failure(() => t.api.wallet.get())); // ServiceError
        t.emu.control.faults.clear();
        t.emu.control.faults.add({ path: '/v0/payments', status: 429, retryAfter: 3600 });
        errors.push(
          await failure(() =>
            t.api.payments.send({ amount: 1, description: 'd', internalId: 'i' }),
          ),
        ); // RateLimitError
        t.emu.control.faults.clear();
        t.emu.control.faults.add({ path: '/v0/withdrawal-requests', mode: 'process-then-destroy' });
        errors.push(
          await failure(() =>
            t.api.withdrawalRequests.create({ amount: 10_000, description: 'd' }),
          ),
        ); // AmbiguousResultError with a socket error as cause
        t.emu.control.faults.clear();
        errors.push(
          await failure(() => t.api.widgetUsers.acceptDisclosures(userId, []), LightningError),
        ); // client-side
        t.emu.control.revokeKey(key);
        errors.push(await failure(() => t.api.wallet.get())); // 401 for this very key
        await t.emu.close();
        errors.push(await failure(() => t.api.wallet.get())); // connection refused
      } finally {
        unsubscribe(REQUEST_CHANNEL, listener);
      }

      expect(errors.map((e) => e.constructor)).to.deep.equal([
        NotFoundError,
        InvalidRequestError,
        InsufficientPointsError,
        ServiceError,
        RateLimitError,
        AmbiguousResultError,
        InvalidArgumentError,
        AuthenticationError,
        ConnectionError,
      ]);
      expect(errors[5]?.cause).to.be.instanceOf(Error);
      expect(errors[8]?.cause).to.be.instanceOf(Error);
      for (const error of errors) {
        for (const text of [
          error.message,
          error.stack ?? '',
          String(error),
          JSON.stringify(error),
          inspect(error, { depth: null, showHidden: true }),
          inspect(error.cause, { depth: null, showHidden: true }),
        ]) {
          expect(text, error.name).not.to.contain(key);
        }
      }
      expect(seen.length).to.be.greaterThan(errors.length);
      expect(JSON.stringify(seen)).not.to.contain(key);
      expect(inspect(t.api, { depth: null, showHidden: true })).not.to.contain(key);
      expect(JSON.stringify(t.api)).not.to.contain(key);
    });
  });
});
