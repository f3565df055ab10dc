/**
 * Where status callbacks may come from: optional defence in depth on top of the per-intent
 * token and the re-read. The service publishes the addresses it calls from
 * (`GET /v0/prod-ips`); with `callbackSources` set, the callback route answers an empty 403 to
 * any other sender, before it reads the body or touches the ledger.
 *
 * The sender is the client address of server/client-address.ts (`clientAddress` of
 * createLightning, shared with the region gate): the socket's peer with no proxy, else the
 * entry of X-Forwarded-For the game's own proxies wrote (or the header they set). Colyseus's
 * router hands a route a WHATWG Request without the peer's socket, so there `proxies: 0`
 * refuses every callback and a request through proxies cannot be checked to come from one;
 * the `node:http` listener (server/listener.ts) sees the socket and checks both.
 *
 * The list is fetched on first use and again every `refreshMs` in the background, keeping the
 * last good list when a refresh fails. With no list at all (the first fetch failed) callbacks
 * are refused, which loses nothing: the reconciler reads every open intent on its own schedule.
 *
 * Footprint: one API read per `refreshMs`; per callback a header split and a BlockList lookup.
 */
import type { BlockList } from 'node:net';
import type { Clock } from '../clock.js';
import { blockListOf, type ClientAddresses, type HeaderReader, inList } from './client-address.js';
import type { LightningLogger } from './logger.js';

export interface SourcesSettings {
  /** How often the service's addresses are read again, in ms. */
  refreshMs: number;
  /** Addresses or subnets (`10.0.0.0/8`) allowed besides the service's. */
  also: readonly string[];
}

export class CallbackSources {
  readonly #fetch: () => Promise<readonly string[]>;
  readonly #settings: SourcesSettings;
  readonly #addresses: ClientAddresses;
  readonly #clock: Clock;
  readonly #logger: LightningLogger;
  #list: BlockList | null = null;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | undefined;
  #refused = { count: 0, reportedAt: Number.NEGATIVE_INFINITY };

  constructor(
    fetchIps: () => Promise<readonly string[]>,
    settings: SourcesSettings,
    addresses: ClientAddresses,
    clock: Clock,
    logger: LightningLogger,
  ) {
    this.#fetch = fetchIps;
    this.#settings = settings;
    this.#addresses = addresses;
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
    const address = this.#addresses.of(headers, peer);
    const list = this.#list;
    const ok = list !== null && address !== null && inList(list, address);
    if (!ok) this.#reportRefused(address, peer);
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
  #reportRefused(address: string | null, peer: string | null): void {
    this.#refused.count++;
    const now = this.#clock.now();
    if (now - this.#refused.reportedAt < 60_000) return;
    const { proxies, header } = this.#addresses;
    const none =
      proxies === 0
        ? 'no socket address: proxies 0 needs lightning.attach(server)'
        : peer !== null && !this.#addresses.isProxy(peer)
          ? `a socket not among clientAddress.proxyAddresses: ${peer}`
          : `no ${header ?? 'X-Forwarded-For'} entry`;
    this.#logger.warn(
      `${this.#refused.count} callback(s) refused: not from the service's addresses (last from ${
        address ?? none
      }; clientAddress.proxies is ${proxies})`,
    );
    this.#refused = { count: 0, reportedAt: now };
  }
}
