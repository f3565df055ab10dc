/**
 * Files the ledger finds beside its modules: the SQLite worker thread (`sqlite-worker.js`,
 * which tsx maps to the .ts source) and the stores' statements (`sql/`). The CommonJS build
 * cannot hold `import.meta`: scripts/build.mjs replaces this module in dist/cjs/ with its
 * CommonJS twin (the same files, found from __dirname).
 */
// biome-ignore lint/suspicious/noTsIgnore: an error in the CommonJS build only (TS1343), whose copy build.mjs replaces; expect-error would fail the ESM one.
// @ts-ignore
export const sqliteWorkerUrl: URL = new URL('./sqlite-worker.js', import.meta.url);
// biome-ignore lint/suspicious/noTsIgnore: as above.
// @ts-ignore
export const sqlUrl: URL = new URL('./sql/', import.meta.url);
