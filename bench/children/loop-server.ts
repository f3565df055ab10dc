/**
 * The measured game server of the loop benchmark (bench/loop.ts; set up by bench-game.ts): Colyseus (through
 * @colyseus/testing, on a free loopback port) with the lightning routes, `--rooms` rooms with the
 * room plugin and a LightningState patching every 50 ms, and a file SqliteLedger with its
 * durable settings (WAL, synchronous=FULL), on its worker thread or, with `--inline`, on the
 * event loop. The reconciler is off. Prints `{url}` once ready, then answers JSON commands:
 *
 *   {"cmd":"phase","ms":M,"rate":R}  measures the event-loop delay (monitorEventLoopDelay,
 *                                    1 ms resolution) for M ms while it creates R rewards a
 *                                    second through the plugin (R = 0: nothing but the rooms);
 *                                    answers {p50, p99, max} in ms and the rewards' {token,
 *                                    remoteId}, for the callbacks of a later phase
 *   {"cmd":"stats"}                  settlements so far
 *
 * Args: <emulatorUrl> <apiKey> <ledgerFile> [--rooms N] [--inline]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { SqliteLedger } from '../../src/ledger/index.js';
import { reply, startBenchGame } from './bench-game.js';

const [emulatorUrl, apiKey, ledgerFile] = process.argv.slice(2);
const at = process.argv.indexOf('--rooms');
const roomCount = at > 0 ? Number(process.argv[at + 1]) : 1000;
const inline = process.argv.includes('--inline');
const game = await startBenchGame({
  emulatorUrl: emulatorUrl as string,
  apiKey: apiKey as string,
  ledger: new SqliteLedger({ path: ledgerFile as string, worker: !inline }),
  rooms: roomCount,
  patchRate: 50,
});
reply({ url: game.url });

let created = 0;
async function reward(items: { token: string; remoteId: string }[]): Promise<void> {
  const n = created++;
  const room = game.rooms[n % game.rooms.length] as (typeof game.rooms)[number];
  items.push(await game.reward(room, `player-${n}`, 'loop'));
}

/** One measured phase: the loop's delay over `ms`, with `rate` rewards a second meanwhile. */
async function phase(ms: number, rate: number) {
  const items: { token: string; remoteId: string }[] = [];
  const pending: Promise<void>[] = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  // Paced by the clock, not by a timer per reward: a late loop catches up, as traffic would.
  while (performance.now() - started < ms) {
    const due = rate > 0 ? Math.floor(((performance.now() - started) / 1000) * rate) : 0;
    while (pending.length < due) pending.push(reward(items));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  delay.disable();
  await Promise.all(pending);
  const ms_ = (ns: number) => ns / 1e6;
  return {
    p50: ms_(delay.percentile(50)),
    p99: ms_(delay.percentile(99)),
    max: ms_(delay.max),
    rewards: pending.length,
    items,
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { cmd: string; ms?: number; rate?: number };
  if (command.cmd === 'phase') {
    reply(await phase(command.ms ?? 2_000, command.rate ?? 0));
  } else if (command.cmd === 'stats') {
    reply({ settled: game.counts.settled });
  } else {
    reply({ error: `unknown command ${command.cmd}` });
  }
}
await game.stop();
