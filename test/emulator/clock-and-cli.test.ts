import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { request } from 'undici';
import { InsufficientPointsError } from '../../src/api/errors.js';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { createLightning } from '../../src/lightning.js';
import { quietLogger } from '../support/game.js';
import { freePort } from '../support/ports.js';
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

describe('emulator: CLI, connecting a game', () => {
  it('prints the createLightning options that connect a game, and grants each new player points', async () => {
    const bin = fileURLToPath(new URL('../../bin/colyseus-lightning.js', import.meta.url));
    const gameUrl = `http://127.0.0.1:${await freePort()}`;
    const child = spawn(
      process.execPath,
      [bin, 'emulator', '--port', '0', '--points', '500', '--game-url', gameUrl],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      for await (const chunk of child.stdout) {
        out += chunk;
        if (out.includes('Press Ctrl+C')) break;
      }
      expect(out).to.include('every new player starts with 500 USDZ points');
      // The snippet, as a user copies it.
      const option = (name: string) => out.match(new RegExp(`${name}: '([^']+)'`))?.[1];
      const snippet = {
        apiKey: option('apiKey'),
        baseUrl: option('baseUrl'),
        publicUrl: option('publicUrl'),
      };
      expect(snippet.publicUrl).to.equal(gameUrl);
      const lightning = createLightning({ ...snippet, logger: quietLogger, ledger: ':memory:' });
      try {
        await lightning.ready();
        expect(lightning.emulator).to.equal(null);
        const reward = await lightning.reward({
          playerId: 'p1',
          amountMsat: 50_000,
          description: 'won',
        });
        expect(reward.status).to.equal('pending');
        const user = await lightning.api.widgetUsers.create({
          reference_id: 'p1',
          email: 'p1@example.com',
        });
        const spent = await lightning.spendPoints({ playerId: 'p1', userId: user.id, amount: 500 });
        expect(spent.status).to.equal('completed');
        const short = await lightning
          .spendPoints({ playerId: 'p1', userId: user.id, amount: 1 })
          .catch((err: Error) => err);
        expect(short).to.be.instanceOf(InsufficientPointsError);
      } finally {
        await lightning.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
  });
});
