#!/usr/bin/env node
// The package's command line. Checks the Node version first (package.json `engines`, the one
// place the bin reads it from), so an old Node gets one clear line instead of a crash deep in
// a dependency. Uses the built dist/, which every packed copy ships (`prepack` builds it); in
// a checkout without a build it runs the TypeScript sources through tsx, a devDependency.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const { engines } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const want = engines.node.replace(/^[^\d]*/, '');
const newer = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return true;
};
if (!newer(process.versions.node, want)) {
  process.stderr.write(
    `colyseus-lightning needs Node ${want} or newer (node:sqlite, undici 8); this is Node ${process.versions.node}. Install a newer Node (e.g. \`nvm install 24\`) and run again.\n`,
  );
  process.exit(1);
}

const built = new URL('dist/emulator/cli.js', root);
let cli;
if (existsSync(fileURLToPath(built))) {
  cli = await import(built.href);
} else {
  const tsx = await import('tsx/esm/api').catch(() => null);
  if (!tsx) {
    process.stderr.write('colyseus-lightning: dist/ is missing; run `npm run build` first.\n');
    process.exit(1);
  }
  tsx.register();
  cli = await import(new URL('src/emulator/cli.ts', root).href);
}
// main resolves with the exit code (2: a bad argument, printed as one line and a usage line).
const code = await cli.main(process.argv.slice(2));
if (typeof code === 'number') process.exitCode = code;
