/**
 * A scriptable loopback HTTP server for client tests: it records every request (method,
 * path, headers, body) and answers with whatever the test queued, including faults that a
 * real network produces (a hang, a connection destroyed before or after reading the body).
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

export type Reply =
  | {
      status?: number;
      body?: unknown;
      raw?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  | 'destroy'
  | 'hang';

type Responder = (req: Recorded) => Reply;

export class FakeService {
  readonly requests: Recorded[] = [];
  #queue: Responder[] = [];
  #fallback: Responder = () => ({
    status: 500,
    body: { success: false, message: 'nothing queued' },
  });
  #server: Server;
  #sockets = new Set<Socket>();
  url = '';

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = body ? JSON.parse(body) : undefined;
        } catch {
          json = undefined;
        }
        const recorded: Recorded = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          json,
        };
        this.requests.push(recorded);
        const responder = this.#queue.shift() ?? this.#fallback;
        this.#answer(res, responder(recorded));
      });
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  /** The JSON body of request `index` (negative counts from the end). */
  sent(index = -1): Record<string, unknown> {
    const request = this.requests.at(index);
    if (!request) throw new Error(`no request ${index} reached the service`);
    return request.json as Record<string, unknown>;
  }

  /** Answers the next requests, in order, with these replies. */
  reply(...replies: (Reply | Responder)[]): this {
    for (const r of replies) this.#queue.push(typeof r === 'function' ? r : () => r);
    return this;
  }

  /** Answers every request not otherwise queued. */
  always(reply: Reply | Responder): this {
    this.#fallback = typeof reply === 'function' ? reply : () => reply;
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(res: ServerResponse, reply: Reply): void {
    if (reply === 'destroy') {
      res.socket?.destroy();
      return;
    }
    if (reply === 'hang') return;
    const send = () => {
      const text = reply.raw ?? JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(text);
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  }
}

/** The v0 success envelope. */
export function ok(data: unknown, message = 'ok') {
  return { status: 200, body: { success: true, message, data } };
}

/** The widget-interface success envelope. */
export function widgetOk(data: unknown, status = 200) {
  return { status, body: { success: true, message: 'ok', data, error: null } };
}

export const sampleWithdrawal = {
  id: 'wr_1',
  unit: 'msats',
  amount: '50000',
  status: 'pending',
  description: 'Prize',
  createdAt: '2026-11-21T00:00:00.000Z',
  expiresAt: '2026-11-21T01:00:00.000Z',
  internalId: 'player-1',
  callbackUrl: 'https://game.example/cb/abc',
  invoice: {
    request: 'lnurl1dp68gurn8ghj7',
    uri: 'lightning:lnurl1dp68gurn8ghj7',
    expiresAt: '2026-11-21T01:00:00.000Z',
  },
};

export const sampleCharge = {
  id: 'sc_1',
  unit: 'msats',
  slots: 0,
  minAmount: '10000',
  maxAmount: '10000',
  createdAt: '2026-11-21T00:00:00.000Z',
  expiresAt: null,
  internalId: 'player-1',
  description: 'Entry',
  callbackUrl: 'https://game.example/cb/def',
  allowedSlots: 1,
  successMessage: 'Good luck',
  status: 'active',
  invoice: { request: 'lnurl1xyz', uri: 'lightning:lnurl1xyz' },
};
