// `npm test`'s checks before the suites: the type checks of the package and of both example
// clients, and Biome, at once (each is one process, mostly on one core). Each one's output is
// printed whole when it ends; any failure fails the step, after all have ended.
import { spawn } from 'node:child_process';

const checks = [
  ['tsc', '--noEmit', '-p', '.'],
  ['tsc', '--noEmit', '-p', 'examples/arena/client'],
  ['tsc', '--noEmit', '-p', 'examples/duel/client'],
  ['biome', 'check', '.'],
];

const results = await Promise.all(
  checks.map(
    ([command, ...args]) =>
      new Promise((resolve) => {
        const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (d) => {
          output += d;
        });
        child.stderr.on('data', (d) => {
          output += d;
        });
        child.on('error', (err) =>
          resolve({ line: [command, ...args].join(' '), code: 1, output: String(err) }),
        );
        child.on('close', (code) => resolve({ line: [command, ...args].join(' '), code, output }));
      }),
  ),
);
for (const { line, code, output } of results) {
  process.stdout.write(`> ${line}\n${output}`);
  if (code !== 0) process.stdout.write(`  (exit ${code})\n`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
