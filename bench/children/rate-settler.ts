/**
 * One game process of the rate benchmark (bench/rate.ts): a Lightning on the shared PostgreSQL
 * ledger with the game's outbound rate, its reconciler and breaker as in production. Prints
 * `{ready}`; then `{"cmd":"settle","matchId":...,"shares":{...}}` settles that match and answers
 * what became of its payouts and whether payouts paused; `{"cmd":"stop"}` closes it.
 *
 * Args: <json of { emulatorUrl, apiKey, ledgerUrl, schema, perSecond, burst }>
 */
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning } from '../../src/lightning.js';

const args = z
  .strictObject({
    emulatorUrl: z.url(),
    apiKey: z.string().min(1),
    ledgerUrl: z.url(),
    schema: z.string().min(1),
    perSecond: z.number().positive(),
    burst: z.number().min(1),
  })
  .parse(JSON.parse(process.argv[2] ?? '{}'));
const command = z.discriminatedUnion('cmd', [
  z.strictObject({
    cmd: z.literal('settle'),
    matchId: z.string().min(1),
    shares: z.record(z.string(), z.number()),
  }),
  z.strictObject({ cmd: z.literal('stop') }),
]);

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const ledger = new PostgresLedger(args.ledgerUrl, { schema: args.schema });
const lightning = createLightning({
  apiKey: args.apiKey,
  baseUrl: args.emulatorUrl,
  publicUrl: 'http://127.0.0.1:2567',
  logger: quiet,
  ledger,
  rateLimit: { perSecond: args.perSecond, burst: args.burst },
});
await lightning.ready();
let pauses = 0;
lightning.on('paused', () => {
  pauses++;
});
const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
reply({ ready: true, pid: process.pid });

for await (const line of createInterface({ input: process.stdin })) {
  const c = command.parse(JSON.parse(line));
  if (c.cmd === 'stop') break;
  const started = Date.now();
  let view = await lightning.matches.settle(c.matchId, c.shares);
  // A settle with many winners returns with its payouts queued: the run ends when the match
  // has made every payout (by whichever process drained them), read every 20 ms.
  while (view.status !== 'settled' && view.status !== 'aborted') {
    await new Promise((resolve) => setTimeout(resolve, 20));
    view = await lightning.matches.get(c.matchId);
  }
  const statuses: Record<string, number> = {};
  for (const payout of view.payouts) statuses[payout.status] = (statuses[payout.status] ?? 0) + 1;
  reply({
    status: view.status,
    payouts: view.payouts.length,
    statuses,
    pauses,
    paused: lightning.operator.paused !== null,
    startedAt: started,
    endedAt: Date.now(),
  });
}
await lightning.close();
await ledger.close();
