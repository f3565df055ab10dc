/**
 * Where the SQLite ledger's worker thread file is: beside this module, as `sqlite-worker.js`
 * (under tsx, which maps the name to sqlite-worker.ts, as in dist/). The CommonJS build cannot
 * hold `import.meta`: scripts/build.mjs replaces this module in dist/cjs/ with its CommonJS
 * twin (the same file, found from __dirname).
 */
// biome-ignore lint/suspicious/noTsIgnore: an error in the CommonJS build only (TS1343), whose copy build.mjs replaces; expect-error would fail the ESM one.
// @ts-ignore
export const sqliteWorkerUrl: URL = new URL('./sqlite-worker.js', import.meta.url);
