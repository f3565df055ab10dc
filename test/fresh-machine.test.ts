/**
 * `npm test` on a fresh machine (issue 16, finding 13): the pretest step says what is missing
 * and how to install it, and the suites that need redis-server or Chromium skip with one loud
 * line, except under CI, where they fail. Each case runs in a child process with the tool's
 * path pointing nowhere.
 */
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mocha = resolve(root, 'node_modules/mocha/bin/mocha.js');
const nowhere = {
  REDIS_SERVER: '/nonexistent/redis-server',
  CHROMIUM_PATH: '/nonexistent/chromium',
};

async function attempt(file: string, args: string[], env: Record<string, string>) {
  const { CI: _ci, ...rest } = process.env;
  return run(process.execPath, [file, ...args], { cwd: root, env: { ...rest, ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout + stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      out: err.stdout + err.stderr,
    }),
  );
}

describe('a fresh machine', function () {
  this.timeout(60_000);

  it('pretest names what is missing and the command that installs it, and lets the tests run', async () => {
    const { code, out } = await attempt('scripts/pretest.mjs', [], {
      ...nowhere,
      LIGHTNING_TEST_NO_APT: '1',
    });
    expect(code).to.equal(0);
    expect(out)
      .to.include('redis-server not found')
      .and.include('sudo apt-get install -y redis-server')
      .and.include('chromium not found')
      .and.include('sudo apt-get install -y chromium');
  });

  it('skips the Redis suites (the cluster test) with one loud line naming the install command', async () => {
    const { code, out } = await attempt(mocha, ['test/cluster/cluster.test.ts'], nowhere);
    expect(code).to.equal(0);
    expect(out.match(/!! redis-server not found/g)).to.have.length(1);
    expect(out)
      .to.include('sudo apt-get install -y redis-server')
      .and.match(/\d+ pending/);
    expect(out).to.include('0 passing');
  });

  it('fails them instead when CI is set', async () => {
    const { code, out } = await attempt(mocha, ['test/cluster/cluster.test.ts'], {
      ...nowhere,
      CI: '1',
    });
    expect(code).to.not.equal(0);
    expect(out).to.include('CI must not skip it');
  });
});
