// Builds dist/ for both module systems: ESM with declarations in dist/, CommonJS in dist/cjs/
// (marked by its own package.json), so a CommonJS game gets the same copy of @colyseus/core
// and @colyseus/schema as its rooms, not the ESM one beside it. The client kit
// (colyseus-lightning/client) is built with the rest; its browser bundle is then made once,
// minified, to print its size (what a game's page adds, QR included), and not shipped.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const tsc = (project) => execFileSync('tsc', ['-p', project], { stdio: 'inherit' });
rmSync('dist', { recursive: true, force: true });
tsc('tsconfig.build.json');
// The CommonJS twin emits the same program the ESM build just checked: noCheck (tsconfig.cjs.json).
tsc('tsconfig.cjs.json');
mkdirSync('dist/cjs', { recursive: true });
writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);
// The stores' SQL (src/ledger/sql/), read at run time beside the module that finds it: in both
// builds, so each finds its own.
for (const out of ['dist/ledger/sql', 'dist/cjs/ledger/sql']) {
  cpSync('src/ledger/sql', out, { recursive: true });
}
// `import.meta` cannot be in CommonJS: the one module that locates files by it (ledger/files.ts:
// the SQLite ledger's worker thread, the stores' SQL) gets its CommonJS twin, which finds the
// same names from __dirname.
writeFileSync(
  'dist/cjs/ledger/files.js',
  `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ledgerFile = (name) => require("node:url").pathToFileURL(require("node:path").join(__dirname, name));
`,
);
rmSync('dist/cjs/ledger/files.js.map');

/** Goal of issue 25: the client kit under 25 KB minified, QR included. */
const CLIENT_GOAL = 25 * 1024;
const bundle = await build({
  entryPoints: ['dist/client/index.js'],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  write: false,
  metafile: true,
});
const bytes = bundle.outputFiles[0]?.contents.length ?? 0;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(
  `colyseus-lightning/client: ${kb(bytes)} minified for browsers, QR included (goal: under ${kb(CLIENT_GOAL)})`,
);
// A warning here; test/client/size.test.ts is what holds the goal.
if (bytes > CLIENT_GOAL) console.warn('  over the goal: see what grew with esbuild --analyze');
