/**
 * The ledger's own files beside this module: the worker thread and the stores' SQL (which
 * scripts/build.mjs copies into dist/, and replaces this module in dist/cjs/ with a twin that
 * finds them from __dirname: CommonJS cannot hold `import.meta`).
 */
// biome-ignore lint/suspicious/noTsIgnore: an error in the CommonJS build only (TS1343), whose copy build.mjs replaces; expect-error would fail the ESM one.
// @ts-ignore
const here: string = import.meta.url;

/** The URL of `name`, relative to this module's folder. */
export function ledgerFile(name: string): URL {
  return new URL(name, here);
}
