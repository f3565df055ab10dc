/**
 * `npm run bench`: runs every benchmark (or the ones named: `client`, `screen`, `scale`,
 * `presence`, `ledgers`, `loop`, `rate`, `fair`, `matches`, `path`, `tabs`) and prints one table of absolute figures and
 * ratios. bench/README.md
 * says how each is measured and what its limit is.
 *
 *   npm run bench                  all of them, under five minutes on 2 cores
 *   npm run bench -- client scale  some of them
 *   npm run bench -- ledgers --against 090dc5b   benchmark 5 beside an older checkout's ledger
 */
import { benchClient } from './client.js';
import { benchFair } from './fair.js';
import { benchLedgers } from './ledgers.js';
import { benchLoop } from './loop.js';
import { benchMatches } from './matches.js';
import { benchPath } from './path.js';
import { benchPresence } from './presence.js';
import { benchRate } from './rate.js';
import { benchScale } from './scale.js';
import { benchScreen } from './screen.js';
import { printGoals, printTable, type Row } from './support/table.js';
import { benchTabs } from './tabs.js';

const benches: Record<string, () => Promise<Row[]>> = {
  client: async () => (await benchClient()).rows,
  screen: () => benchScreen(),
  scale: async () => {
    const { rows, profile } = await benchScale();
    profiles.push(['3 scale: game server CPU profile, top costs', profile]);
    return rows;
  },
  presence: () => benchPresence(),
  ledgers: () => benchLedgers(),
  loop: () => benchLoop(),
  rate: () => benchRate(),
  fair: () => benchFair(),
  matches: () => benchMatches(),
  tabs: () => benchTabs(),
  path: async () => {
    const { rows, lines } = await benchPath();
    profiles.push(["10 path: a room reward()'s modules by layer, and the calls up a layer", lines]);
    return rows;
  },
};

const profiles: [string, string[]][] = [];
// `--against REF` (benchmark 5, ledgers.ts) takes a value, which names no benchmark.
const args = process.argv.slice(2);
const wanted = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '--against');
const names = wanted.length > 0 ? wanted : Object.keys(benches);
const rows: Row[] = [];
const started = performance.now();
for (const name of names) {
  const bench = benches[name];
  if (!bench) throw new Error(`no benchmark '${name}' (have: ${Object.keys(benches).join(', ')})`);
  const t = performance.now();
  process.stderr.write(`running ${name}...\n`);
  rows.push(...(await bench()));
  process.stderr.write(`  ${name} took ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}
console.log(
  `\ncolyseus-lightning benchmarks, ${new Date().toISOString().slice(0, 10)}, node ${process.version}`,
);
printTable(rows);
printGoals(rows);
for (const [title, lines] of profiles) {
  console.log(`\n${title}`);
  for (const line of lines) console.log(`  ${line}`);
}
console.log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
