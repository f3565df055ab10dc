/**
 * Serves the browser client: bundles client/main.ts with esbuild when the server starts (a
 * second or less) and answers `/`, `/client.js` and `/style.css` in front of Colyseus.
 *
 * Why not router endpoints: the router's Node adapter (better-call's setResponse) never ends
 * a response whose body is one chunk larger than the socket's high-water mark (16 KiB), so a
 * bundle served through it hangs. Static files therefore go out before the router sees them.
 */

import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export async function clientFiles(): Promise<Map<string, { body: Buffer; type: string }>> {
  const bundle = await build({
    entryPoints: [here('./client/main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
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

/**
 * Puts `answer` before the request listeners the server has now (Colyseus's router among them):
 * a request it answers (true) stops there, every other one goes on to them.
 */
export function answerFirst(
  server: Server,
  answer: (req: IncomingMessage, res: ServerResponse) => boolean,
): void {
  const others = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (answer(req, res)) return;
    for (const listener of others) listener.call(server, req, res);
  });
}

/** Answers the static files first; every other request goes on to Colyseus's listeners. */
export function serveInFront(server: Server, files: Map<string, { body: Buffer; type: string }>) {
  answerFirst(server, (req, res) => {
    const file =
      req.method === 'GET' ? files.get((req.url ?? '/').split('?')[0] ?? '/') : undefined;
    if (!file) return false;
    res.writeHead(200, {
      'content-type': `${file.type}; charset=utf-8`,
      'content-length': file.body.length,
      'cache-control': 'no-cache',
    });
    res.end(file.body);
    return true;
  });
}
