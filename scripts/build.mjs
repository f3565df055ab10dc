// Builds dist/ for both module systems: ESM with declarations in dist/, CommonJS in dist/cjs/
// (marked by its own package.json), so a CommonJS game gets the same copy of @colyseus/core
// and @colyseus/schema as its rooms, not the ESM one beside it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

const tsc = (project) => execFileSync('tsc', ['-p', project], { stdio: 'inherit' });
rmSync('dist', { recursive: true, force: true });
tsc('tsconfig.build.json');
tsc('tsconfig.cjs.json');
mkdirSync('dist/cjs', { recursive: true });
writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);
// `import.meta` cannot be in CommonJS: the one module that locates a file by it (the SQLite
// ledger's worker thread) gets its CommonJS twin, which finds the same file from __dirname.
writeFileSync(
  'dist/cjs/ledger/sqlite-worker-url.js',
  `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.sqliteWorkerUrl = require("node:url").pathToFileURL(require("node:path").join(__dirname, "sqlite-worker.js"));
`,
);
rmSync('dist/cjs/ledger/sqlite-worker-url.js.map');
