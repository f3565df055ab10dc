/**
 * The emulator stays on this machine and its dev wallet answers only its own page (issue 22,
 * finding 7): a host other than loopback is refused unless `allowRemote`, and then it says the
 * address it really bound; `/_emulator/` sends no CORS headers, and its control routes (the
 * state with every reward code, claim, pay, grant) need the key of this start, which
 * `devWalletUrl` carries in its fragment. The same attacks from a real browser page are in
 * test/e2e/dev-wallet-browser.test.ts.
 */
import { networkInterfaces } from 'node:os';
import { expect } from 'chai';
import { request } from 'undici';
import { startEmulator } from '../../src/emulator/index.js';
import { ConfigurationError } from '../../src/errors.js';
import { createLightning } from '../../src/lightning.js';
import { call, useEmulator } from './helpers.js';

const quiet = { warn() {} };

/** An IPv4 address of this machine other than loopback, when it has one. */
function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** Whether `url` answers at all (any status), or the connection is refused. */
async function answers(url: string, apiKey: string): Promise<number | 'refused'> {
  try {
    const res = await request(url, { headers: { apikey: apiKey }, headersTimeout: 3000 });
    await res.body.dump();
    return res.statusCode;
  } catch {
    return 'refused';
  }
}

describe('emulator: stays on loopback unless allowRemote', () => {
  it('refuses 0.0.0.0, :: and a LAN address as host (ConfigurationError naming allowRemote)', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.2', 'game.example.com']) {
      const err = await startEmulator({ host, logger: quiet }).catch((e: unknown) => e);
      expect(err, host).to.be.instanceOf(ConfigurationError);
      expect((err as ConfigurationError).field).to.equal('host');
      expect((err as Error).message).to.include('allowRemote: true');
    }
    // createLightning refuses it at once, before anything starts.
    let thrown: unknown;
    try {
      createLightning({
        emulator: { host: '0.0.0.0' },
        logger: { info() {}, warn() {}, error() {} },
      });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(ConfigurationError);
    expect((thrown as ConfigurationError).field).to.equal('options.emulator.host');
  });

  it('takes loopback hosts, and by default is not reachable from the network', async () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      const emu = await startEmulator({ host, logger: quiet });
      try {
        expect(emu.loopbackOnly, host).to.equal(true);
        expect(await answers(`${emu.url}/v0/wallet`, emu.apiKey)).to.equal(200);
      } finally {
        await emu.close();
      }
    }
    const lan = lanAddress();
    if (!lan) return;
    const emu = await startEmulator({ logger: quiet });
    try {
      const port = new URL(emu.url).port;
      expect(await answers(`http://${lan}:${port}/v0/wallet`, emu.apiKey)).to.equal('refused');
    } finally {
      await emu.close();
    }
  });

  it('with allowRemote on 0.0.0.0, says it listens on 0.0.0.0 (not 127.0.0.1) and is reachable there', async () => {
    const emu = await startEmulator({ host: '0.0.0.0', allowRemote: true, logger: quiet });
    try {
      const port = Number(new URL(emu.url).port);
      expect(emu.listening).to.equal(`0.0.0.0:${port}`);
      expect(emu.loopbackOnly).to.equal(false);
      expect(await answers(`${emu.url}/v0/wallet`, emu.apiKey)).to.equal(200);
      const lan = lanAddress();
      if (lan) expect(await answers(`http://${lan}:${port}/v0/wallet`, emu.apiKey)).to.equal(200);
    } finally {
      await emu.close();
    }

    // The game's start line says so too, as a warning.
    const lines: string[] = [];
    const lightning = createLightning({
      emulator: { host: '0.0.0.0', allowRemote: true },
      logger: { info() {}, warn: (m) => void lines.push(m), error() {} },
    });
    try {
      await lightning.ready();
      const port = new URL(lightning.service.emulator?.url ?? '').port;
      expect(lines.join('\n')).to.include(
        `listening on 0.0.0.0:${port}: other machines can reach it`,
      );
    } finally {
      await lightning.close();
    }
  });

  it('refuses a publicUrl that is not http(s)', async () => {
    for (const publicUrl of [
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      '/x',
    ]) {
      const err = await startEmulator({ publicUrl, logger: quiet }).catch((e: unknown) => e);
      expect(err, publicUrl).to.be.instanceOf(ConfigurationError);
      expect((err as ConfigurationError).field).to.equal('publicUrl');
    }
  });
});

