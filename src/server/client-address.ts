/**
 * The client's address, from the socket and a trusted proxy count, never from what the client
 * claims: with `proxies` N, the X-Forwarded-For entry N places from the right (entries further
 * left are the client's claim), or the one `header` the game's proxy writes. A request that did
 * not come from `proxyAddresses` went around the proxies and has no address. Shared by the
 * callback allowlist, the region gate and the game's own routes.
 *
 * Cost per request: a header split and, with a known socket, one BlockList lookup.
 */
import { BlockList, isIP } from 'node:net';

/** The one header read here: a WHATWG `Headers`, or the listener's view of node's headers. */
export interface HeaderReader {
  get(name: string): string | null;
}

/** A `node:http` request as far as its client's address goes. */
interface NodeRequestLike {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string | undefined } | null;
}

/** Node's headers through the one-method reader (repeats joined, as fetch does). */
export function nodeHeaders(headers: NodeRequestLike['headers']): HeaderReader {
  return {
    get(name: string): string | null {
      const value = headers[name];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

interface ClientAddressSettings {
  proxies: number;
  header?: string | undefined;
  proxyAddresses: readonly string[];
}

/** Where proxies usually connect from: loopback, private and link-local networks. */
export const PRIVATE_NETWORKS: readonly string[] = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '::1',
  'fc00::/7',
  'fe80::/10',
];

/** Longer than any address with a port and brackets: a longer value is not read at all. */
const MAX_ENTRY = 64;
/** X-Forwarded-For longer than this is refused rather than split. */
const MAX_FORWARDED = 2048;

export class ClientAddresses {
  readonly proxies: number;
  readonly header: string | undefined;
  readonly #proxyList: BlockList;

  constructor(settings: ClientAddressSettings) {
    this.proxies = settings.proxies;
    this.header = settings.header;
    this.#proxyList = blockListOf(settings.proxyAddresses);
  }

  /** The client's address of a `node:http` request (its socket is known), or null. */
  ofNodeRequest(req: NodeRequestLike): string | null {
    return this.of(nodeHeaders(req.headers), req.socket?.remoteAddress ?? null);
  }

  /** The client's address (`peer` null where the transport hides the socket), or null. */
  of(headers: HeaderReader | undefined, peer: string | null): string | null {
    const from = singleAddress(peer);
    if (this.proxies === 0) return from;
    // A request that did not come from a proxy of the game went around them.
    if (peer !== null && (from === null || !inList(this.#proxyList, from))) return null;
    if (this.header !== undefined) return singleAddress(headers?.get(this.header) ?? null);
    return senderAddress(headers?.get('x-forwarded-for') ?? null, this.proxies);
  }

  /** Whether `address` is one the game's proxies connect from. */
  isProxy(address: string): boolean {
    const a = singleAddress(address);
    return a !== null && inList(this.#proxyList, a);
  }
}

/** The X-Forwarded-For entry `proxies` places from the right, normalised; null if none. */
export function senderAddress(forwardedFor: string | null, proxies: number): string | null {
  if (forwardedFor === null || forwardedFor.length > MAX_FORWARDED || proxies < 1) return null;
  const entries = forwardedFor.split(',');
  const entry = entries[entries.length - proxies];
  return entry === undefined ? null : singleAddress(entry);
}

/**
 * One address (trimmed, normalised: no port, no IPv4-mapped prefix), or null for anything else:
 * none, a list, a name, a long string.
 */
function singleAddress(value: string | null): string | null {
  if (value === null) return null;
  const entry = value.trim();
  if (entry.length === 0 || entry.length > MAX_ENTRY) return null;
  const address = normalise(entry);
  return isIP(address) === 0 ? null : address;
}

function normalise(entry: string): string {
  let address = entry;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1] as string;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(address)) address = address.replace(/:\d+$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? (mapped[1] as string) : address;
}

/** True for an address or a subnet in CIDR form (`10.0.0.0/8`, `2001:db8::/32`). */
export function isAddressOrSubnet(value: string): boolean {
  const [address, bits, extra] = value.split('/');
  if (extra !== undefined || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d{1,3}$/.test(bits) && n <= (family === 4 ? 32 : 128);
}

/** A BlockList of the addresses and subnets given; anything else is skipped. */
export function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    if (!isAddressOrSubnet(entry)) continue;
    const [raw, bits] = entry.split('/') as [string, string | undefined];
    const address = bits === undefined ? normalise(raw) : raw;
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/** Whether a normalised address is in the list. */
export function inList(list: BlockList, address: string): boolean {
  return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}
/** The room path of a Colyseus websocket (`/<process>/<room>`), as its transport reads it. */
const ROOM_PATH = /\/[a-zA-Z0-9_-]+\/([a-zA-Z0-9_-]+)$/;
const MAX_URL = 2048;

/**
 * The address of each websocket upgrade `lightning.attach(server)` sees, for the rooms that
 * watch their id (the region gate): a room's static onAuth cannot see the socket. Costs a map
 * lookup per upgrade.
 */
export class ConnectionAddresses {
  readonly #addresses: ClientAddresses;
  readonly #rooms = new Map<string, (sessionId: string, address: string | null) => void>();

  constructor(addresses: ClientAddresses) {
    this.#addresses = addresses;
  }

  /** Calls `sink` with each new connection to room `roomId`; returns the function that stops it. */
  watch(roomId: string, sink: (sessionId: string, address: string | null) => void): () => void {
    this.#rooms.set(roomId, sink);
    return () => {
      if (this.#rooms.get(roomId) === sink) this.#rooms.delete(roomId);
    };
  }

  /** A websocket upgrade: its URL, its headers and its socket's peer. */
  upgrade(url: string, headers: HeaderReader, peer: string | null): void {
    if (this.#rooms.size === 0 || url.length > MAX_URL) return;
    const q = url.indexOf('?');
    if (q < 0) return;
    const roomId = ROOM_PATH.exec(url.slice(0, q))?.[1];
    const sink = roomId === undefined ? undefined : this.#rooms.get(roomId);
    if (!sink) return;
    const params = new URLSearchParams(url.slice(q + 1));
    const sessionId = params.get('sessionId');
    // A reconnection keeps the address its player joined with.
    if (!sessionId || sessionId.length > 64 || params.has('reconnectionToken')) return;
    sink(sessionId, this.#addresses.of(headers, peer));
  }
}
