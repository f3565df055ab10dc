/**
 * Where status callbacks may come from: optional defence in depth on top of the per-intent
 * token and the re-read. The service publishes the addresses it calls from
 * (`GET /v0/prod-ips`); with `callbackSources` set, the callback route answers an empty 403 to
 * any other sender, before it reads the body or touches the ledger.
 *
 * Colyseus's router hands a route a WHATWG Request without the peer's socket, so there the
 * sender is read from `X-Forwarded-For` as the game's own proxies wrote it: the entry `proxies`
 * places from the right (each proxy appends the address it saw, so entries further left are
 * whatever the sender claimed). The game must then be reachable only through those proxies.
 * The `node:http` listener (server/listener.ts) sees the socket, so there `proxies: 0` means
 * "no proxy: the peer's own address"; the router, which cannot see it, refuses every callback
 * under `proxies: 0`.
 *
 * The list is fetched on first use and again every `refreshMs` in the background, keeping the
 * last good list when a refresh fails. With no list at all (the first fetch failed) callbacks
 * are refused, which loses nothing: the reconciler reads every open intent on its own schedule.
 *
 * Footprint: one API read per `refreshMs`; per callback a header split and a BlockList lookup.
 */
import { BlockList, isIP } from 'node:net';
import type { Clock } from '../clock.js';
import type { LightningLogger } from './logger.js';

export interface SourcesSettings {
  /** How often the service's addresses are read again, in ms. */
  refreshMs: number;
  /** Addresses or subnets (`10.0.0.0/8`) allowed besides the service's. */
  also: readonly string[];
  /**
   * How many proxies of the game's own append to X-Forwarded-For before the route; 0: none,
   * the sender is the socket's peer (known only to the `node:http` listener).
   */
  proxies: number;
}

/** The one header read here: a WHATWG `Headers`, or the listener's view of node's headers. */
export interface HeaderReader {
  get(name: string): string | null;
}

export class CallbackSources {
  readonly #fetch: () => Promise<readonly string[]>;
  readonly #settings: SourcesSettings;
  readonly #clock: Clock;
  readonly #logger: LightningLogger;
  #list: BlockList | null = null;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | undefined;
  #refused = { count: 0, reportedAt: Number.NEGATIVE_INFINITY };

  constructor(
    fetchIps: () => Promise<readonly string[]>,
    settings: SourcesSettings,
    clock: Clock,
    logger: LightningLogger,
  ) {
    this.#fetch = fetchIps;
    this.#settings = settings;
    this.#clock = clock;
    this.#logger = logger;
  }

  /**
   * Whether a callback with these headers, from this peer (the socket's remote address, null
   * when the transport hides it), comes from an allowed sender.
   */
  async admits(headers: HeaderReader | undefined, peer: string | null = null): Promise<boolean> {
    if (this.#list === null) await this.#refresh();
    else if (this.#clock.now() - this.#fetchedAt >= this.#settings.refreshMs) void this.#refresh();
    const { proxies } = this.#settings;
    const address =
      proxies === 0
        ? peerAddress(peer)
        : senderAddress(headers?.get('x-forwarded-for') ?? null, proxies);
    const list = this.#list;
    const family = address === null ? 0 : isIP(address);
    const ok =
      list !== null && address !== null && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
    if (!ok) this.#reportRefused(address);
    return ok;
  }

  /** One fetch at a time; a failure keeps the previous list. */
  #refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const ips = await this.#fetch();
        this.#list = blockListOf([...ips, ...this.#settings.also]);
        this.#fetchedAt = this.#clock.now();
      } catch (err) {
        this.#logger.warn(
          `could not read the service's callback addresses (GET /v0/prod-ips): ${(err as Error).message}; ${
            this.#list === null ? 'callbacks are refused until it answers' : 'keeping the last list'
          }`,
        );
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** At most one line a minute, however many are refused: a flood cannot flood the log. */
  #reportRefused(address: string | null): void {
    this.#refused.count++;
    const now = this.#clock.now();
    if (now - this.#refused.reportedAt < 60_000) return;
    this.#logger.warn(
      `${this.#refused.count} callback(s) refused: not from the service's addresses (last from ${
        address ??
        (this.#settings.proxies === 0
          ? 'no socket address: proxies 0 needs lightning.attach(server)'
          : 'no X-Forwarded-For entry')
      }; callbackSources.proxies is ${this.#settings.proxies})`,
    );
    this.#refused = { count: 0, reportedAt: now };
  }
}

/**
 * The sender as the game's proxies saw it: the entry `proxies` places from the right of
 * X-Forwarded-For, without brackets, port or IPv4-mapped prefix. Null when there is none or it
 * is not an address.
 */
export function senderAddress(forwardedFor: string | null, proxies: number): string | null {
  if (forwardedFor === null || forwardedFor.length > 2048) return null;
  const entries = forwardedFor.split(',').map((e) => e.trim());
  const entry = entries[entries.length - proxies];
  if (entry === undefined) return null;
  const address = normalise(entry);
  return isIP(address) === 0 ? null : address;
}

/** The socket's peer without the IPv4-mapped prefix; null when unknown (the router's case). */
export function peerAddress(peer: string | null | undefined): string | null {
  if (!peer) return null;
  const address = normalise(peer);
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

function blockListOf(entries: readonly string[]): BlockList {
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
