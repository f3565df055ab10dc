/**
 * Serves the browser client: bundles client/main.ts with esbuild when the server starts (a
 * second or less), and hands the files out through Colyseus router endpoints.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createEndpoint } from '@colyseus/core';
import { build } from 'esbuild';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export async function clientEndpoints() {
  const bundle = await build({
    entryPoints: [here('./client/main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
  });
  const js = bundle.outputFiles[0]?.text ?? '';
  const html = await readFile(here('./client/index.html'), 'utf8');
  const css = await readFile(here('./client/style.css'), 'utf8');
  const file = (body: string, type: string) => () =>
    new Response(body, { headers: { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-cache' } });
  return {
    arenaPage: createEndpoint('/', { method: 'GET' }, file(html, 'text/html')),
    arenaScript: createEndpoint('/client.js', { method: 'GET' }, file(js, 'text/javascript')),
    arenaStyle: createEndpoint('/style.css', { method: 'GET' }, file(css, 'text/css')),
  };
}
