/**
 * How the SQLite ledger's worker thread starts. Built: from its file beside this module, with no
 * flags (`node -e`'s `--input-type` would stop it). From the sources under tsx, each thread would
 * load its modules one by one through tsx's loader, costing a fresh store more than its SQL; so
 * the worker is bundled once per process with esbuild and each thread evaluates that script.
 * Without esbuild, the thread inherits the process's flags, tsx's loader among them.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { WorkerOptions } from 'node:worker_threads';

interface WorkerStart {
  /** The worker's file, or the bundled script's text (with `eval: true` in options). */
  script: URL | string;
  options: WorkerOptions;
}

const starts = new Map<string, WorkerStart>();

/** How to start the worker whose built file is `url` (its TypeScript beside it, as `.ts`). */
export function workerStart(url: URL): WorkerStart {
  let start = starts.get(url.href);
  if (start === undefined) {
    start = find(url);
    starts.set(url.href, start);
  }
  return start;
}

function find(url: URL): WorkerStart {
  const file = fileURLToPath(url);
  if (existsSync(file)) return { script: url, options: { execArgv: [] } };
  try {
    const esbuild = createRequire(file)('esbuild') as typeof import('esbuild');
    const { outputFiles } = esbuild.buildSync({
      entryPoints: [file.replace(/\.js$/, '.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${process.versions.node}`,
      write: false,
      logLevel: 'silent',
      // The modules locate their files (the stores' SQL) by their own URL: all sit beside it.
      define: { 'import.meta.url': JSON.stringify(url.href) },
    });
    const text = outputFiles[0]?.text;
    if (text !== undefined) return { script: text, options: { eval: true, execArgv: [] } };
  } catch {
    // No esbuild here: tsx's loader, inherited, runs the TypeScript.
  }
  return { script: url, options: {} };
}
