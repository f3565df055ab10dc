/**
 * Payments to Lightning addresses against the emulator: the answer is a payment, the address is
 * checked before anything is sent, a refusal is certain (4xx), and a send whose answer is lost
 * is never sent twice: the unkeyed column of the retry table.
 */
import { expect } from 'chai';
import { AmbiguousResultError, InvalidRequestError } from '../../src/api/errors.js';
import { LN_ADDRESS_DOMAIN } from '../../src/emulator/index.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { apiRequests, failure, useClientAndEmulator } from './setup.js';

const SEND = '/v0/ln-address/send-payment';
const alice = `alice@${LN_ADDRESS_DOMAIN}`;

describe('e2e client -> emulator: Lightning addresses', () => {
  const t = useClientAndEmulator();

  it('lnAddress.sendPayment: one payment, the amount as a digit string, the address in lower case', async () => {
    const before = t.emu.control.wallet();
    const payment = await t.api.lnAddress.sendPayment({
      lnAddress: 'ALICE@emulator.test',
      amount: 21_000n,
      comment: 'Winner',
      internalId: 'player-7',
      callbackUrl: 'http://127.0.0.1:9/cb',
    });
    expect(payment).to.include({
      status: 'completed',
      amount: '21000',
      comment: 'Winner',
      internalId: 'player-7',
      callbackUrl: 'http://127.0.0.1:9/cb',
    });
    expect((payment as { lnAddress?: unknown }).lnAddress).to.equal(alice);
    expect(t.emu.control.wallet()).to.equal(before - 21_000);
    expect((await t.api.payments.get(payment.id)).status).to.equal('completed');
  });

  it('lnAddress.validate: data.valid as the service says', async () => {
    expect((await t.api.lnAddress.validate(alice)).valid).to.equal(true);
    expect((await t.api.lnAddress.validate('bob@example.com')).valid).to.equal(false);
    t.emu.control.setLnAddress(alice, { valid: false });
    expect((await t.api.lnAddress.validate(alice)).valid).to.equal(false);
  });

  it('an address the service cannot pay: InvalidRequestError (certain), nothing debited', async () => {
    const before = t.emu.control.wallet();
    const error = await failure(
      () => t.api.lnAddress.sendPayment({ lnAddress: 'bob@example.com', amount: 1000 }),
      InvalidRequestError,
    );
    expect(error).to.include({ status: 400, retryable: false });
    expect(t.emu.control.wallet()).to.equal(before);
  });

  it('refuses what is not a Lightning address, or a bad amount, sending nothing', async () => {
    const bad: unknown[] = [
      { lnAddress: 'alice', amount: 1000 },
      { lnAddress: '@emulator.test', amount: 1000 },
      { lnAddress: 'alice@', amount: 1000 },
      { lnAddress: 'al ice@emulator.test', amount: 1000 },
      { lnAddress: 'alice@emulator', amount: 1000 },
      { lnAddress: 'a/b@emulator.test', amount: 1000 },
      { lnAddress: 'alice@@emulator.test', amount: 1000 },
      { lnAddress: 'alicé@emulator.test', amount: 1000 },
      { lnAddress: ' alice@emulator.test', amount: 1000 },
      { lnAddress: `${'a'.repeat(65)}@emulator.test`, amount: 1000 },
      { lnAddress: alice, amount: 1.5 },
      { lnAddress: alice, amount: '0' },
      { lnAddress: alice, amount: 1000, comment: 'x'.repeat(256) },
      { lnAddress: alice, amount: 1000, extra: true },
      { lnAddress: alice },
    ];
    for (const input of bad) {
      const err = await t.api.lnAddress
        .sendPayment(input as never)
        .then(() => null)
        .catch((e: unknown) => e);
      expect(err, JSON.stringify(input)).to.be.instanceOf(InvalidArgumentError);
    }
    for (const address of ['', 'alice', 'x@y', '../wallet@emulator.test', 7]) {
      const err = await t.api.lnAddress.validate(address as string).catch((e: unknown) => e);
      expect(err, String(address)).to.be.instanceOf(InvalidArgumentError);
    }
    expect(apiRequests(t.emu)).to.equal(0);
  });

  for (const mode of ['process-then-destroy', 'process-then-hang'] as const) {
    it(`a lost answer (${mode}): AmbiguousResultError after one attempt, one payment made`, async () => {
      const api = t.client({ timeoutMs: 200, maxRetries: 3 });
      t.emu.control.faults.add({ method: 'POST', path: SEND, mode, times: 1 });
      const error = await failure(
        () => api.lnAddress.sendPayment({ lnAddress: alice, amount: 5_000 }),
        AmbiguousResultError,
      );
      expect(error).to.include({ retryable: false, attempts: 1, method: 'POST', path: SEND });
      expect(t.emu.control.count('POST', SEND)).to.equal(1);
      expect(t.emu.control.lnAddressPayments(alice)).to.have.length(1);
    });
  }
});
