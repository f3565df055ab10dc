#!/usr/bin/env node
// The package's command line. Uses the built dist/ when present; in a checkout without a
// build it registers tsx and runs the TypeScript sources, so `npx colyseus-lightning`
// works from the repo itself.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const built = new URL('dist/emulator/cli.js', root);
let cli;
if (existsSync(fileURLToPath(built))) {
  cli = await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(new URL('src/emulator/cli.ts', root).href);
}
await cli.main(process.argv.slice(2));
