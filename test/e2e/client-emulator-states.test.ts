/**
 * State transitions driven through the emulator's control (the player's wallet, the clock)
 * and read back with the real client: withdrawal requests, static charges, payments, and
 * deplete's idempotency.
 */

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { AmbiguousResultError, InvalidRequestError } from '../../src/api/index.js';
import { ManualClock } from '../../src/emulator/index.js';
import { failure, useClientAndEmulator } from './setup.js';

describe('e2e client -> emulator: state transitions', () => {
  let clock: ManualClock;
  const t = useClientAndEmulator(() => {
    clock = new ManualClock();
    return { clock };
  });

  describe('withdrawal request', () => {
    it('pending -> completed by a claim: wallet debited by the amount, once', async () => {
      const before = (await t.api.wallet.get()).balance;
      const wr = await t.api.withdrawalRequests.create({
        amount: 75_000n,
        description: 'prize',
        expiresIn: 60,
      });
      expect(wr.status).to.equal('pending');
      // Creation reserves nothing.
      expect((await t.api.wallet.get()).balance).to.equal(before);

      expect(t.emu.control.claimWithdrawal(wr.id)).to.deep.equal({ status: 'OK' });
      const read = await t.api.withdrawalRequests.get(wr.id);
      expect(read.status).to.equal('completed');
      expect(read.id).to.equal(wr.id);
      expect((await t.api.wallet.get()).balance).to.equal(before - 75);
      expect(t.emu.control.wallet()).to.equal(before * 1000 - 75_000);

      // A second claim is refused and debits nothing.
      const second = t.emu.control.claimWithdrawal(wr.id);
      expect(second.status).to.equal('ERROR');
      expect((await t.api.wallet.get()).balance).to.equal(before - 75);
      expect((await t.api.withdrawalRequests.get(wr.id)).status).to.equal('completed');
    });

    it('pending -> expired when expiresIn passes; a claim then fails and debits nothing', async () => {
      const wr = await t.api.withdrawalRequests.create({
        amount: 20_000,
        description: 'late prize',
        expiresIn: 60,
      });
      clock.advance(59_999);
      expect((await t.api.withdrawalRequests.get(wr.id)).status).to.equal('pending');
      clock.advance(1);
      const read = await t.api.withdrawalRequests.get(wr.id);
      expect(read.status).to.equal('expired');
      expect(read.expiresAt).to.equal(wr.expiresAt);

      const claim = t.emu.control.claimWithdrawal(wr.id);
      expect(claim.status).to.equal('ERROR');
      expect(t.emu.control.wallet()).to.equal(1_000_000_000);
      expect((await t.api.withdrawalRequests.get(wr.id)).status).to.equal('expired');
    });

    it('a claim after the wallet was drained fails and leaves the request pending', async () => {
      const wr = await t.api.withdrawalRequests.create({ amount: 50_000, description: 'prize' });
      await t.api.payments.send({
        amount: 1_000_000_000 - 40_000,
        description: 'drain',
        internalId: 'ops',
      });
      expect(t.emu.control.claimWithdrawal(wr.id).status).to.equal('ERROR');
      expect((await t.api.withdrawalRequests.get(wr.id)).status).to.equal('pending');
      expect((await t.api.wallet.get()).balance).to.equal(40);
    });
  });

  describe('static charge', () => {
    it('slots rise with each payment, the wallet is credited, inactive after allowedSlots', async () => {
      const charge = await t.api.staticCharges.create({
        minAmount: 5_000,
        maxAmount: 9_000,
        description: 'Entry fee',
        allowedSlots: 2,
      });
      const start = t.emu.control.wallet();

      const first = t.emu.control.payStaticCharge(charge.id);
      expect(first).to.include({ status: 'OK', chargeId: charge.id, amountMsat: 5_000 });
      let read = await t.api.staticCharges.get(charge.id);
      expect(read).to.include({ slots: 1, status: 'active' });

      expect(t.emu.control.payStaticCharge(charge.id, 9_000).status).to.equal('OK');
      read = await t.api.staticCharges.get(charge.id);
      expect(read).to.include({ slots: 2, allowedSlots: 2, status: 'inactive' });
      expect(t.emu.control.wallet()).to.equal(start + 14_000);

      const third = t.emu.control.payStaticCharge(charge.id);
      expect(third.status).to.equal('ERROR');
      read = await t.api.staticCharges.get(charge.id);
      expect(read).to.include({ slots: 2, status: 'inactive' });
      expect(t.emu.control.wallet()).to.equal(start + 14_000);
    });

    it('refuses a payment outside [minAmount, maxAmount]: slots unchanged', async () => {
      const charge = await t.api.staticCharges.create({
        minAmount: 5_000,
        maxAmount: 9_000,
        description: 'd',
      });
      expect(t.emu.control.payStaticCharge(charge.id, 9_001).status).to.equal('ERROR');
      expect(t.emu.control.payStaticCharge(charge.id, 4_999).status).to.equal('ERROR');
      expect((await t.api.staticCharges.get(charge.id)).slots).to.equal(0);
    });

    it('PATCH keeps the id and invoice.request, and more slots make it active again', async () => {
      const charge = await t.api.staticCharges.create({
        minAmount: 1_000,
        maxAmount: 1_000,
        description: 'Fixed fee',
        allowedSlots: 1,
      });
      expect(t.emu.control.payStaticCharge(charge.id).status).to.equal('OK');
      expect((await t.api.staticCharges.get(charge.id)).status).to.equal('inactive');

      const updated = await t.api.staticCharges.update(charge.id, {
        allowedSlots: 3,
        successMessage: 'Thanks again',
      });
      expect(updated.id).to.equal(charge.id);
      expect(updated.invoice.request).to.equal(charge.invoice.request);
      expect(updated.invoice.uri).to.equal(charge.invoice.uri);
      expect(updated).to.include({ slots: 1, allowedSlots: 3, status: 'active' });

      expect(t.emu.control.payStaticCharge(charge.id).status).to.equal('OK');
      const read = await t.api.staticCharges.get(charge.id);
      expect(read).to.include({ slots: 2, status: 'active', successMessage: 'Thanks again' });
      expect(read.invoice.request).to.equal(charge.invoice.request);
    });
    it('active -> expired when an expiresAt set by PATCH passes; payments are then refused', async () => {
      const charge = await t.api.staticCharges.create({
        minAmount: 1_000,
        maxAmount: 1_000,
        description: 'Happy hour',
      });
      const expiresAt = new Date(clock.now() + 60_000).toISOString();
      const updated = await t.api.staticCharges.update(charge.id, { expiresAt });
      expect(updated).to.include({ expiresAt, status: 'active' });
      clock.advance(60_000);
      expect((await t.api.staticCharges.get(charge.id)).status).to.equal('expired');
      expect(t.emu.control.payStaticCharge(charge.id).status).to.equal('ERROR');
      expect((await t.api.staticCharges.get(charge.id)).slots).to.equal(0);
    });
  });

  describe('payments', () => {
    it('debit the wallet by the amount (msat), and a payment the wallet cannot cover debits nothing', async () => {
      t.emu.control.setWallet(100_000);
      const payment = await t.api.payments.send({
        amount: 30_000,
        description: 'payout',
        internalId: 'p1',
      });
      expect(payment.status).to.equal('completed');
      expect(t.emu.control.wallet()).to.equal(70_000);
      expect((await t.api.wallet.get()).balance).to.equal(70);

      const error = await failure(() =>
        t.api.payments.send({ amount: 70_001, description: 'too much', internalId: 'p1' }),
      );
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error.status).to.equal(400);
      expect(t.emu.control.wallet()).to.equal(70_000);
      expect(t.emu.control.payments()).to.have.length(1);
    });
  });

  describe('deplete idempotency', () => {
    it('the same key twice: the same transfer_id, one debit', async () => {
      const userId = t.emu.control.createUser({ email: 'a@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 1000);
      const key = randomUUID();
      const first = await t.api.widgetUsers.deplete({
        user_id: userId,
        amount: 300,
        idempotency_key: key,
      });
      const second = await t.api.widgetUsers.deplete({
        user_id: userId,
        amount: 300,
        idempotency_key: key,
      });
      expect(second.transfer_id).to.equal(first.transfer_id);
      expect(first.idempotencyKey).to.equal(key);
      expect(second.idempotencyKey).to.equal(key);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(700);
      expect(t.emu.control.transfers()).to.have.length(1);
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(2);
    });

    it('without a key: each call is a new transfer (the client generates a fresh key)', async () => {
      const userId = t.emu.control.createUser({ email: 'b@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 1000);
      const first = await t.api.widgetUsers.deplete({ user_id: userId, amount: 100 });
      const second = await t.api.widgetUsers.deplete({ user_id: userId, amount: 100 });
      expect(second.idempotencyKey).not.to.equal(first.idempotencyKey);
      expect(second.transfer_id).not.to.equal(first.transfer_id);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(800);
    });

    it('the same key with another amount is refused (409) and debits nothing more', async () => {
      const userId = t.emu.control.createUser({ email: 'c@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 1000);
      const key = randomUUID();
      await t.api.widgetUsers.deplete({ user_id: userId, amount: 100, idempotency_key: key });
      const error = await failure(() =>
        t.api.widgetUsers.deplete({ user_id: userId, amount: 200, idempotency_key: key }),
      );
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error).to.include({ status: 409, serviceCode: 'IDEMPOTENCY_KEY_REUSED' });
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(900);
    });

    it("the client's generated key is re-sent by its own retry after a process-then-destroy fault", async () => {
      const userId = t.emu.control.createUser({ email: 'd@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 1000);
      const fault = t.emu.control.faults.add({
        method: 'POST',
        path: '/api/v1/widget/users/deplete',
        mode: 'process-then-destroy',
        times: 1,
      });
      const result = await t.api.widgetUsers.deplete({ user_id: userId, amount: 250 });
      expect(fault.hits).to.equal(1);
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(2);
      // The first attempt debited; the retry carried the same generated key and got that transfer.
      const transfers = t.emu.control.transfers();
      expect(transfers).to.have.length(1);
      expect(transfers[0]).to.include({
        transferId: result.transfer_id,
        idempotencyKey: result.idempotencyKey,
      });
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(750);
    });

    it('when every attempt loses its answer: a retryable AmbiguousResultError whose key settles it once', async () => {
      const userId = t.emu.control.createUser({ email: 'e@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 1000);
      t.emu.control.faults.add({
        method: 'POST',
        path: '/api/v1/widget/users/deplete',
        mode: 'process-then-destroy',
        times: 3,
      });
      const error = await failure(() =>
        t.api.widgetUsers.deplete({ user_id: userId, amount: 400 }),
      );
      expect(error).to.be.instanceOf(AmbiguousResultError);
      const ambiguous = error as AmbiguousResultError;
      expect(ambiguous.retryable).to.equal(true);
      expect(ambiguous.attempts).to.equal(3);
      expect(ambiguous.idempotencyKey).to.be.a('string');
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(3);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(600);

      const settled = await t.api.widgetUsers.deplete({
        user_id: userId,
        amount: 400,
        idempotency_key: ambiguous.idempotencyKey,
      });
      expect(settled.transfer_id).to.equal(t.emu.control.transfers()[0]?.transferId);
      expect(t.emu.control.transfers()).to.have.length(1);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(600);
    });

    it('two concurrent depletes with one key: one transfer, one debit', async () => {
      const userId = t.emu.control.createUser({ email: 'f@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 1000);
      const key = randomUUID();
      const results = await Promise.all(
        [1, 2, 3].map(() =>
          t.api.widgetUsers.deplete({ user_id: userId, amount: 100, idempotency_key: key }),
        ),
      );
      expect(new Set(results.map((r) => r.transfer_id)).size).to.equal(1);
      expect(t.emu.control.transfers()).to.have.length(1);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(900);
    });

    it('a key refused with TX3017 succeeds once the points arrive, debiting once', async () => {
      const userId = t.emu.control.createUser({ email: 'g@example.com' });
      t.emu.control.setPoints(userId, 'USDZ', 50);
      const key = randomUUID();
      const body = { user_id: userId, amount: 100, idempotency_key: key };
      await failure(() => t.api.widgetUsers.deplete(body));
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(50);
      t.emu.control.setPoints(userId, 'USDZ', 150);
      const first = await t.api.widgetUsers.deplete(body);
      const again = await t.api.widgetUsers.deplete(body);
      expect(again.transfer_id).to.equal(first.transfer_id);
      expect(t.emu.control.points(userId, 'USDZ')).to.equal(50);
    });
  });
});

describe('e2e client -> emulator: a payment in flight', () => {
  let clock: ManualClock;
  const t = useClientAndEmulator(() => {
    clock = new ManualClock();
    return { clock, paymentDelayMs: 5_000 };
  });

  it('processing -> completed: the wallet is debited at once, the status read back moves', async () => {
    const sent = await t.api.payments.send({
      amount: 42_000,
      description: 'slow',
      internalId: 'p',
    });
    expect(sent.status).to.equal('processing');
    expect(sent.preimage).to.equal(null);
    expect(t.emu.control.wallet()).to.equal(1_000_000_000 - 42_000);
    clock.advance(4_999);
    expect((await t.api.payments.get(sent.id)).status).to.equal('processing');
    clock.advance(1);
    const done = await t.api.payments.get(sent.id);
    expect(done.status).to.equal('completed');
    expect(done.preimage).to.match(/^[0-9a-f]{64}$/);
    expect(done.processedAt).to.equal(new Date(clock.now()).toISOString());
    expect(t.emu.control.wallet()).to.equal(1_000_000_000 - 42_000);
  });
});
