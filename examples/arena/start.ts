/** `npm start`: runs the arena and prints where to open it. */
import { startArena } from './main.js';

const arena = await startArena();
console.log(`\n  Arena:      ${arena.url}   (open it in two browser windows)`);
if (arena.lightning.service.emulator) {
  console.log(`  Dev wallet: ${arena.lightning.service.emulator.devWalletUrl}`);
  console.log('  Payments run on the built-in emulator: no real money moves.\n');
} else {
  console.log(`  Payments:   the real service; callbacks at ${process.env.PUBLIC_URL}/lightning\n`);
}
// Ctrl-C and SIGTERM: Colyseus's own handler shuts the arena down (see main.ts).
