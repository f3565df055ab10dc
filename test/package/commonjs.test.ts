/**
 * The package as a CommonJS game uses it: built (`npm run build`), resolved by its name through
 * its `exports` (`require` gets dist/cjs), with Colyseus required from the same copy as the
 * game's rooms. The game runs in a child process so that nothing of this process leaks in.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../support/ports.js';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('package: a CommonJS consumer', function () {
  this.timeout(60_000);
  const scratch = join(root, 'test-artifacts', 'cjs-consumer');

  before(async () => {
    await run('npm', ['run', 'build'], { cwd: root });
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(join(scratch, 'node_modules'), { recursive: true });
    // Resolved by name, as an installed package is: through package.json `exports`.
    symlinkSync(root, join(scratch, 'node_modules', 'colyseus-lightning'), 'dir');
  });

  it('requires the package, puts the plugin in a class field and plays a paid entry', async () => {
    const game = join(root, 'test', 'package', 'fixtures', 'cjs-game.cjs');
    const { stdout } = await run(process.execPath, [game], {
      cwd: scratch,
      env: {
        ...process.env,
        NODE_PATH: join(scratch, 'node_modules'),
        PORT: String(await freePort()),
      },
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? '')).to.deep.equal({
      status: 'completed',
      playerId: 'alice',
    });
  });
});
