/**
 * The lightning routes as a `node:http` request listener in front of Colyseus's: what
 * `lightning.attach(server)` installs. The router builds a WHATWG Request with a web stream
 * for each POST and turns the Response back into node:http; this listener reads the socket
 * directly, so a callback costs about what a bare node:http handler costs (bench/scale.ts
 * measures both). The answers are server/routes.ts, the same as `lightning.endpoints()`.
 *
 * It answers a POST to one of its routes before any 'request' listener of the server runs, and
 * passes every other request on to them untouched, whether they were added before or after
 * (Colyseus adds its own in `listen()`), so it can be attached before or after listening; one
 * no URL can be built from (a bad Host) answers 400 whatever its path (server/front.ts).
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

/**
 * Puts the routes in front of every request listener of `server`, those it has now and those
 * added later (Colyseus adds its own in `listen()`), by answering our requests in its `emit`
 * before any listener runs. Returns a function that takes it away.
 */
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
