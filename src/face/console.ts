/**
 * `lightning.operator.console` (docs/OPERATING.md): off unless mounted, as router endpoints or
 * a `node:http` listener. It calls the face's groups, so every action names its operator.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ConfigurationError } from '../errors.js';
import { type ConsoleOptions, consoleSettings } from '../operator/console.js';
import { consoleEndpoints } from '../operator/endpoints.js';
import { attachConsole } from '../operator/listener.js';
import type { ConsoleHost } from '../operator/reads.js';
import type { Settings } from '../server/options.js';

export class OperatorConsole {
  readonly #settings: Settings;
  readonly #host: ConsoleHost;

  /** Made by `createLightning`. */
  constructor(settings: Settings, host: ConsoleHost) {
    this.#settings = settings;
    this.#host = host;
  }

  /**
   * The console's page and routes as router endpoints (no CSV exports: see `attach`), each an
   * empty 401 unless `authorize(request)` says yes: `createRouter({ ...console.endpoints(o) })`.
   */
  endpoints(options: ConsoleOptions) {
    return consoleEndpoints(this.#host, consoleSettings(options, this.#settings));
  }

  /** The console as a `node:http` listener, with the CSV exports streamed; returns its remover. */
  attach(server: HttpServer | HttpsServer | undefined, options: ConsoleOptions): () => void {
    const settings = consoleSettings(options, this.#settings);
    if (!server) {
      throw new ConfigurationError(
        'lightning.operator.console.attach(server)',
        "needs the game's node:http server (a WebSocketTransport's `server`)",
      );
    }
    return attachConsole(server, this.#host, settings);
  }
}
