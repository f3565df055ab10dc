import { expect } from 'chai';
import { ManualClock } from '../../src/emulator/index.js';
import { call, useEmulator, useReceiver } from './helpers.js';

const create = (body: Record<string, unknown>) => ({
  body: { amount: '25000', description: 'reward', internalId: 'player-1', expiresIn: 60, ...body },
});

describe('emulator: withdrawal requests', () => {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const t = useEmulator(() => ({ clock }));
  const r = useReceiver();

  it('creates a pending request with the resource fields of the contract', async () => {
    const res = await call(
      t.emu,
      'POST',
      '/v0/withdrawal-requests',
      create({ callbackUrl: `${r.receiver.url}/cb` }),
    );
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    const wr = res.body.data;
    expect(wr).to.include({
      unit: 'msats',
      amount: '25000',
      status: 'pending',
      description: 'reward',
      internalId: 'player-1',
      callbackUrl: `${r.receiver.url}/cb`,
      fee: '0',
      createdAt: new Date(clock.now()).toISOString(),
      expiresAt: new Date(clock.now() + 60_000).toISOString(),
    });
    expect(wr.id).to.be.a('string');
    expect(wr.invoice.expiresAt).to.equal(wr.expiresAt);
    expect(wr.invoice.request).to.match(/^LNURL1[0-9A-Z]+$/);
    expect(wr.invoice.uri).to.equal(`lightning:${wr.invoice.request}`);
    expect(wr.invoice.fastUri).to.equal(`lightning:${wr.invoice.fastRequest}`);

    const read = await call(t.emu, 'GET', `/v0/withdrawal-requests/${wr.id}`);
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.equal(wr);
  });

  it('validates the body like the service (400 with a message)', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ amount: 25000 }, /amount/],
      [{ amount: '25.5' }, /amount/],
      [{ amount: '-1' }, /amount/],
      [{ amount: '9999' }, /minimum/],
      [{ callbackUrl: 'not a url' }, /callbackUrl/],
      [{ expiresIn: '60' }, /expiresIn/],
      [{ expiresIn: -5 }, /expiresIn/],
    ];
    for (const [body, message] of cases) {
      const res = await call(t.emu, 'POST', '/v0/withdrawal-requests', create(body));
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body).to.include({ success: false });
      expect(res.body.message).to.match(message);
    }
    const missing = await call(t.emu, 'POST', '/v0/withdrawal-requests', {
      body: { description: 'x' },
    });
    expect(missing.status).to.equal(400);
    expect(t.emu.control.withdrawalRequests()).to.have.length(0);
  });

  it('accepts the minimum of 10 sats exactly', async () => {
    const res = await call(t.emu, 'POST', '/v0/withdrawal-requests', create({ amount: '10000' }));
    expect(res.status).to.equal(200);
  });

  it('refuses a request the wallet cannot cover', async () => {
    t.emu.control.setWallet(20_000);
    const res = await call(t.emu, 'POST', '/v0/withdrawal-requests', create({ amount: '25000' }));
    expect(res.status).to.equal(400);
    expect(res.body.message).to.match(/insufficient/i);
  });

  it('a claim completes it once, debits the wallet and calls back once', async () => {
    const before = t.emu.control.wallet();
    const { body } = await call(
      t.emu,
      'POST',
      '/v0/withdrawal-requests',
      create({ callbackUrl: `${r.receiver.url}/cb/1` }),
    );
    const id = body.data.id;
    expect(t.emu.control.wallet()).to.equal(before); // not reserved at creation
    expect(t.emu.control.claimWithdrawal(id)).to.deep.equal({ status: 'OK' });
    expect(t.emu.control.wallet()).to.equal(before - 25_000);
    const read = await call(t.emu, 'GET', `/v0/withdrawal-requests/${id}`);
    expect(read.body.data.status).to.equal('completed');

    const second = t.emu.control.claimWithdrawal(id);
    expect(second.status).to.equal('ERROR');
    expect(t.emu.control.wallet()).to.equal(before - 25_000);

    await t.emu.control.callbacks.idle();
    const received = await r.receiver.waitFor(1);
    expect(received).to.have.length(1);
    expect(received[0]?.path).to.equal('/cb/1');
    expect(received[0]?.body).to.include({
      id,
      status: 'completed',
      amount: '25000',
      unit: 'msats',
    });
    expect(received[0]?.body).to.not.have.property('success'); // the bare object
  });

  it('checks the wallet again at claim time', async () => {
    const { body } = await call(t.emu, 'POST', '/v0/withdrawal-requests', create({}));
    t.emu.control.setWallet(1000);
    const result = t.emu.control.claimWithdrawal(body.data.id);
    expect(result.status).to.equal('ERROR');
    expect(
      (await call(t.emu, 'GET', `/v0/withdrawal-requests/${body.data.id}`)).body.data.status,
    ).to.equal('pending');
    t.emu.control.setWallet(1_000_000);
    expect(t.emu.control.claimWithdrawal(body.data.id).status).to.equal('OK');
  });

  it('expires when the manual clock passes expiresIn, firing the callback without a read', async () => {
    const { body } = await call(
      t.emu,
      'POST',
      '/v0/withdrawal-requests',
      create({ callbackUrl: `${r.receiver.url}/cb/exp` }),
    );
    const id = body.data.id;
    clock.advance(59_999);
    // The expiry is still armed and nothing was queued (callbacks are queued synchronously).
    expect(clock.pendingTimers).to.equal(1);
    expect(t.emu.control.callbackLog).to.have.length(0);
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received).to.have.length(0);
    clock.advance(1);
    expect(clock.pendingTimers).to.equal(0);
    await t.emu.control.callbacks.idle();
    const received = await r.receiver.waitFor(1);
    expect(received[0]?.body).to.include({ id, status: 'expired' });
    expect((await call(t.emu, 'GET', `/v0/withdrawal-requests/${id}`)).body.data.status).to.equal(
      'expired',
    );
    const before = t.emu.control.wallet();
    expect(t.emu.control.claimWithdrawal(id)).to.deep.include({ status: 'ERROR' });
    expect(t.emu.control.wallet()).to.equal(before);
    await t.emu.control.callbacks.idle();
    expect(t.emu.control.callbackLog).to.have.length(1);
    expect(r.receiver.received).to.have.length(1);
  });

  it('hides requests of other projects (404)', async () => {
    const { body } = await call(t.emu, 'POST', '/v0/withdrawal-requests', create({}));
    const other = t.emu.control.createProject({ walletMsat: 1_000_000 });
    const res = await call(t.emu, 'GET', `/v0/withdrawal-requests/${body.data.id}`, {
      key: other.apiKey,
    });
    expect(res.status).to.equal(404);
    expect(res.body.success).to.equal(false);
    expect(t.emu.control.withdrawalRequests(other.projectId)).to.have.length(0);
    expect(t.emu.control.withdrawalRequests(t.emu.projectId)).to.have.length(1);
  });
});

describe('emulator: expiry with the real clock', () => {
  const t = useEmulator();
  const r = useReceiver();

  it('fires the expiry callback from a timer', async () => {
    const res = await call(
      t.emu,
      'POST',
      '/v0/withdrawal-requests',
      create({ expiresIn: 1, callbackUrl: r.receiver.url }),
    );
    const [delivery] = await r.receiver.waitFor(1, 3000);
    expect(delivery?.body).to.include({ id: res.body.data.id, status: 'expired' });
  });
});
