/**
 * An HTTP proxy in front of the emulator that can hold requests: once `hold(method, path)` is
 * armed, the next request that matches waits at the proxy, unsent, until the test releases it.
 * A test puts a money call exactly between its record in the ledger and the service's answer,
 * and acts there (a settle racing an entry), waiting on `held()` rather than on time.
 *
 * Cost: one loopback server; every request is buffered once and forwarded with a fresh fetch.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Headers that belong to one connection, not to the request: fetch sets its own. */
const HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

export interface HoldingProxy {
  /** The proxy's base URL, for the game's `baseUrl`. */
  url: string;
  /** Holds the next request with this method and path (the path without its query). */
  hold(method: string, path: string): void;
  /** Resolves once the armed hold caught its request. */
  held(): Promise<void>;
  /** Sends the held request on; its answer goes back to the caller. */
  release(): void;
  close(): Promise<void>;
}

export async function startHoldingProxy(upstream: string): Promise<HoldingProxy> {
  let armed: { method: string; path: string } | null = null;
  let caught: (() => void) | null = null;
  let onCaught: (() => void) | null = null;
  let caughtYet = false;

  const forward = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP.has(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    try {
      const answer = await fetch(`${upstream}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const out = Buffer.from(await answer.arrayBuffer());
      const type = answer.headers.get('content-type');
      res.writeHead(answer.status, type ? { 'content-type': type } : {});
      res.end(out);
    } catch {
      res.destroy();
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0];
      if (armed && armed.method === req.method && armed.path === path) {
        armed = null;
        caught = () => void forward(req, res, body);
        caughtYet = true;
        onCaught?.();
        return;
      }
      void forward(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    hold(method, path) {
      armed = { method: method.toUpperCase(), path };
      caught = null;
      caughtYet = false;
    },
    held() {
      if (caughtYet) return Promise.resolve();
      return new Promise<void>((resolve) => {
        onCaught = resolve;
      });
    },
    release() {
      const send = caught;
      caught = null;
      send?.();
    },
    async close() {
      caught?.();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
