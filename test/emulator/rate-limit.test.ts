import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { request } from 'undici';
import { parseCommandLine } from '../../src/emulator/cli.js';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { ConfigurationError, InvalidArgumentError } from '../../src/errors.js';
import { call, useEmulator } from './helpers.js';

const WALLET = '/v0/wallet';

describe('emulator: rate limit per API key', () => {
  describe('with a limit of 2/s and a burst of 3, on a manual clock', () => {
    let clock: ManualClock;
    const box = useEmulator(() => {
      clock = new ManualClock();
      return { clock, rateLimit: { perSecond: 2, burst: 3 } };
    });

    it('answers the burst, then 429 with Retry-After, counted, until the bucket refills', async () => {
      for (let i = 0; i < 3; i++) expect((await call(box.emu, 'GET', WALLET)).status).to.equal(200);
      const refused = await call(box.emu, 'GET', WALLET);
      expect(refused.status).to.equal(429);
      expect(refused.headers['retry-after']).to.equal('1');
      expect(refused.body).to.include({ success: false });
      expect(box.emu.control.limited).to.equal(1);
      const entries = box.emu.control.requests;
      expect(entries.map((e) => e.limited === true)).to.deep.equal([false, false, false, true]);
      // Half a second at 2/s is one request more, and only one.
      clock.advance(500);
      expect((await call(box.emu, 'GET', WALLET)).status).to.equal(200);
      expect((await call(box.emu, 'GET', WALLET)).status).to.equal(429);
      expect(box.emu.control.limited).to.equal(2);
    });

    it('keeps one bucket per key: another key of the project is not limited by the first', async () => {
      for (let i = 0; i < 3; i++) await call(box.emu, 'GET', WALLET);
      expect((await call(box.emu, 'GET', WALLET)).status).to.equal(429);
      const other = box.emu.control.createKey(box.emu.projectId);
      expect((await call(box.emu, 'GET', WALLET, { key: other })).status).to.equal(200);
    });

    it('refuses before processing: a limited create makes nothing', async () => {
      for (let i = 0; i < 3; i++) await call(box.emu, 'GET', WALLET);
      const body = { amount: '50000', description: 'prize' };
      const refused = await call(box.emu, 'POST', '/v0/withdrawal-requests', { body });
      expect(refused.status).to.equal(429);
      expect(box.emu.control.withdrawalRequests()).to.have.length(0);
    });

    it('is changed and turned off by the control, and back to the start option on reset', async () => {
      box.emu.control.setRateLimit(null);
      for (let i = 0; i < 10; i++)
        expect((await call(box.emu, 'GET', WALLET)).status).to.equal(200);
      box.emu.control.setRateLimit({ perSecond: 1 });
      expect(box.emu.control.rateLimit).to.deep.equal({ perSecond: 1, burst: 1 });
      expect((await call(box.emu, 'GET', WALLET)).status).to.equal(200);
      expect((await call(box.emu, 'GET', WALLET)).status).to.equal(429);
      box.emu.control.reset();
      expect(box.emu.control.limited).to.equal(0);
      expect(box.emu.control.rateLimit).to.deep.equal({ perSecond: 2, burst: 3 });
      expect(() => box.emu.control.setRateLimit({ perSecond: 0 })).to.throw(RangeError);
    });
  });

  describe('by default', () => {
    const box = useEmulator();
    it('limits nothing', async () => {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => call(box.emu, 'GET', WALLET)),
      );
      expect(answers.every((a) => a.status === 200)).to.equal(true);
      expect(box.emu.control.limited).to.equal(0);
      expect(box.emu.control.rateLimit).to.equal(null);
    });
  });

  it('refuses a limit that is not positive', async () => {
    const err = await startEmulator({ rateLimit: { perSecond: -1 } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigurationError);
    expect((err as Error).message).to.match(/rateLimit/);
  });

  it('`emulator --rate-limit 1 --rate-burst 2 --json` says its limit and keeps to it', async () => {
    const bin = fileURLToPath(new URL('../../bin/colyseus-lightning.js', import.meta.url));
    const args = [
      bin,
      'emulator',
      '--port',
      '0',
      '--json',
      '--rate-limit',
      '1',
      '--rate-burst',
      '2',
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      for await (const chunk of child.stdout) {
        out += chunk;
        if (out.includes('\n')) break;
      }
      const info = JSON.parse(out.split('\n')[0] ?? '');
      expect(info.rateLimit).to.deep.equal({ perSecond: 1, burst: 2 });
      const wallet = async () => {
        const res = await request(`${info.url}/v0/wallet`, { headers: { apikey: info.apiKey } });
        await res.body.text();
        return { status: res.statusCode, retryAfter: res.headers['retry-after'] };
      };
      // The burst: two answered, whatever the pace.
      expect([(await wallet()).status, (await wallet()).status]).to.deep.equal([200, 200]);
      // Then one a second: of five sent at once, one meets a 429 that says when to come back
      // (another round only where a slow machine spread the five over seconds).
      let refused: { status: number; retryAfter: unknown } | undefined;
      for (let round = 0; round < 10 && !refused; round++) {
        refused = (await Promise.all(Array.from({ length: 5 }, wallet))).find(
          (a) => a.status === 429,
        );
      }
      expect(refused?.retryAfter).to.match(/^\d+$/);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('takes --rate-limit and --rate-burst on the command line', () => {
    const parsed = parseCommandLine(['emulator', '--rate-limit', '50', '--rate-burst', '80']);
    expect(parsed.command === 'emulator' && parsed.options.rateLimit).to.deep.equal({
      perSecond: 50,
      burst: 80,
    });
    const plain = parseCommandLine(['emulator']);
    expect(plain.command === 'emulator' && plain.options.rateLimit).to.equal(undefined);
    expect(() => parseCommandLine(['emulator', '--rate-burst', '5'])).to.throw(
      InvalidArgumentError,
      /--rate-burst/,
    );
    expect(() => parseCommandLine(['emulator', '--rate-limit', '0'])).to.throw(
      InvalidArgumentError,
      /--rate-limit/,
    );
  });
});
