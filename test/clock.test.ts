import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ManualClock, sleep } from '../src/clock.js';

describe('clock: sleep', () => {
  it('resolves on a ManualClock only when time has moved far enough', async () => {
    const clock = new ManualClock();
    let woke = false;
    const waiting = sleep(clock, 1_000).then(() => {
      woke = true;
    });
    clock.advance(999);
    await Promise.resolve();
    expect(woke).to.equal(false);
    clock.advance(1);
    await waiting;
    expect(woke).to.equal(true);
  });

  // A script whose only pending work is a retry wait must finish it, not exit with an
  // unsettled top-level await (exit code 13), as it would on an unref'd timer.
  it('keeps the process alive on the system clock while someone awaits it', async () => {
    const clock = new URL('../src/clock.ts', import.meta.url).href;
    const script = `import { sleep, systemClock } from '${clock}';
await sleep(systemClock, 20);
console.log('woke');`;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '--eval',
      script,
    ]);
    expect(stdout.trim()).to.equal('woke');
  });
});
