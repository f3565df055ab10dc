/**
 * In front of a game's `node:http` (or https) server: what `lightning.attach(server)` (the
 * callback routes) and `lightning.attachConsole(server)` (the console) share. A request one of
 * them answers is answered before any 'request' listener of the server runs, those it has now and
 * those added later (Colyseus adds its own in `listen()`); every other request, and every other
 * event, goes on untouched. Each may be attached once per server (`name` says which).
 *
 * Cost: per request, one call of each attached `request` handler (a method check and a prefix
 * compare in both); per upgrade, one of the `upgrade` watcher when there is one.
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
 * Puts `front` before the server's own listeners, by answering in its `emit`: EventEmitter cannot
 * stop a listener list half way, and a listener put first now would be second once Colyseus
 * prepends its own in listen(). Returns a function that takes it away.
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
    if (
      event === 'request' &&
      front.request(args[0] as IncomingMessage, args[1] as ServerResponse)
    ) {
      return true;
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
