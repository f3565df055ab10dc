/**
 * Helpers of the emulator's own tests: a JSON caller on undici, and a local HTTP receiver for
 * callbacks and webhooks that records what arrives (raw body and headers). The emulator per
 * test is the suite's one `useEmulator` (test/support/emulator.ts), re-exported here.
 */

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { Emulator } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';

export { useEmulator } from '../support/emulator.js';

/** JSON read in tests: loosely typed on purpose, the assertions are the check. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Loose = any;

export interface Answer<T = Loose> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call<T = Loose>(
  emu: Emulator,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? emu.apiKey : options.key;
  if (key !== null) headers.apikey = key;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`${emu.url}${path}`, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  const type = String(res.headers['content-type'] ?? '');
  return {
    status: res.statusCode,
    headers: res.headers,
    body: (type.includes('json') && text ? JSON.parse(text) : text) as T,
  };
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Loose;
  at: number;
}

export class Receiver {
  readonly received: Received[] = [];
  status = 200;
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({
          path: req.url ?? '/',
          headers: req.headers,
          raw,
          body: raw ? JSON.parse(raw) : undefined,
          at: Date.now(),
        });
        res.writeHead(this.status).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** Waits until `n` deliveries arrived (or fails after `ms`). */
  async waitFor(n: number, ms = 3000): Promise<Received[]> {
    return eventually(
      () => this.received.length >= n && this.received,
      ms,
      () => `${n} deliveries, got ${this.received.length}`,
    );
  }
}

export function useReceiver() {
  const box: { receiver: Receiver } = {} as { receiver: Receiver };
  beforeEach(async () => {
    box.receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await box.receiver.close();
  });
  return box;
}
