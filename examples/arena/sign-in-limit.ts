/**
 * How many new guests one address may make at `POST /auth` (issue 22, finding 8: one script
 * made 40 guests, and each guest is a new player to every per-player limit, so 40 guests made
 * 40 charges). A fixed window per address: `perWindow` new guests, then 429 with Retry-After
 * until the window ends. A request that brings a valid token signs its player in again and is
 * not counted, so a reload or a reconnect never meets the limit.
 *
 * Usage (after `server.listen()`, as it wraps the listeners Colyseus added there):
 *   limitSignIns(httpServer, { auth, limit: new GuestLimit({ perWindow: 5 }),
 *     addressOf: (req) => lightning.service.clientAddress(req) });
 *
 * The address is the one `clientAddress` of createLightning reads (the socket's peer, or the
 * entry the game's own proxies wrote), never a header the client sent; this runs in front of the
 * router because the router cannot see the socket. An IPv6 client holds a whole /64, so its
 * addresses count as one; requests whose address cannot be told share one window.
 *
 * Footprint: one map entry per address seen within the last window (about 170 bytes of heap,
 * measured over 10,000 IPv6 keys), at most `maxAddresses` (10,000 by default, about 1.7 MB): past it the oldest window is dropped first,
 * which gives that address a fresh one early, never a longer wait to anyone. Per request to
 * `/auth`: a map lookup, and the token's HMAC when it brings one. Other requests: a string
 * compare.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { ArenaAuth } from './auth.js';
import { answerFirst } from './serve.js';

export interface GuestLimitOptions {
  /** New guests per address per window. */
  perWindow: number;
  /** The window, in ms. Default one minute. */
  windowMs?: number;
  /** Addresses remembered at most (the map's bound). Default 10,000. */
  maxAddresses?: number;
  /** epoch ms; tests move it. Default Date.now. */
  now?: () => number;
}

interface Window {
  start: number;
  count: number;
}

/** Requests whose address cannot be told: one window for all of them, never a free pass. */
const UNKNOWN = '?';

export class GuestLimit {
  readonly perWindow: number;
  readonly windowMs: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  /** Insertion order is window start order: a window that restarts is moved to the end. */
  readonly #windows = new Map<string, Window>();

  constructor(options: GuestLimitOptions) {
    this.perWindow = options.perWindow;
    this.windowMs = options.windowMs ?? 60_000;
    this.#maxAddresses = options.maxAddresses ?? 10_000;
    this.#now = options.now ?? Date.now;
    for (const [name, value] of Object.entries({
      perWindow: this.perWindow,
      windowMs: this.windowMs,
      maxAddresses: this.#maxAddresses,
    })) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new TypeError(`GuestLimit: ${name} must be a whole number, 1 or more`);
      }
    }
  }

  /** How many addresses have a window open (at most `maxAddresses`). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Counts a new guest from `address` (null: not known): 0 when it may be made, else how many
   * ms until its window ends.
   */
  take(address: string | null): number {
    const now = this.#now();
    const key = address === null ? UNKNOWN : keyOf(address);
    const open = this.#windows.get(key);
    if (open !== undefined && now - open.start < this.windowMs) {
      if (open.count >= this.perWindow) return open.start + this.windowMs - now;
      open.count++;
      return 0;
    }
    this.#windows.delete(key);
    this.#forget(now);
    this.#windows.set(key, { start: now, count: 1 });
    return 0;
  }

  /** Drops the windows that ended (the oldest come first), then the oldest while full. */
  #forget(now: number): void {
    for (const [key, window] of this.#windows) {
      if (now - window.start < this.windowMs && this.#windows.size < this.#maxAddresses) break;
      this.#windows.delete(key);
    }
  }
}

/** What `limitSignIns` needs: who signs in again, the limit, and the trusted address. */
export interface SignInLimitOptions {
  auth: Pick<ArenaAuth, 'returning'>;
  limit: GuestLimit;
  /** The client's address as the game reads it: `(req) => lightning.service.clientAddress(req)`. */
  addressOf: (req: IncomingMessage) => string | null;
}

/**
 * Answers `POST /auth` with 429 when it would make one guest too many for its address; every
 * other request goes on to the listeners the server had (Colyseus's router among them).
 */
export function limitSignIns(server: Server, options: SignInLimitOptions): void {
  answerFirst(server, (req: IncomingMessage, res: ServerResponse) => {
    const waitMs =
      req.method === 'POST' &&
      (req.url ?? '').split('?')[0] === '/auth' &&
      options.auth.returning(req.headers.authorization) === undefined
        ? options.limit.take(options.addressOf(req))
        : 0;
    if (waitMs === 0) return false;
    const seconds = Math.ceil(waitMs / 1000);
    const body = JSON.stringify({
      error: `too many new players from this address; try again in ${seconds} s`,
    });
    res.writeHead(429, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'retry-after': String(seconds),
      'cache-control': 'no-store',
    });
    res.end(body);
    return true;
  });
}

/** The key an address counts under: itself, or for IPv6 its /64 (one client holds all of it). */
export function keyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  // An IPv4 tail (::ffff:192.0.2.1) fills two groups.
  const width = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), left.length);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - width)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
