import { expect } from 'chai';
import { call, useEmulator } from './helpers.js';

describe('emulator: wallet, keys and routing', () => {
  const t = useEmulator({ walletMsat: 123_456_789 });

  it('GET /v0/wallet answers the v0 envelope with the balance in satoshis', async () => {
    const res = await call(t.emu, 'GET', '/v0/wallet');
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.message).to.be.a('string');
    expect(res.body.data).to.deep.equal({ unit: 'sats', balance: 123_456 });
  });

  it('answers 401 without a key and with an unknown key, in the v0 error envelope', async () => {
    for (const key of [null, 'emu_live_nope']) {
      const res = await call(t.emu, 'GET', '/v0/wallet', { key });
      expect(res.status).to.equal(401);
      expect(res.body.success).to.equal(false);
      expect(res.body.message).to.match(/key/i);
      expect(res.body).to.not.have.property('data');
    }
  });

  it('gives each project its own wallet and keys; a revoked key stops working', async () => {
    const { control } = t.emu;
    const other = control.createProject({ walletMsat: 5_000_000 });
    expect(other.apiKey).to.not.equal(t.emu.apiKey);
    expect(other.sandboxKey).to.be.a('string');
    const res = await call(t.emu, 'GET', '/v0/wallet', { key: other.apiKey });
    expect(res.body.data.balance).to.equal(5000);
    control.setWallet(other.projectId, 7_000_999);
    expect(control.wallet(other.projectId)).to.equal(7_000_999);
    expect(
      (await call(t.emu, 'GET', '/v0/wallet', { key: other.apiKey })).body.data.balance,
    ).to.equal(7000);
    expect(control.wallet()).to.equal(123_456_789);
    control.setWallet(1_000);
    expect(control.wallet()).to.equal(1_000);

    const extra = control.createKey(other.projectId, 'production');
    expect((await call(t.emu, 'GET', '/v0/wallet', { key: extra })).status).to.equal(200);
    control.revokeKey(extra);
    expect((await call(t.emu, 'GET', '/v0/wallet', { key: extra })).status).to.equal(401);
  });

  it('a sandbox key reads the wallet but cannot use the widget interface', async () => {
    expect((await call(t.emu, 'GET', '/v0/wallet', { key: t.emu.sandboxKey })).status).to.equal(
      200,
    );
    const res = await call(t.emu, 'POST', '/api/v1/widget/users', {
      key: t.emu.sandboxKey,
      body: { email: 'a@example.com' },
    });
    expect(res.status).to.equal(403);
    expect(res.body).to.include({ success: false, data: null });
    expect(res.body.error.code).to.be.a('string');
  });

  it('answers unknown routes with 404 JSON and a wrong method with 405', async () => {
    const missing = await call(t.emu, 'GET', '/v0/nothing-here');
    expect(missing.status).to.equal(404);
    expect(missing.headers['content-type']).to.match(/json/);
    expect(missing.body.success).to.equal(false);
    const wrong = await call(t.emu, 'DELETE', '/v0/wallet');
    expect(wrong.status).to.equal(405);
  });

  it('refuses invalid JSON (400) and oversized bodies (413)', async () => {
    const bad = await call(t.emu, 'POST', '/v0/withdrawal-requests', { rawBody: '{"amount":' });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/JSON/);
    const big = await call(t.emu, 'POST', '/v0/withdrawal-requests', {
      body: { amount: '20000', description: 'x'.repeat(70_000) },
    });
    expect(big.status).to.equal(413);
    expect(t.emu.control.withdrawalRequests()).to.have.length(0);
  });

  it('counts requests by method and path', async () => {
    await call(t.emu, 'GET', '/v0/wallet');
    await call(t.emu, 'GET', '/v0/wallet?x=1');
    await call(t.emu, 'POST', '/v0/withdrawal-requests', { body: {} });
    const { control } = t.emu;
    expect(control.count('GET', '/v0/wallet')).to.equal(2);
    expect(control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
    expect(control.count('*', /^\/v0\//)).to.equal(3);
    expect(control.requests.map((r) => r.method)).to.deep.equal(['GET', 'GET', 'POST']);
  });

  it('reset() returns to the start state with the same default keys', async () => {
    const { control } = t.emu;
    await call(t.emu, 'POST', '/v0/withdrawal-requests', {
      body: { amount: '20000', description: 'a' },
    });
    control.setWallet(5);
    const other = control.createProject();
    control.reset();
    expect(control.withdrawalRequests()).to.have.length(0);
    expect(control.wallet()).to.equal(123_456_789);
    expect(control.count('POST', '/v0/withdrawal-requests')).to.equal(0);
    expect((await call(t.emu, 'GET', '/v0/wallet')).status).to.equal(200);
    expect((await call(t.emu, 'GET', '/v0/wallet', { key: other.apiKey })).status).to.equal(401);
  });
});
