/**
 * `npm run soak`: the fault soak of soak/runner.ts, from the command line. Prints progress on
 * stderr, then the figures table and every violation on stdout; exits 1 if an invariant broke.
 *
 *   npm run soak                      2,000 ops
 *   npm run soak -- --ops 10000       the long form
 *   npm run soak -- --ops 400 --seed 7
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { printFigures } from './figures.js';
import { runSoak } from './runner.js';

const args = z
  .object({
    ops: z.coerce.number().int().min(20).max(1_000_000).default(2_000),
    seed: z.coerce.number().int().min(0).optional(),
  })
  .parse(
    parseArgs({
      options: { ops: { type: 'string' }, seed: { type: 'string' } },
      strict: true,
    }).values,
  );

const result = await runSoak({
  ops: args.ops,
  ...(args.seed === undefined ? {} : { seed: args.seed }),
  log: (line) => process.stderr.write(`${line}\n`),
});
console.log(
  `\ncolyseus-lightning fault soak, ${new Date().toISOString()}, node ${process.version}\n`,
);
printFigures(result.figures, (line) => console.log(line));
for (const check of result.checks) {
  if (check.violations.length === 0) continue;
  console.log(`\nVIOLATED: ${check.name}`);
  for (const v of check.violations.slice(0, 20)) console.log(`  - ${v}`);
  if (check.violations.length > 20) console.log(`  ... and ${check.violations.length - 20} more`);
}
if (!result.ok) {
  if (result.output) console.log(`\ngame processes said:\n${result.output.slice(-5_000)}`);
  console.log(`\nFAILED (seed ${result.seed})`);
  process.exitCode = 1;
} else {
  console.log(`\nall invariants held (seed ${result.seed})`);
}
