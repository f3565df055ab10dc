/** `npm start`: runs the arena and prints where to open it. */
import { startArena } from './main.js';

const arena = await startArena();
console.log(`\n  Arena:      ${arena.url}   (open it in two browser windows)`);
// The key is printed only when it was made for this run (never ARENA_OPERATOR_KEY's).
if (arena.operator?.generated) {
  console.log(`  Console:    ${arena.consoleUrl}   (operator; a key for this run only)`);
} else if (arena.operator) {
  console.log('  Console:    /operator?key=<ARENA_OPERATOR_KEY>');
}
if (arena.lightning.service.emulator) {
  console.log(`  Dev wallet: ${arena.lightning.service.emulator.devWalletUrl}`);
  console.log('  Payments run on the built-in emulator: no real money moves.\n');
} else {
  console.log(`  Payments:   the real service; callbacks at ${process.env.PUBLIC_URL}/lightning\n`);
}
// Ctrl-C and SIGTERM: Colyseus's own handler shuts the arena down (see main.ts).
