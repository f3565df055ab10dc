/**
 * In front of a game's `node:http` server, shared by `lightning.attach(server)` and the console:
 * a request a front answers is answered before any 'request' listener (Colyseus adds its own in
 * `listen()`); everything else goes on untouched. A request no WHATWG Request can be built from
 * (a bad Host) answers an empty 400, and TRACE a 405, whatever the path: Colyseus's router would
 * throw on it out of its listener and never answer.
 *
 * Cost: per request, one URL parse and one call of each front's `request` handler.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ConfigurationError } from '../errors.js';
import { BodyTooLargeError } from './body.js';

export interface Front {
  /** Answers `req` and returns true, or returns false to pass it on. */
  request(req: IncomingMessage, res: ServerResponse): boolean;
  /** Watches a websocket upgrade (never answers it; a throw is ignored). */
  upgrade?(req: IncomingMessage): void;
}

const attached = Symbol('lightning fronts attached');

/**
 * Puts `front` before the server's listeners by answering in its `emit`: a listener put first now
 * would be second once Colyseus prepends its own. Returns a function that takes it away.
 */
export function inFrontOf(server: Server | HttpsServer, name: string, front: Front): () => void {
  const marked = server as (Server | HttpsServer) & { [attached]?: Set<string> };
  marked[attached] ??= new Set();
  const names = marked[attached];
  if (names.has(name)) throw new ConfigurationError(name, 'is already attached to this server');
  const original = server.emit;
  const emit = function (
    this: Server | HttpsServer,
    event: string | symbol,
    ...args: unknown[]
  ): boolean {
    if (event === 'request') {
      const req = args[0] as IncomingMessage;
      const res = args[1] as ServerResponse;
      if (requestUrl(req) === null) return badRequest(res);
      if (REFUSED_METHODS.has(req.method ?? '')) return badRequest(res, 405);
      try {
        if (front.request(req, res)) return true;
      } catch {
        return badRequest(res);
      }
    }
    if (event === 'upgrade' && front.upgrade) {
      try {
        front.upgrade(args[0] as IncomingMessage);
      } catch {
        // Watching must never cost the upgrade.
      }
    }
    return original.apply(this, [event, ...args] as Parameters<typeof original>);
  };
  server.emit = emit as typeof server.emit;
  names.add(name);
  return () => {
    if (server.emit === (emit as typeof server.emit)) server.emit = original;
    names.delete(name);
  };
}

/** The request's URL as Colyseus's router builds it, or null when a WHATWG Request would refuse it. */
export function requestUrl(req: IncomingMessage): URL | null {
  const forwarded = req.headers['x-forwarded-proto'];
  const scheme =
    forwarded ?? ('encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http');
  const host = req.headers.host ?? 'localhost';
  try {
    const url = new URL(`${scheme}://${host}${req.url ?? '/'}`);
    return url.username === '' && url.password === '' ? url : null;
  } catch {
    return null;
  }
}

/** Methods a WHATWG Request refuses (fetch's forbidden methods; node hands CONNECT elsewhere). */
const REFUSED_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** An empty 400 (or `status`) that closes the connection; true, as `emit` answers. */
export function badRequest(res: ServerResponse, status = 400): true {
  if (res.headersSent) res.destroy();
  else res.writeHead(status, { 'content-length': '0', connection: 'close' }).end();
  return true;
}

/** Reads the body up to `maxBytes`; past it, stops reading and rejects (the answer closes). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
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
