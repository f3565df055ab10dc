/**
 * `npm start` as an operator stops it: the arena's process, sent SIGTERM (or Ctrl-C), shuts
 * Colyseus down, closes the ledger through Colyseus's own shutdown hook, and exits 0 without an
 * error line (a second signal handler of ours used to race Colyseus's and print
 * "error during shutdown: already_shutting_down"). Before that, what it prints opens the
 * operator's console: a link with a key made for this run, which a wrong key does not open.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { nodeArgs } from '../support/node-child.js';
import { freePort } from '../support/ports.js';
import { readyLine } from '../support/ready-line.js';

describe('arena: stopping the process', function () {
  this.timeout(90_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`exits 0 on ${signal}, with no error printed`, async () => {
      const start = fileURLToPath(new URL('../../examples/arena/start.ts', import.meta.url));
      const child = spawn(process.execPath, await nodeArgs(start), {
        env: { ...process.env, PORT: String(await freePort()), LIGHTNING_API_KEY: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        err += d;
      });
      const exited = once(child, 'exit');
      try {
        await readyLine(child, 'Payments run on the built-in emulator', 'the arena', 60_000);
        if (signal === 'SIGTERM') await opensTheConsole(out);
        child.kill(signal);
        const [code] = await exited;
        expect(code, `${out}\n${err}`).to.equal(0);
        expect(`${out}\n${err}`).to.not.match(/error during shutdown|already_shutting_down/);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    });
  }
});

/** The printed console link: its key kept as a cookie, then the console's page and reads. */
async function opensTheConsole(printed: string): Promise<void> {
  const link = /Console: +(http:\/\/\S+\/operator\?key=\S+)/.exec(printed)?.[1];
  expect(link, printed).to.be.a('string');
  const url = new URL(link as string);
  const signIn = await fetch(url, { redirect: 'manual' });
  expect(signIn.status).to.equal(303);
  expect(signIn.headers.get('location')).to.equal('/lightning/console');
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const page = await fetch(new URL('/lightning/console', url), { headers: { cookie } });
  expect(page.status).to.equal(200);
  expect(await page.text()).to.include('Lightning console');
  const overview = await fetch(new URL('/lightning/console/api/overview', url), {
    headers: { cookie, accept: 'application/json' },
  });
  expect(overview.status).to.equal(200);
  const without = await fetch(new URL('/lightning/console', url));
  expect(without.status).to.equal(401);
  url.searchParams.set('key', 'a-wrong-key');
  expect((await fetch(url, { redirect: 'manual' })).status).to.equal(401);
}
