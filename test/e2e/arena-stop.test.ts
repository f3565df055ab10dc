/**
 * `npm start` as an operator stops it: the arena's process, sent SIGTERM (or Ctrl-C), shuts
 * Colyseus down, closes the ledger through Colyseus's own shutdown hook, and exits 0 without an
 * error line (a second signal handler of ours used to race Colyseus's and print
 * "error during shutdown: already_shutting_down").
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
        await readyLine(child, 'Arena:', 'the arena', 60_000);
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
