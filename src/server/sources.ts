/**
 * Where status callbacks may come from: defence in depth on top of the per-intent token and the
 * re-read. With `callbackSources`, a sender not among the service's published addresses gets an
 * empty 403 before the body is read. Without a list yet, callbacks are refused, which loses
 * nothing: the reconciler reads every open intent anyway.
 *
 * Footprint: one API read per `refreshMs`; per callback a header split and a BlockList lookup.
 */
import type { BlockList } from 'node:net';
import type { Clock } from '../clock.js';
import { blockListOf, type ClientAddresses, type HeaderReader, inList } from './client-address.js';
import type { LightningLogger } from './logger.js';

interface SourcesSettings {
  refreshMs: number;
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

  /** Whether a callback comes from an allowed sender (`peer` null where the socket is hidden). */
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

  /** At most one line a minute: a flood cannot flood the log. */
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
