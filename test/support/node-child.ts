/**
 * The Node arguments that run a TypeScript fixture in a child process. Through tsx's loader a
 * child loads each of its two hundred modules one by one, about twice the CPU of the same
 * program as one file; so each fixture is bundled once per test process with esbuild (the
 * packages left as imports, resolved from this checkout's node_modules) and its children run
 * the bundle. Each module keeps its own `import.meta.url`, so what locates files by it (the
 * stores' SQL, the SQLite worker) finds them beside its sources. Without esbuild: tsx.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cache = join(root, 'node_modules', '.cache', 'lightning-fixtures');
const built = new Map<string, Promise<string[]>>();

/** `[...args, file]` for `spawn(process.execPath, [...nodeArgs(file), ...own])`. */
export function nodeArgs(file: string): Promise<string[]> {
  let args = built.get(file);
  if (args === undefined) {
    args = bundle(file).then((out) => out ?? ['--import', 'tsx', file]);
    built.set(file, args);
  }
  return args;
}

async function bundle(file: string): Promise<string[] | undefined> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  } catch {
    return undefined;
  }
  const { outputFiles } = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    packages: 'external',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'own-import-meta-url',
        setup(build) {
          build.onLoad({ filter: /\.ts$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replace(
              // The expression, not the name quoted (worker-start.ts's own `define` names it).
              /(?<![\w$.'"`])import\.meta\.url(?![\w$'"`])/g,
              JSON.stringify(pathToFileURL(args.path).href),
            ),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  const text = outputFiles[0]?.text;
  if (text === undefined) return undefined;
  // Named by content: test processes bundling the same fixture at once write the same file.
  const name = `${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`;
  const out = join(cache, name);
  if (!existsSync(out)) {
    mkdirSync(cache, { recursive: true });
    const aside = `${out}.${process.pid}`;
    writeFileSync(aside, text);
    renameSync(aside, out);
  }
  return [out];
}
