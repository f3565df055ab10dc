/**
 * The lightning routes as a `node:http` listener in front of Colyseus's (`lightning.attach`):
 * it reads the socket directly, without the router's WHATWG Request and stream, and knows the
 * socket's peer for the callback allowlist. It also watches websocket upgrades for the region
 * gate. The answers are routes.ts's, as with `lightning.endpoints()`.
 *
 * Cost: per request a method check and a prefix compare; per upgrade a map lookup.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { nodeHeaders } from './client-address.js';
import { inFrontOf, readBody } from './front.js';
import { answerRoute, matchRoute, type RouteRequest, type RoutesHost } from './routes.js';

function routeRequest(req: IncomingMessage): RouteRequest {
  return {
    headers: nodeHeaders(req.headers),
    peer: req.socket.remoteAddress ?? null,
    body: (maxBytes) => readBody(req, maxBytes),
  };
}

/** The headers of every empty answer (shared: node:http only reads them). */
const EMPTY = Object.freeze({ 'content-length': '0' });
const CLOSING = Object.freeze({ 'content-length': '0', connection: 'close' });

/** Puts the routes in front of every request listener of `server`; returns how to undo it. */
export function attachRoutes(server: Server | HttpsServer, host: RoutesHost): () => void {
  const { prefix } = host;
  const request = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '/';
    if (req.method !== 'POST' || !url.startsWith(prefix)) return false;
    const route = matchRoute(prefix, url.split('?', 1)[0] as string);
    if (route === null) return false;
    void answerRoute(host, route, routeRequest(req))
      .then((answer) => {
        if (res.headersSent || res.destroyed) return; // the sender went away meanwhile
        // A body left unread closes the connection rather than being drained.
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
  return inFrontOf(server, 'lightning.attach(server)', {
    request,
    // The room reads Colyseus's context when watching fails.
    ...(host.upgrade
      ? {
          upgrade: (req: IncomingMessage) =>
            host.upgrade?.(
              req.url ?? '/',
              nodeHeaders(req.headers),
              req.socket.remoteAddress ?? null,
            ),
        }
      : {}),
  });
}
