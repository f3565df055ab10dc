/**
 * The callback and webhook routes' host (server/routes.ts), whichever carries them
 * (`lightning.endpoints()` or `lightning.attach(server)`): the engine once it runs, the probe's
 * token, the metrics' count of answers, and the websocket upgrades for the region gate.
 */
import type { ConnectionAddresses, HeaderReader } from '../server/client-address.js';
import type { LightningLogger } from '../server/logger.js';
import type { Settings } from '../server/options.js';
import type { RoutesHost } from '../server/routes.js';
import type { Runtime } from '../server/runtime.js';
import type { Reach } from './reach.js';

/** The routes reach the whole runtime: the engine, the sources, the webhooks and the metrics. */
export type RouteParts = Runtime;

export class RouteHost implements RoutesHost {
  readonly #reach: Reach<RouteParts>;
  readonly #closed: () => boolean;
  readonly #connections: ConnectionAddresses;
  readonly prefix: string;
  readonly maxBodyBytes: number;
  readonly logger: LightningLogger;
  readonly probeToken: string;

  /** `closed` says whether the face was closed: a closed server answers as one not running. */
  constructor(
    reach: Reach<RouteParts>,
    closed: () => boolean,
    settings: Settings,
    probeToken: string,
    connections: ConnectionAddresses,
  ) {
    this.#reach = reach;
    this.#closed = closed;
    this.#connections = connections;
    this.prefix = settings.prefix;
    this.maxBodyBytes = settings.maxBodyBytes;
    this.logger = settings.logger;
    this.probeToken = probeToken;
  }

  runtime(): Promise<Runtime> {
    return this.#reach.start();
  }

  running(): Runtime | undefined {
    return this.#closed() ? undefined : this.#reach.now();
  }

  callbackAnswered(status: number): void {
    this.#reach.now()?.metrics.callback(status);
  }

  upgrade(url: string, headers: HeaderReader, peer: string | null): void {
    this.#connections.upgrade(url, headers, peer);
  }
}
