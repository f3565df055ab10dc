/**
 * The lightning routes as a `node:http` request listener in front of Colyseus's: what
 * `lightning.attach(server)` installs. The router builds a WHATWG Request with a web stream
 * for each POST and turns the Response back into node:http; this listener reads the socket
 * directly, so a callback costs about what a bare node:http handler costs (bench/scale.ts
 * measures both). The answers are server/routes.ts, the same as `lightning.endpoints()`.
 *
 * It takes over the server's current 'request' listeners and passes them every request that
 * is not a POST to one of its routes, untouched. Colyseus adds its own when the server
 * listens, so attach after `listen()`; attaching to a server with no listener is refused.
 *
 * Cost: per request a method check and a prefix compare; per route request, none of the
 * router's allocations. It also knows the socket's peer, so `callbackSources.proxies: 0`
 * works here.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ConfigurationError } from '../errors.js';
import { BodyTooLargeError } from './body.js';
import { answerRoute, matchRoute, type RouteRequest, type RoutesHost } from './routes.js';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Node's headers through the one-method reader the routes use (repeats joined, as fetch does). */
function headerReader(req: IncomingMessage) {
  return {
    get(name: string): string | null {
      const value = req.headers[name];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** Reads the body up to `maxBytes`; past it, stops reading and rejects (the answer closes). */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > maxBytes) {
      reject(new BodyTooLargeError(`body over ${maxBytes} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError(`body over ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}

function routeRequest(req: IncomingMessage): RouteRequest {
  return {
    headers: headerReader(req),
    peer: req.socket.remoteAddress ?? null,
    body: (maxBytes) => readBody(req, maxBytes),
  };
}

/**
 * Puts the routes in front of `server`'s request listeners; returns a function that puts the
 * previous listeners back.
 */
export function attachRoutes(server: Server, host: RoutesHost): () => void {
  const others = server.listeners('request') as RequestListener[];
  if (others.length === 0) {
    throw new ConfigurationError(
      'lightning.attach(server)',
      'the server has no request listener yet; call it after the game server listens (Colyseus adds its listener in listen())',
    );
  }
  const { prefix } = host;
  const front: RequestListener = (req, res) => {
    const url = req.url ?? '/';
    const route =
      req.method === 'POST' && url.startsWith(prefix)
        ? matchRoute(prefix, url.split('?', 1)[0] as string)
        : null;
    if (route === null) {
      for (const listener of others) listener.call(server, req, res);
      return;
    }
    void answerRoute(host, route, routeRequest(req)).then(
      (answer) => {
        // A body left unread (refused before reading, or over the cap) closes the connection
        // rather than being drained: the sender gets its answer, and no more is read.
        const unread = !req.complete;
        res.writeHead(answer.status, {
          ...answer.headers,
          'content-length': '0',
          ...(unread ? { connection: 'close' } : {}),
        });
        res.end();
      },
      () => res.destroy(),
    );
  };
  server.removeAllListeners('request');
  server.on('request', front);
  return () => {
    server.removeListener('request', front);
    for (const listener of others) server.on('request', listener);
  };
}
