import { expect } from 'chai';
import { ManualClock } from '../../src/emulator/index.js';
import { call, useEmulator, useReceiver } from './helpers.js';

const charge = (body: Record<string, unknown> = {}) => ({
  body: { minAmount: '10000', maxAmount: '50000', description: 'entry fee', ...body },
});

describe('emulator: static charges', () => {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const t = useEmulator(() => ({ clock, walletMsat: 0 }));
  const r = useReceiver();

  it('creates an active charge with 0 slots and an LNURL-pay code', async () => {
    const res = await call(
      t.emu,
      'POST',
      '/v0/static-charges',
      charge({
        successMessage: 'Good luck!',
        allowedSlots: 2,
        internalId: 'room-1',
        callbackUrl: `${r.receiver.url}/sc`,
        identifier: 'arena',
      }),
    );
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    const c = res.body.data;
    expect(c).to.include({
      unit: 'msats',
      slots: 0,
      minAmount: '10000',
      maxAmount: '50000',
      expiresAt: null,
      internalId: 'room-1',
      description: 'entry fee',
      callbackUrl: `${r.receiver.url}/sc`,
      allowedSlots: 2,
      successMessage: 'Good luck!',
      status: 'active',
    });
    expect(c.invoice.request).to.match(/^LNURL1/);
    expect(c.invoice.uri).to.equal(`lightning:${c.invoice.request}`);
    expect((await call(t.emu, 'GET', `/v0/static-charges/${c.id}`)).body.data).to.deep.equal(c);
  });

  it('validates the body (400)', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ minAmount: 10000 }, /minAmount/],
      [{ maxAmount: 'lots' }, /maxAmount/],
      [{ minAmount: '60000' }, /exceed/],
      [{ successMessage: 'x'.repeat(145) }, /successMessage/],
      [{ allowedSlots: 0 }, /allowedSlots/],
      [{ description: undefined }, /description/],
      [{ callbackUrl: 'ftp://x' }, /callbackUrl/],
      [{ expiresAt: 'tomorrow' }, /expiresAt/],
    ];
    for (const [body, message] of cases) {
      const res = await call(t.emu, 'POST', '/v0/static-charges', charge(body));
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    const ok = await call(
      t.emu,
      'POST',
      '/v0/static-charges',
      charge({ successMessage: 'x'.repeat(144) }),
    );
    expect(ok.status).to.equal(200);
  });

  it('each payment raises slots, credits the wallet and calls back; full charges turn inactive', async () => {
    const { body } = await call(
      t.emu,
      'POST',
      '/v0/static-charges',
      charge({ allowedSlots: 2, callbackUrl: `${r.receiver.url}/sc` }),
    );
    const id = body.data.id;
    const { control } = t.emu;
    expect(control.payStaticCharge(id, 5_000).status).to.equal('ERROR'); // below minAmount
    expect(control.payStaticCharge(id, 60_000).status).to.equal('ERROR'); // above maxAmount
    expect(control.payStaticCharge(id, 20_000).status).to.equal('OK');
    expect(control.wallet()).to.equal(20_000);
    let read = await call(t.emu, 'GET', `/v0/static-charges/${id}`);
    expect(read.body.data).to.include({ slots: 1, status: 'active' });
    expect(control.payStaticCharge(id).status).to.equal('OK'); // minAmount by default
    read = await call(t.emu, 'GET', `/v0/static-charges/${id}`);
    expect(read.body.data).to.include({ slots: 2, status: 'inactive' });
    expect(control.wallet()).to.equal(30_000);
    const refused = control.payStaticCharge(id, 20_000);
    expect(refused).to.deep.include({ status: 'ERROR' });
    expect(control.wallet()).to.equal(30_000);

    await control.callbacks.idle();
    const received = await r.receiver.waitFor(2);
    expect(received.map((d) => [d.body.id, d.body.slots, d.body.status])).to.deep.equal([
      [id, 1, 'active'],
      [id, 2, 'inactive'],
    ]);
  });

  it('an expired charge refuses payments and reports expired', async () => {
    const expiresAt = new Date(clock.now() + 10_000).toISOString();
    const { body } = await call(
      t.emu,
      'POST',
      '/v0/static-charges',
      charge({ expiresAt, callbackUrl: r.receiver.url }),
    );
    expect(body.data.expiresAt).to.equal(expiresAt);
    clock.advance(10_000);
    await t.emu.control.callbacks.idle();
    expect((await r.receiver.waitFor(1))[0]?.body).to.include({
      id: body.data.id,
      status: 'expired',
    });
    expect(
      (await call(t.emu, 'GET', `/v0/static-charges/${body.data.id}`)).body.data.status,
    ).to.equal('expired');
    expect(t.emu.control.payStaticCharge(body.data.id).status).to.equal('ERROR');
    expect(t.emu.control.wallet()).to.equal(0);
  });

  it('PATCH updates fields but keeps the id and the code', async () => {
    const { body } = await call(t.emu, 'POST', '/v0/static-charges', charge({ allowedSlots: 1 }));
    const original = body.data;
    t.emu.control.payStaticCharge(original.id);
    const res = await call(t.emu, 'PATCH', `/v0/static-charges/${original.id}`, {
      body: {
        minAmount: '20000',
        maxAmount: '20000',
        description: 'new fee',
        successMessage: 'Thanks',
        allowedSlots: 3,
        internalId: 'room-2',
        callbackUrl: `${r.receiver.url}/new`,
        expiresAt: new Date(clock.now() + 3_600_000).toISOString(),
      },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({
      id: original.id,
      minAmount: '20000',
      maxAmount: '20000',
      description: 'new fee',
      successMessage: 'Thanks',
      allowedSlots: 3,
      internalId: 'room-2',
      slots: 1,
      status: 'active', // more slots lift it out of inactive
    });
    expect(res.body.data.invoice).to.deep.equal(original.invoice);

    const bad = await call(t.emu, 'PATCH', `/v0/static-charges/${original.id}`, {
      body: { minAmount: '90000' },
    });
    expect(bad.status).to.equal(400);
    const unknown = await call(t.emu, 'PATCH', `/v0/static-charges/${original.id}`, {
      body: { slots: 0 },
    });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.message).to.match(/slots/);
    const long = await call(t.emu, 'PATCH', `/v0/static-charges/${original.id}`, {
      body: { successMessage: 'y'.repeat(145) },
    });
    expect(long.status).to.equal(400);
  });

  it('hides charges of other projects (404 on GET and PATCH)', async () => {
    const { body } = await call(t.emu, 'POST', '/v0/static-charges', charge());
    const other = t.emu.control.createProject();
    expect(
      (await call(t.emu, 'GET', `/v0/static-charges/${body.data.id}`, { key: other.apiKey }))
        .status,
    ).to.equal(404);
    const patch = await call(t.emu, 'PATCH', `/v0/static-charges/${body.data.id}`, {
      key: other.apiKey,
      body: { description: 'mine' },
    });
    expect(patch.status).to.equal(404);
    expect(t.emu.control.staticCharges()[0]?.description).to.equal('entry fee');
  });
});
