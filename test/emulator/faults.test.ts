import { once } from 'node:events';
import { expect } from 'chai';
import { request } from 'undici';
import { startEmulator } from '../../src/emulator/index.js';
import { call, useEmulator } from './helpers.js';

const body = { amount: '20000', description: 'reward', internalId: 'p1' };

describe('emulator: injected faults', () => {
  const t = useEmulator();

  it('answers an injected 5xx a given number of times, then recovers', async () => {
    const fault = t.emu.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 503,
      times: 2,
    });
    for (let i = 0; i < 2; i++) {
      const res = await call(t.emu, 'POST', '/v0/withdrawal-requests', { body });
      expect(res.status).to.equal(503);
      expect(res.body).to.include({ success: false });
    }
    expect(t.emu.control.withdrawalRequests()).to.have.length(0);
    expect(fault.hits).to.equal(2);
    expect((await call(t.emu, 'POST', '/v0/withdrawal-requests', { body })).status).to.equal(200);
    expect((await call(t.emu, 'GET', '/v0/wallet')).status).to.equal(200);
  });

  it('answers 429 with Retry-After, on matching routes only', async () => {
    t.emu.control.faults.add({ path: /^\/v0\/withdrawal-requests\//, status: 429, retryAfter: 7 });
    const res = await call(t.emu, 'GET', '/v0/withdrawal-requests/abc');
    expect(res.status).to.equal(429);
    expect(res.headers['retry-after']).to.equal('7');
    expect((await call(t.emu, 'GET', '/v0/wallet')).status).to.equal(200);
    t.emu.control.faults.clear();
    expect((await call(t.emu, 'GET', '/v0/withdrawal-requests/abc')).status).to.equal(404);
  });

  it('uses the widget envelope for faults on widget paths and matches :params', async () => {
    t.emu.control.faults.add({ method: 'PATCH', path: '/api/v1/widget/users/:id', status: 500 });
    const res = await call(t.emu, 'PATCH', '/api/v1/widget/users/u1', {
      body: { email: 'a@example.com' },
    });
    expect(res.status).to.equal(500);
    expect(res.body).to.include({ success: false, data: null });
    expect(res.body.error.code).to.equal('INJECTED_FAULT');
  });

  it('process-then-destroy creates exactly one withdrawal request and sends no answer', async () => {
    t.emu.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    let error: unknown;
    try {
      await call(t.emu, 'POST', '/v0/withdrawal-requests', { body });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(Error);
    expect(t.emu.control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
    const created = t.emu.control.withdrawalRequests();
    expect(created).to.have.length(1);
    expect(created[0]).to.include({ status: 'pending', internalId: 'p1' });
  });

  it('destroy-before-processing creates nothing', async () => {
    t.emu.control.faults.add({
      path: '/v0/withdrawal-requests',
      mode: 'destroy-before-processing',
    });
    let error: unknown;
    await call(t.emu, 'POST', '/v0/withdrawal-requests', { body }).catch((e) => {
      error = e;
    });
    expect(error).to.be.instanceOf(Error);
    expect(t.emu.control.withdrawalRequests()).to.have.length(0);
  });

  it('adds latency, and hangs until the client gives up', async () => {
    // Held back: a client that waits 50 ms gives up before a 300 ms latency ends (its timer is
    // armed before the request reaches the emulator, whose timer is the longer one).
    t.emu.control.faults.add({ path: '/v0/wallet', latencyMs: 300, times: 1 });
    let late: unknown;
    await request(`${t.emu.url}/v0/wallet`, {
      headers: { apikey: t.emu.apiKey },
      signal: AbortSignal.timeout(50),
    }).catch((e) => {
      late = e;
    });
    expect((late as { name?: string }).name).to.equal('TimeoutError');
    // Then answered: a latency is no hang.
    t.emu.control.faults.add({ path: '/v0/wallet', latencyMs: 120, times: 1 });
    expect((await call(t.emu, 'GET', '/v0/wallet')).status).to.equal(200);

    t.emu.control.faults.add({ path: '/v0/wallet', mode: 'hang', times: 1 });
    let error: unknown;
    await request(`${t.emu.url}/v0/wallet`, {
      headers: { apikey: t.emu.apiKey },
      headersTimeout: 200,
    }).catch((e) => {
      error = e;
    });
    expect((error as { code?: string }).code).to.equal('UND_ERR_HEADERS_TIMEOUT');
  });

  it('takes faults at start and restores them on reset()', async () => {
    const emu = await startEmulator({ faults: [{ path: '/v0/wallet', status: 502 }] });
    try {
      expect((await call(emu, 'GET', '/v0/wallet')).status).to.equal(502);
      emu.control.faults.clear();
      expect((await call(emu, 'GET', '/v0/wallet')).status).to.equal(200);
      emu.control.reset();
      expect((await call(emu, 'GET', '/v0/wallet')).status).to.equal(502);
    } finally {
      await emu.close();
    }
  });

  it('closes with a hanging request open', async () => {
    const emu = await startEmulator({ faults: [{ mode: 'hang' }] });
    const arrived = once(emu.server, 'request');
    const pending = request(`${emu.url}/v0/wallet`).catch(() => 'aborted');
    await arrived;
    expect(emu.control.count('GET', '/v0/wallet')).to.equal(1);
    await emu.close();
    expect(await pending).to.equal('aborted');
  });
});
