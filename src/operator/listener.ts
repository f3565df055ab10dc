/**
 * The console as a `node:http` listener in front of Colyseus's: it answers every request under
 * the console's path and passes others on untouched (but one with a bad Host: 400). It streams
 * a CSV export a row at a time, waiting for the socket to drain; a read that fails half way
 * destroys the socket, so a cut file never looks complete.
 */

import { once } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { nodeHeaders } from '../server/client-address.js';
import { badRequest, inFrontOf, readBody, requestUrl } from '../server/front.js';
import { answerConsole, type ConsoleAnswer, type ConsoleSettings } from './console.js';
import type { ConsoleHost } from './reads.js';

/** The request as `authorize` sees it: a WHATWG Request (headers, method, URL; no body). */
function webRequest(req: IncomingMessage, url: URL): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(url, { method: req.method === 'POST' ? 'POST' : 'GET', headers });
}

async function write(res: ServerResponse, answer: ConsoleAnswer): Promise<void> {
  const { body } = answer;
  if (typeof body === 'string' || body === null) {
    res.writeHead(answer.status, {
      ...answer.headers,
      'content-length': String(body === null ? 0 : Buffer.byteLength(body)),
    });
    res.end(body ?? undefined);
    return;
  }
  res.writeHead(answer.status, answer.headers);
  for await (const chunk of body) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  res.end();
}

export function attachConsole(
  server: Server | HttpsServer,
  host: ConsoleHost,
  settings: ConsoleSettings,
): () => void {
  const { path } = settings;
  const request = (req: IncomingMessage, res: ServerResponse): boolean => {
    const raw = req.url ?? '/';
    const pathname = raw.split('?', 1)[0] as string;
    if (pathname !== path && !pathname.startsWith(`${path}/`)) return false;
    const url = requestUrl(req);
    if (url === null) return badRequest(res); // the front refuses these first

    void answerConsole(host, settings, {
      method: req.method ?? 'GET',
      sub: pathname.slice(path.length),
      query: url.searchParams,
      headers: nodeHeaders(req.headers),
      request: () => webRequest(req, url),
      body: (max) => readBody(req, max),
      streams: true,
    })
      .then((a) => write(res, a))
      .catch(() => res.destroy());
    return true;
  };
  return inFrontOf(server, 'lightning.operator.console.attach(server)', { request });
}
