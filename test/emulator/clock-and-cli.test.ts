import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { request } from 'undici';
import { InsufficientPointsError } from '../../src/api/errors.js';
import { main, parseCommandLine } from '../../src/emulator/cli.js';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { decodeLnurl } from '../../src/emulator/lnurl.js';
import { InvalidArgumentError } from '../../src/errors.js';
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
        expect(lightning.service.emulator).to.equal(null);
        const reward = await lightning.reward({
          playerId: 'p1',
          amountMsat: 50_000,
          description: 'won',
        });
        expect(reward.status).to.equal('pending');
        const user = await lightning.service.api.widgetUsers.create({
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

const BIN = fileURLToPath(new URL('../../bin/colyseus-lightning.js', import.meta.url));

/**
 * Runs the CLI and waits for it to exit, as a user's shell does; one that started an emulator
 * (it printed where it listens) or is still running after `ms` is stopped and reported as
 * `running`. Three of them start at once: on a loaded machine that takes seconds each.
 */
function runCli(
  args: string[],
  ms = 50_000,
): Promise<{ code: number | 'running'; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let started = false;
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    started = true;
    child.kill('SIGKILL');
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  return new Promise((resolve) => {
    const deadline = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code) => {
      clearTimeout(deadline);
      resolve({ code: started ? 'running' : (code ?? 'running'), out, err });
    });
  });
}

describe('emulator: CLI, bad arguments (issue 22, finding 10)', () => {
  it('says what is wrong and prints one usage line, exit code 2, no stack trace, nothing started', async function () {
    this.timeout(60_000);
    const cases: [string[], string][] = [
      [['emulator', '--public-url', 'javascript:alert(1)'], '--public-url: must be an http(s) URL'],
      [['emulator', '--public-url', 'data:text/html,<b>x</b>'], '--public-url: must be an http(s)'],
      [['emulator', '--game-url', 'javascript:alert(1)//'], '--game-url: must be an http(s) URL'],
      [['emulator', '--prot', '1'], '--prot: unknown option'],
      [['emulator', '--port', 'abc'], '--port: must be a non-negative integer'],
      [['emulator', '--port', '70000'], '--port: must be at most 65535'],
      [['emulator', '--port'], '--port: needs a value'],
      [['emulator', '--host', '0.0.0.0'], '--host: "0.0.0.0" is not a loopback address'],
      [['emulator', '--points', '-5'], '--points: needs a value'],
      [['emulator', '--json=yes'], '--json: takes no value'],
      [['emulator', 'now'], 'arguments: unexpected argument "now"'],
      [['emulatr'], 'command: unknown command "emulatr"'],
    ];
    // Every case through main(), the function the bin runs, with the process's output recorded;
    // one of each kind (a bad value, an unknown option, an unknown command) through the bin
    // itself, so the exit code and stderr are the process's own.
    const inProcess = async (args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
      return { code, out: out.join(''), err: err.join('') };
    };
    const runs = await Promise.all(cases.map(([args]) => inProcess(args)));
    const spawned = [0, 3, 11];
    const processes = await Promise.all(spawned.map((i) => runCli(cases[i]?.[0] ?? [])));
    spawned.forEach((i, n) => {
      const what = `${cases[i]?.[0].join(' ')} (the bin)`;
      expect(processes[n], what).to.deep.equal({ ...runs[i], code: 2 });
    });
    runs.forEach((run, i) => {
      const [args, problem] = cases[i] as [string[], string];
      const what = args.join(' ');
      expect(run.code, what).to.equal(2);
      expect(run.out, what).to.equal('');
      const lines = run.err.trimEnd().split('\n');
      expect(lines, what).to.have.length(2);
      expect(lines[0], what).to.include(`colyseus-lightning: ${problem}`);
      expect(lines[1], what).to.match(/^Usage: colyseus-lightning emulator \[--port <n>\]/);
      expect(run.err, what).to.not.match(/\n\s+at /);
    });
  });

  it('keeps an argument from writing to the terminal: control characters are shown as ?', () => {
    const err = (() => {
      try {
        parseCommandLine(['emulator', '--x\u001b[2J\nfake line']);
      } catch (e) {
        return e;
      }
    })();
    expect(err).to.be.instanceOf(InvalidArgumentError);
    expect((err as Error).message).to.not.match(/\p{Cc}/u);
  });

  it('takes an http(s) --public-url: the codes point at it', async () => {
    const parsed = parseCommandLine(['emulator', '--public-url', 'https://tunnel.example.com/']);
    if (parsed.command !== 'emulator') throw new Error('expected the emulator');
    expect(parsed.options.publicUrl).to.equal('https://tunnel.example.com');
    const emu = await startEmulator({ ...parsed.options, port: 0, logger: { warn() {} } });
    try {
      const res = await request(`${emu.url}/v0/withdrawal-requests`, {
        method: 'POST',
        headers: { apikey: emu.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '10000', description: 'x' }),
      });
      const { data } = (await res.body.json()) as { data: { invoice: { request: string } } };
      expect(decodeLnurl(data.invoice.request)).to.match(
        /^https:\/\/tunnel\.example\.com\/lnurl\//,
      );
    } finally {
      await emu.close();
    }
  });

  it('--host 0.0.0.0 --allow-remote prints the address it bound, 0.0.0.0, not 127.0.0.1', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'emulator', '--port', '0', '--host', '0.0.0.0', '--allow-remote'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      for await (const chunk of child.stdout) {
        out += chunk;
        if (out.includes('Press Ctrl+C')) break;
      }
      const url = out.match(/ {2}url +(\S+)/)?.[1] ?? '';
      const port = new URL(url).port;
      expect(out).to.include(
        `listening on   0.0.0.0:${port} (NOT loopback: other machines can reach it (--allow-remote))`,
      );
    } finally {
      child.kill('SIGTERM');
    }
  });
});
