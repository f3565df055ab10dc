/**
 * The ledger's own files, found beside this module (src/ledger/ under tsx, dist/ledger/ once
 * built): the SQLite worker thread (`sqlite-worker.js`, which tsx maps to sqlite-worker.ts) and
 * the stores' SQL (`sql/`, which scripts/build.mjs copies into dist/). The CommonJS build cannot
 * hold `import.meta`: build.mjs replaces this module in dist/cjs/ with its CommonJS twin, which
 * finds the same names from __dirname.
 */
// biome-ignore lint/suspicious/noTsIgnore: an error in the CommonJS build only (TS1343), whose copy build.mjs replaces; expect-error would fail the ESM one.
// @ts-ignore
const here: string = import.meta.url;

/** The URL of `name`, relative to this module's folder. */
export function ledgerFile(name: string): URL {
  return new URL(name, here);
}
