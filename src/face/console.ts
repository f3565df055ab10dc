/**
 * `lightning.operator.console`: the operator's console (docs/OPERATING.md), mounted as the
 * game's own routes are: as router endpoints, or as a `node:http` listener in front of
 * Colyseus's. Off unless mounted. It calls the face's groups (a narrow ConsoleHost), so every
 * action goes through the engine and names its operator.
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
   * The console's page and routes as router endpoints (no CSV exports: see `attach`). Every
   * route answers an empty 401 unless the game's `authorize(request)` says yes.
   *
   *   routes: createRouter({ ...lightning.endpoints(), ...lightning.operator.console.endpoints({ authorize }) })
   */
  endpoints(options: ConsoleOptions) {
    return consoleEndpoints(this.#host, consoleSettings(options, this.#settings));
  }

  /**
   * The console as a `node:http` listener in front of Colyseus's, with the CSV exports streamed
   * a row at a time (which the router cannot do). Returns a function that removes it.
   */
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
