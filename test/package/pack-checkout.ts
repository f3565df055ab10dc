/**
 * `npm pack` of this checkout as a clean clone holds it, whose `prepack` builds dist/, as
 * publishing does. Shared by pack.test.ts and first-hour.ts.
 */
import { execFile } from 'node:child_process';
import { cpSync, realpathSync, symlinkSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { root } from './readme-steps.js';

const run = promisify(execFile);

export interface Packed {
  tarball: string;
  files: string[];
}

/** Left out of the copy that is packed: what a clean checkout does not hold. */
const NOT_IN_A_CHECKOUT = new Set(['node_modules', '.git', 'dist', 'test-artifacts']);

/**
 * Packs a copy of this checkout into `dir`. The copy (its node_modules linked) is a clean
 * checkout's state, and the build's dist/ lands there, not in this checkout, where the bin
 * would prefer it to the sources other suites run at once.
 */
export async function pack(dir: string): Promise<Packed> {
  const checkout = join(dir, 'checkout');
  cpSync(root, checkout, {
    recursive: true,
    filter: (from) => !NOT_IN_A_CHECKOUT.has(relative(root, from).split(sep)[0] ?? ''),
  });
  symlinkSync(realpathSync(join(root, 'node_modules')), join(checkout, 'node_modules'), 'dir');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: checkout,
    maxBuffer: 16 * 1024 * 1024,
  });
  // npm prints the build's output before the JSON when prepack writes to stdout.
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as [
    { filename: string; files: { path: string }[] },
  ];
  return { tarball: join(dir, info.filename), files: info.files.map((f) => f.path) };
}
