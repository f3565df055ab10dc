import { expect } from 'chai';
import { ManualClock } from '../../src/emulator/index.js';
import { call, useEmulator, useReceiver } from './helpers.js';

describe('emulator: payments', () => {
  const t = useEmulator({ walletMsat: 100_000 });
  const r = useReceiver();

  it('sends a payment: debits the wallet, answers the resource, calls back once', async () => {
    const res = await call(t.emu, 'POST', '/v0/payments', {
      body: {
        amount: '40000',
        description: 'prize',
        internalId: 'p-1',
        callbackUrl: `${r.receiver.url}/pay`,
        lnAddress: 'player@example.com',
      },
    });
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    const p = res.body.data;
    expect(p).to.include({
      unit: 'msats',
      amount: '40000',
      fee: '0',
      status: 'completed',
      description: 'prize',
      internalId: 'p-1',
      callbackUrl: `${r.receiver.url}/pay`,
      lnAddress: 'player@example.com',
    });
    expect(p.processedAt).to.be.a('string');
    expect(t.emu.control.wallet()).to.equal(60_000);
    expect((await call(t.emu, 'GET', `/v0/payments/${p.id}`)).body.data).to.deep.equal(p);
    await t.emu.control.callbacks.idle();
    const [delivery] = await r.receiver.waitFor(1);
    expect(delivery?.body).to.include({ id: p.id, status: 'completed' });
    expect(r.receiver.received).to.have.length(1);
  });

  it('refuses an insufficient wallet and bad bodies with 400, debiting nothing', async () => {
    const short = await call(t.emu, 'POST', '/v0/payments', {
      body: { amount: '100001', description: 'x', internalId: 'i' },
    });
    expect(short.status).to.equal(400);
    expect(short.body).to.include({ success: false });
    expect(short.body.message).to.match(/insufficient/i);
    for (const body of [
      { amount: 1000, description: 'x', internalId: 'i' },
      { amount: '1000', internalId: 'i' },
      { amount: '1000', description: 'x' },
      { amount: '0', description: 'x', internalId: 'i' },
    ]) {
      expect(
        (await call(t.emu, 'POST', '/v0/payments', { body })).status,
        JSON.stringify(body),
      ).to.equal(400);
    }
    expect(t.emu.control.wallet()).to.equal(100_000);
    expect(t.emu.control.payments()).to.have.length(0);
  });

  it('404 for an unknown payment', async () => {
    expect((await call(t.emu, 'GET', '/v0/payments/nope')).status).to.equal(404);
  });
});

describe('emulator: payments that take time', () => {
  const clock = new ManualClock();
  const t = useEmulator(() => ({ clock, paymentDelayMs: 2000 }));
  const r = useReceiver();

  it('are processing first, then completed with a callback when the clock moves', async () => {
    const res = await call(t.emu, 'POST', '/v0/payments', {
      body: { amount: '1000', description: 'x', internalId: 'i', callbackUrl: r.receiver.url },
    });
    expect(res.body.data.status).to.equal('processing');
    clock.advance(2000);
    expect(
      (await call(t.emu, 'GET', `/v0/payments/${res.body.data.id}`)).body.data.status,
    ).to.equal('completed');
    await t.emu.control.callbacks.idle();
    expect((await r.receiver.waitFor(1))[0]?.body.status).to.equal('completed');
  });
});
