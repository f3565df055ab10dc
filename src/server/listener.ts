/**
 * The lightning routes as a `node:http` request listener in front of Colyseus's: what
 * `lightning.attach(server)` installs. The router builds a WHATWG Request with a web stream
 * for each POST and turns the Response back into node:http; this listener reads the socket
 * directly, so a callback costs about what a bare node:http handler costs (bench/scale.ts
 * measures both). The answers are server/routes.ts, the same as `lightning.endpoints()`.
 *
 * It answers a POST to one of its routes before any 'request' listener of the server runs, and
 * passes every other request on to them untouched, whether they were added before or after
 * (Colyseus adds its own in `listen()`), so it can be attached before or after listening.
 *
 * Cost: per request a method check and a prefix compare; per route request, none of the
 * router's allocations. It also knows the socket's peer, so the callback allowlist reads the
 * client address from it (`clientAddress`: the peer itself with no proxy, else a peer that must
 * be one of the game's proxies). It watches websocket upgrades too, without answering them:
 * rooms with the region gate learn each joining socket's address there (ConnectionAddresses),
 * for a map lookup per upgrade.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ConfigurationError } from '../errors.js';
import { BodyTooLargeError } from './body.js';
import { nodeHeaders } from './client-address.js';
import { answerRoute, matchRoute, type RouteRequest, type RoutesHost } from './routes.js';

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
    headers: nodeHeaders(req.headers),
    peer: req.socket.remoteAddress ?? null,
    body: (maxBytes) => readBody(req, maxBytes),
  };
}

const attached = Symbol('lightning routes attached');
/** The headers of every empty answer (shared: node:http only reads them). */
const EMPTY = Object.freeze({ 'content-length': '0' });
const CLOSING = Object.freeze({ 'content-length': '0', connection: 'close' });

/**
 * Puts the routes in front of every request listener of `server`, those it has now and those
 * added later (Colyseus adds its own in `listen()`), by answering our requests in its `emit`
 * before any listener runs. Returns a function that takes it away.
 */
export function attachRoutes(server: Server | HttpsServer, host: RoutesHost): () => void {
  const marked = server as (Server | HttpsServer) & { [attached]?: true };
  if (marked[attached]) {
    throw new ConfigurationError('lightning.attach(server)', 'is already attached to this server');
  }
  const { prefix } = host;
  const original = server.emit;
  const answer = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '/';
    if (req.method !== 'POST' || !url.startsWith(prefix)) return false;
    const route = matchRoute(prefix, url.split('?', 1)[0] as string);
    if (route === null) return false;
    void answerRoute(host, route, routeRequest(req))
      .then((answer) => {
        if (res.headersSent || res.destroyed) return; // the sender went away meanwhile
        // A body left unread (refused before reading, or over the cap) closes the connection
        // rather than being drained: the sender gets its answer, and no more is read.
        const unread = !req.complete;
        res.writeHead(
          answer.status,
          answer.headers
            ? { ...answer.headers, ...(unread ? CLOSING : EMPTY) }
            : unread
              ? CLOSING
              : EMPTY,
        );
        res.end();
      })
      // Never an unhandled rejection from a socket that failed under the answer.
      .catch(() => res.destroy());
    return true;
  };
  // emit, not a listener: EventEmitter cannot stop a listener list half way, and a listener
  // put first now would be second once Colyseus prepends its own in listen().
  const emit = function (
    this: Server | HttpsServer,
    event: string | symbol,
    ...args: unknown[]
  ): boolean {
    if (event === 'request' && answer(args[0] as IncomingMessage, args[1] as ServerResponse)) {
      return true;
    }
    if (event === 'upgrade' && host.upgrade) {
      const req = args[0] as IncomingMessage;
      try {
        host.upgrade(req.url ?? '/', nodeHeaders(req.headers), req.socket.remoteAddress ?? null);
      } catch {
        // Watching must never cost the upgrade: the room reads Colyseus's context instead.
      }
    }
    return original.apply(this, [event, ...args] as Parameters<typeof original>);
  };
  server.emit = emit as typeof server.emit;
  marked[attached] = true;
  return () => {
    if (server.emit === (emit as typeof server.emit)) server.emit = original;
    delete marked[attached];
  };
}
