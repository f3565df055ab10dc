import { expect } from 'chai';
import { LN_ADDRESS_DOMAIN, ManualClock } from '../../src/emulator/index.js';
import { call, useEmulator, useReceiver } from './helpers.js';

const SEND = '/v0/ln-address/send-payment';
const alice = `alice@${LN_ADDRESS_DOMAIN}`;

describe('emulator: Lightning addresses of test players', () => {
  const t = useEmulator({ walletMsat: 100_000 });
  const r = useReceiver();

  it('pays an address: debits the wallet, records the payment, calls back once', async () => {
    const res = await call(t.emu, 'POST', SEND, {
      body: {
        lnAddress: 'Alice@Emulator.Test',
        amount: '40000',
        comment: 'gg',
        internalId: 'p-1',
        callbackUrl: `${r.receiver.url}/pay`,
      },
    });
    expect(res.status).to.equal(200);
    const p = res.body.data;
    expect(p).to.include({
      unit: 'msats',
      amount: '40000',
      status: 'completed',
      lnAddress: alice,
      comment: 'gg',
      description: 'gg',
      internalId: 'p-1',
      callbackUrl: `${r.receiver.url}/pay`,
    });
    expect(p.preimage).to.match(/^[0-9a-f]{64}$/);
    expect(t.emu.control.wallet()).to.equal(60_000);
    expect((await call(t.emu, 'GET', `/v0/payments/${p.id}`)).body.data).to.deep.equal(p);
    expect(t.emu.control.lnAddressPayments(alice).map((x) => x.id)).to.deep.equal([p.id]);
    expect(t.emu.control.lnAddressPayments('bob@emulator.test')).to.deep.equal([]);
    await t.emu.control.callbacks.idle();
    const [delivery] = await r.receiver.waitFor(1);
    expect(delivery?.body).to.include({ id: p.id, status: 'completed', lnAddress: alice });
    expect(r.receiver.received).to.have.length(1);
  });

  it('refuses, with 400 and nothing debited: other domains, invalid addresses, a short wallet, bad bodies', async () => {
    t.emu.control.setLnAddress('carol@emulator.test', { valid: false });
    const bodies: unknown[] = [
      { lnAddress: 'bob@example.com', amount: '1000' },
      { lnAddress: 'carol@emulator.test', amount: '1000' },
      { lnAddress: 'no-at-sign', amount: '1000' },
      { lnAddress: alice, amount: '100001' },
      { lnAddress: alice, amount: '999' },
      { lnAddress: alice, amount: 1000 },
      { amount: '1000' },
      { lnAddress: alice, amount: '1000', comment: 'x'.repeat(256) },
    ];
    for (const body of bodies) {
      const res = await call(t.emu, 'POST', SEND, { body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.success).to.equal(false);
    }
    expect(t.emu.control.wallet()).to.equal(100_000);
    expect(t.emu.control.payments()).to.have.length(0);
    // Valid again once the rule is lifted.
    t.emu.control.setLnAddress('Carol@emulator.test', null);
    expect((await call(t.emu, 'POST', SEND, { body: bodies[1] })).status).to.equal(200);
  });

  it('validate: true for a test player, false for another domain or an invalid one', async () => {
    const valid = await call(t.emu, 'GET', `/v0/ln-address/validate/${encodeURIComponent(alice)}`);
    expect(valid.status).to.equal(200);
    expect(valid.body.data.valid).to.equal(true);
    expect(valid.body.data.metadata).to.include({ tag: 'payRequest', minSendable: 1000 });
    t.emu.control.setLnAddress(alice, { valid: false });
    for (const address of [alice, 'bob@example.com', 'nonsense']) {
      const res = await call(t.emu, 'GET', `/v0/ln-address/validate/${address}`);
      expect(res.body.data, address).to.deep.equal({ valid: false });
    }
  });

  it('failPayments: accepted, then failed, and the wallet gets the amount back', async () => {
    t.emu.control.setLnAddress(alice, { failPayments: true });
    const res = await call(t.emu, 'POST', SEND, {
      body: { lnAddress: alice, amount: '5000', callbackUrl: r.receiver.url },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ status: 'failed', preimage: null, confirmedAt: null });
    expect(t.emu.control.wallet()).to.equal(100_000);
    await t.emu.control.callbacks.idle();
    expect((await r.receiver.waitFor(1))[0]?.body.status).to.equal('failed');
  });

  it('faults apply: process-then-destroy pays once and drops the answer', async () => {
    t.emu.control.faults.add({ method: 'POST', path: SEND, mode: 'process-then-destroy' });
    const err = await call(t.emu, 'POST', SEND, { body: { lnAddress: alice, amount: '1000' } })
      .then(() => null)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect(t.emu.control.lnAddressPayments(alice)).to.have.length(1);
    expect(t.emu.control.wallet()).to.equal(99_000);
  });
});

describe('emulator: Lightning address payments that take time', () => {
  const clock = new ManualClock();
  const t = useEmulator(() => ({ clock, paymentDelayMs: 2000 }));

  it('are processing first, then completed when the clock moves', async () => {
    const res = await call(t.emu, 'POST', SEND, { body: { lnAddress: alice, amount: '1000' } });
    expect(res.body.data.status).to.equal('processing');
    clock.advance(2000);
    const again = await call(t.emu, 'GET', `/v0/payments/${res.body.data.id}`);
    expect(again.body.data.status).to.equal('completed');
  });
});
