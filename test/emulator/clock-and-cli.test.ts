import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { request } from 'undici';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { call } from './helpers.js';

describe('emulator: ManualClock', () => {
  it('runs due timers in deadline order inside advance(), never early', () => {
    const clock = new ManualClock(1000);
    const seen: Array<[string, number]> = [];
    clock.setTimer(3000, () => seen.push(['b', clock.now()]));
    clock.setTimer(2000, () => seen.push(['a', clock.now()]));
    const cancel = clock.setTimer(2500, () => seen.push(['never', clock.now()]));
    cancel();
    clock.advance(999);
    expect(seen).to.deep.equal([]);
    clock.advance(5000);
    expect(seen).to.deep.equal([
      ['a', 2000],
      ['b', 3000],
    ]);
    expect(clock.now()).to.equal(6999);
    expect(clock.pendingTimers).to.equal(0);
    expect(() => clock.set(0)).to.throw(RangeError);
  });

  it('control.tick() applies expiries for clocks without timers', async () => {
    let now = Date.UTC(2030, 0, 1);
    const emu = await startEmulator({ clock: { now: () => now } });
    try {
      const res = await call(emu, 'POST', '/v0/withdrawal-requests', {
        body: { amount: '10000', description: 'x', expiresIn: 3600 },
      });
      now += 3_600_000;
      emu.control.tick();
      expect(emu.control.withdrawalRequests()[0]?.status).to.equal('expired');
      expect(res.body.data.status).to.equal('pending');
    } finally {
      await emu.close();
    }
  });
});

describe('emulator: CLI', () => {
  it('`colyseus-lightning emulator --port 0 --json` prints its URL and keys and serves', async () => {
    const bin = fileURLToPath(new URL('../../bin/colyseus-lightning.js', import.meta.url));
    const child = spawn(
      process.execPath,
      [bin, 'emulator', '--port', '0', '--json', '--wallet-msat', '5000000'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      for await (const chunk of child.stdout) {
        out += chunk;
        if (out.includes('\n')) break;
      }
      const info = JSON.parse(out.split('\n')[0] ?? '');
      expect(info.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(info.apiKey).to.be.a('string');
      const res = await request(`${info.url}/v0/wallet`, { headers: { apikey: info.apiKey } });
      expect(await res.body.json()).to.deep.include({ data: { unit: 'sats', balance: 5000 } });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
