/**
 * The callback and webhook routes' host (server/routes.ts), whichever carries them: the whole
 * runtime once it runs, the probe's token, and the websocket upgrades for the region gate.
 */
import type { ConnectionAddresses, HeaderReader } from '../server/client-address.js';
import type { LightningLogger } from '../server/logger.js';
import type { Settings } from '../server/options.js';
import type { RoutesHost } from '../server/routes.js';
import type { Runtime } from '../server/runtime.js';
import type { Reach } from './reach.js';

export class RouteHost implements RoutesHost {
  readonly #reach: Reach<Runtime>;
  readonly #closed: () => boolean;
  readonly #connections: ConnectionAddresses;
  readonly prefix: string;
  readonly maxBodyBytes: number;
  readonly logger: LightningLogger;
  readonly probeToken: string;

  /** `closed` says whether the face was closed: a closed server answers as one not running. */
  constructor(
    reach: Reach<Runtime>,
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