describe('emulator: /_emulator/ answers only its own page', () => {
  const t = useEmulator();
  const other = { origin: 'https://some-page.example' };

  async function reward() {
    const wr = (
      await call(t.emu, 'POST', '/v0/withdrawal-requests', {
        body: { amount: '15000', description: 'prize', internalId: 'alice' },
      })
    ).body.data;
    return wr as { id: string; lnurl: string };
  }

  it('sends no CORS headers on any /_emulator/ route, preflight or not', async () => {
    const { id } = await reward();
    const paths = [
      '/_emulator/',
      '/_emulator/state',
      `/_emulator/withdrawal-requests/${id}/claim`,
      '/_emulator/pay-invoice',
      '/_emulator/widget',
    ];
    for (const path of paths) {
      const preflight = await call(t.emu, 'OPTIONS', path, {
        key: null,
        headers: {
          ...other,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-emulator-key',
        },
      });
      expect(preflight.headers['access-control-allow-origin'], path).to.equal(undefined);
      expect(preflight.headers['access-control-allow-headers'], path).to.equal(undefined);
      const get = await call(t.emu, 'GET', path, { key: null, headers: other });
      expect(get.headers['access-control-allow-origin'], path).to.equal(undefined);
    }
  });

  it('answers the state (reward codes) and claims only with the key of this start', async () => {
    const wr = await reward();
    const before = t.emu.control.wallet();
    const wrong: Record<string, string>[] = [
      {},
      { 'x-emulator-key': 'guess' },
      { 'x-emulator-key': '' },
    ];
    for (const headers of wrong) {
      const state = await call(t.emu, 'GET', '/_emulator/state', { key: null, headers });
      expect(state.status).to.equal(401);
      expect(JSON.stringify(state.body)).to.not.include(wr.id);
      const claim = await call(t.emu, 'POST', `/_emulator/withdrawal-requests/${wr.id}/claim`, {
        key: null,
        headers,
      });
      expect(claim.status).to.equal(401);
      const pay = await call(t.emu, 'POST', '/_emulator/pay-invoice', {
        key: null,
        headers,
        body: { pr: 'lnbc1' },
      });
      expect(pay.status).to.equal(401);
    }
    // Even the service's API key is not the dev wallet's key.
    const withApiKey = await call(t.emu, 'GET', '/_emulator/state');
    expect(withApiKey.status).to.equal(401);
    expect(t.emu.control.withdrawalRequests()[0]?.status).to.equal('pending');
    expect(t.emu.control.wallet()).to.equal(before);

    const key = { 'x-emulator-key': t.emu.controlKey };
    const state = await call(t.emu, 'GET', '/_emulator/state', { key: null, headers: key });
    expect(state.status).to.equal(200);
    expect(JSON.stringify(state.body)).to.include(wr.id);
    const claim = await call(t.emu, 'POST', `/_emulator/withdrawal-requests/${wr.id}/claim`, {
      key: null,
      headers: key,
    });
    expect(claim.body).to.deep.equal({ status: 'OK' });
    expect(t.emu.control.withdrawalRequests()[0]?.status).to.equal('completed');
  });

  it('gives each start its own key, carried by devWalletUrl in its fragment; the page itself holds none', async () => {
    const url = new URL(t.emu.devWalletUrl);
    expect(`${url.origin}${url.pathname}`).to.equal(`${t.emu.url}/_emulator/`);
    expect(url.hash).to.equal(`#key=${t.emu.controlKey}`);
    expect(t.emu.controlKey).to.have.length.of.at.least(32);
    const page = await call(t.emu, 'GET', '/_emulator/', { key: null });
    expect(page.status).to.equal(200);
    expect(page.body).to.not.include(t.emu.controlKey);
    expect(page.headers['referrer-policy']).to.equal('no-referrer');
    const second = await startEmulator({ logger: quiet });
    try {
      expect(second.controlKey).to.not.equal(t.emu.controlKey);
    } finally {
      await second.close();
    }
  });
});
