/**
 * `npm run loadtest` (`-- --processes 4 --bots 2000 --winners 1000 --rate 100 --seed 1`, or
 * `-- --short`): runs the load test (loadtest/run.ts), prints its figures and every check, and
 * exits 1 when an invariant broke.
 */
import { printFigures } from '../soak/figures.js';
import type { Check } from '../soak/invariants.js';
import { parseOptions } from './options.js';
import { runLoadtest } from './run.js';

const options = {
  ...parseOptions(process.argv.slice(2)),
  log: (line: string) => console.error(line),
  stopOnSignal: true,
};
const result = await runLoadtest(options);
printFigures(result.figures.rows, (line) => console.log(line));
console.log('');
const print = (check: Check) => {
  const mark = check.violations.length === 0 ? 'ok  ' : 'FAIL';
  const excused = check.excused ? `, ${check.excused} excused` : '';
  console.log(`${mark} ${check.name} (${check.checked} checked${excused})`);
  for (const v of check.violations.slice(0, 10)) console.log(`       ${v}`);
  if (check.violations.length > 10)
    console.log(`       ... and ${check.violations.length - 10} more`);
};
for (const check of result.checks) print(check);
console.log(result.ok ? '\nevery invariant held' : '\nAN INVARIANT BROKE');
process.exit(result.ok ? 0 : 1);
