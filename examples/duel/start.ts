/** `npm run example:duel`: builds the duel's client, starts its server, says where to open it. */
import { startDuel } from './main.js';

const duel = await startDuel();
console.log(`\n  Duel:       ${duel.url}   (open it in two browser windows)`);
console.log(
  `  Client:     ${(duel.bundleBytes / 1024).toFixed(0)} KB bundled with React by esbuild`,
);
if (duel.lightning.service.emulator) {
  console.log(
    `  Dev wallet: ${duel.lightning.service.emulator.devWalletUrl}   (press Pay / Claim there)`,
  );
  console.log('  Payments run on the built-in emulator: no real money moves.\n');
}
// Ctrl-C and SIGTERM: Colyseus's own handler shuts the duel down (main.ts closes the ledger).
