/**
 * Builds the duel's browser client: client/main.tsx and React bundled by esbuild, minified, in
 * memory (a second or so, at each start), with the page and its style. `npm run example:duel`
 * and the browser test (test/e2e/duel-browser.test.ts) both build it through this function, so
 * the test plays the bundle a player gets.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export type ClientFiles = Map<string, { body: Buffer; type: string }>;

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export async function buildClient(): Promise<ClientFiles> {
  const bundle = await build({
    entryPoints: [here('./client/main.tsx')],
    tsconfig: here('./client/tsconfig.json'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' }, // React's production build
    minify: true,
    write: false,
  });
  const js = Buffer.from(bundle.outputFiles[0]?.contents ?? new Uint8Array());
  return new Map([
    ['/', { body: await readFile(here('./client/index.html')), type: 'text/html' }],
    ['/client.js', { body: js, type: 'text/javascript' }],
    ['/style.css', { body: await readFile(here('./client/style.css')), type: 'text/css' }],
  ]);
}
