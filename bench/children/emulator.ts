/**
 * The emulator in its own process for the scale and screen benchmarks. Prints
 * `{url, apiKey}` once listening, then answers JSON commands on stdin, one line each:
 *
 *   {"cmd":"claim","ids":[...]}   claims each withdrawal request as the player's wallet would
 *   {"cmd":"callbacks","drop":b}  drops (or delivers) the status callbacks from now on
 *
 * Argument `--drop-callbacks` starts with callbacks dropped (the benchmark POSTs them itself).
 */
import { createInterface } from 'node:readline';
import { startEmulator } from '../../src/emulator/index.js';

const emulator = await startEmulator({
  walletMsat: 1e15,
  callbacks: { drop: process.argv.includes('--drop-callbacks') },
});
const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
reply({ url: emulator.url, apiKey: emulator.apiKey });

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { cmd: string; ids?: string[]; drop?: boolean };
  if (command.cmd === 'claim') {
    const started = performance.now();
    let failed = 0;
    for (const id of command.ids ?? []) {
      if (emulator.control.claimWithdrawal(id).status !== 'OK') failed++;
    }
    reply({
      claimed: (command.ids?.length ?? 0) - failed,
      failed,
      ms: performance.now() - started,
    });
  } else if (command.cmd === 'callbacks') {
    emulator.control.callbacks.set({ drop: command.drop === true });
    reply({ ok: true });
  } else {
    reply({ error: `unknown command ${command.cmd}` });
  }
}
await emulator.close();
