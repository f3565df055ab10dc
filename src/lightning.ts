/**
 * `createLightning(options)`: the object a game server creates once, in its own module. It does
 * no I/O: the emulator starts and the ledger opens on first use or in `ready()`, so a room file
 * can name `lightning.plugin()` in a class field with no top-level await, in ESM and CommonJS.
 *
 *   export const lightning = createLightning({ apiKey, publicUrl: 'https://game.example.com' });
 *   export default defineServer({
 *     rooms: { arena: defineRoom(Arena) },
 *     routes: createRouter({ ...lightning.endpoints() }),
 *     beforeListen: () => lightning.ready(),
 *   });
 *
 * At the top, what a game calls every day; the rest by concern, each group in face/. The engine
 * and every option stay in private fields: no rendering of the object shows one.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ConfigurationError } from './errors.js';
import { LightningBooks } from './face/books.js';
import { LightningMatches } from './face/matches.js';
import { LightningOperator } from './face/operator.js';
import { RoomHost } from './face/room-host.js';
import { RouteHost } from './face/routes-host.js';
import { LightningService } from './face/service.js';
import { LightningTabs } from './face/tabs.js';
import type { Intent } from './ledger/intent.js';
import { parseInput } from './parse.js';
import type { LightningPluginOptions } from './room/options.js';
import { LightningPlugin } from './room/plugin.js';
import { ClientAddresses, ConnectionAddresses } from './server/client-address.js';
import { lightningEndpoints } from './server/endpoints.js';
import { type LightningEventName, type LightningEvents, SafeEmitter } from './server/events.js';
import { attachRoutes } from './server/listener.js';
import {
  type AddressPaymentInput,
  addressPaymentInput,
  type EntryFeeInput,
  entryFeeInput,
  type RewardInput,
  type RewardManyInput,
  rewardInput,
  rewardManyInput,
  type SpendInput,
  spendInput,
} from './server/operations/inputs.js';
import { type LightningOptions, resolveOptions, type Settings } from './server/options.js';
import { newProbeToken, probeCallbackRoute } from './server/probe.js';
import { queueRewards, type RewardManyResult } from './server/queue.js';
import { createRuntime, type Runtime } from './server/runtime.js';

type Listener<E extends LightningEventName> = (...args: LightningEvents[E]) => void;

export class Lightning {
  readonly #settings: Settings;
  readonly #events: SafeEmitter;
  readonly #host: RoomHost;
  readonly #routes: RouteHost;
  #starting: Promise<Runtime> | undefined;
  #running: Runtime | undefined;
  #closed = false;
  #readyWatch: NodeJS.Timeout | undefined;
  readonly #probeToken = newProbeToken();
  readonly #probe = new AbortController();

  /** Paid matches from the server, outside a room: open, enter, settle, abort, get. */
  readonly matches: LightningMatches;
  /** The books: balances, journal, audit, codes owed to a player, the ledger's reads. */
  readonly books: LightningBooks;
  /** The operator's calls, the reconciler's controls, and the console (`operator.console`). */
  readonly operator: LightningOperator;
  /** Players' tabs: credits with no service call, withdrawn as one claim code (docs/MATCHES.md). */
  readonly tabs: LightningTabs;
  /** What lightning runs on, for the game's own code: `api`, `emulator`, `clientAddress(req)`. */
  readonly service: LightningService;

  /** Use `createLightning(options)`. */
  constructor(options: LightningOptions = {}) {
    this.#settings = resolveOptions(options);
    this.#events = new SafeEmitter(() => this.#settings.logger);
    const addresses = new ClientAddresses(this.#settings.clientAddress);
    const connections = new ConnectionAddresses(addresses);
    const reach = { start: () => this.#start(), now: () => this.#running };
    this.#host = new RoomHost(reach, this.#settings, addresses, connections);
    this.#routes = new RouteHost(
      reach,
      () => this.#closed,
      this.#settings,
      this.#probeToken,
      connections,
    );
    this.matches = new LightningMatches(reach);
    this.books = new LightningBooks(reach);
    this.operator = new LightningOperator(reach, this.#settings, this);
    this.service = new LightningService(reach, addresses);
    this.tabs = new LightningTabs(reach);
  }

  /** Starts the embedded emulator, the ledger and the reconciler if not running yet; idempotent. */
  async ready(): Promise<void> {
    await this.#start();
  }

  /** Calls `listener` on each `event` (one that throws is logged); returns its remover. */
  on<E extends LightningEventName>(event: E, listener: Listener<E>): () => void {
    this.#events.on(event, listener as never);
    return () => this.#events.off(event, listener as never);
  }

  /** Colyseus router endpoints (callbacks and webhooks): spread into `createRouter({ ... })`. */
  endpoints() {
    this.#expectReady('lightning.endpoints()');
    if (this.#settings.callbackSources && this.#settings.clientAddress.proxies === 0) {
      this.#settings.logger.warn(
        'callbackSources with clientAddress.proxies 0 (no proxy), but the router cannot see the socket: its callback route refuses every callback; use lightning.attach(server) instead',
      );
    }
    return lightningEndpoints(this.#routes);
  }

  /**
   * The routes of `endpoints()` as a `node:http` listener in front of Colyseus's, cheaper per
   * callback: `lightning.attach(transport.server)`, before or after it listens. Returns its remover.
   */
  attach(server: HttpServer | HttpsServer | undefined): () => void {
    if (!server) {
      throw new ConfigurationError(
        'lightning.attach(server)',
        "needs the game's node:http server (a WebSocketTransport's `server`)",
      );
    }
    this.#expectReady('lightning.attach(server)');
    return attachRoutes(server, this.#routes);
  }

  /**
   * The room plugin: `plugins = definePlugins([lightning.plugin()])`, then
   * `this.plugins.lightning.reward(client, ...)` inside the room.
   */
  plugin(options: LightningPluginOptions = {}): LightningPlugin {
    this.#expectReady('lightning.plugin()');
    return new LightningPlugin(this.#host, options);
  }

  /** Pays a player a reward they claim with a wallet; resolves once created (`pending`). */
  async reward(input: RewardInput): Promise<Intent> {
    const args = parseInput(rewardInput, input);
    return (await this.#start()).money.reward(args);
  }

  /**
   * Rewards many players at once (a leaderboard): each is recorded `queued` now and sent once in
   * its turn, at the game's `rateLimit`. One `reward` would refuse is listed in `refused`.
   */
  async rewardMany(input: RewardManyInput): Promise<RewardManyResult> {
    const list = parseInput(rewardManyInput, input, 'rewards');
    return queueRewards((await this.#start()).engine, list);
  }

  /**
   * Pays a player straight to their Lightning address (`name@domain`), once; resolves once the
   * service took it. An address it cannot pay: LnAddressRefusedError, nothing sent. A lost
   * answer: AmbiguousResultError, the intent `unknown`, never sent again (`operator.unknowns()`).
   */
  async payAddress(input: AddressPaymentInput): Promise<Intent> {
    const args = parseInput(addressPaymentInput, input);
    return (await this.#start()).money.payAddress(args);
  }

  /** Charges an entry fee (a single-use static charge); resolves once created (`pending`). */
  async chargeEntryFee(input: EntryFeeInput): Promise<Intent> {
    const args = parseInput(entryFeeInput, input);
    return (await this.#start()).money.chargeEntryFee(args);
  }

  /** Debits a widget user's points, once, whatever is retried. Resolves `completed`. */
  async spendPoints(input: SpendInput): Promise<Intent> {
    const args = parseInput(spendInput, input);
    return (await this.#start()).money.spendPoints(args);
  }

  /** Stops the reconciler, closes the client, the ledger it opened and the emulator it started. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#readyWatch);
    this.#probe.abort();
    const running = await this.#starting?.catch(() => undefined);
    await running?.close();
  }

  #start(): Promise<Runtime> {
    if (this.#closed) {
      return Promise.reject(new ConfigurationError('lightning', 'is closed'));
    }
    this.#starting ??= createRuntime(this.#settings, this.#events).then((runtime) => {
      this.#running = runtime;
      this.#probeOwnRoute(runtime.emulator !== null);
      return runtime;
    });
    return this.#starting;
  }

  /** Outside production, warns once the server listens if `publicUrl` misses its callback route. */
  #probeOwnRoute(emulator: boolean): void {
    if (!emulator && process.env.NODE_ENV === 'production') return;
    const { publicUrl, prefix, logger, reconciler } = this.#settings;
    void probeCallbackRoute({
      publicUrl,
      prefix,
      logger,
      token: this.#probeToken,
      firstCheckMs: reconciler.firstCheckMs,
      signal: this.#probe.signal,
    });
  }

  /**
   * The routes or the plugin were made: the server is about to listen. A forgotten `ready()`
   * would leave a restarted server's open payments unrecovered until a first payment: it starts
   * after `startWithoutReadyMs` anyway, and says so outside production.
   */
  #expectReady(what: string): void {
    const { startWithoutReadyMs: after, logger } = this.#settings;
    if (after === 0 || this.#readyWatch !== undefined || this.#starting || this.#closed) return;
    this.#readyWatch = setTimeout(() => {
      if (this.#starting || this.#closed) return;
      if (process.env.NODE_ENV !== 'production') {
        logger.warn(
          `lightning.ready() was not called within ${after} ms of ${what}: starting now. Until it starts, a restarted server does not recover its open payments and the dev wallet URL is not printed; call \`await lightning.ready()\` before the server listens (e.g. in beforeListen)`,
        );
      }
      this.#start().catch((err: Error) => logger.error(`lightning did not start: ${err.message}`));
    }, after);
    this.#readyWatch.unref();
  }
}

/**
 * Creates the server-level object, at once (see `ready()`). Without `apiKey` it will start the
 * embedded emulator (and say so in one line); with `NODE_ENV=production` and no key it throws.
 */
export function createLightning(options: LightningOptions = {}): Lightning {
  return new Lightning(options);
}
