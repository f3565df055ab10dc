/**
 * `createLightning(options)`: the object a game server creates once, in its own module, and
 * imports wherever it is needed. It returns at once: the embedded emulator starts and the
 * ledger opens on first use (a room's creation, a helper, a callback) or in
 * `await lightning.ready()`, so a room file can say `plugins = definePlugins([lightning.plugin()])`
 * with no top-level await, in ESM and CommonJS alike.
 *
 *   // lightning.ts
 *   export const lightning = createLightning({ apiKey, publicUrl: 'https://game.example.com' });
 *   // app.config.ts
 *   export default defineServer({
 *     rooms: { arena: defineRoom(Arena) },
 *     routes: createRouter({ ...lightning.endpoints() }),
 *     beforeListen: () => lightning.ready(),
 *   });
 *
 * This is the public face only: the engine behind it (server/engine.ts) moves the intents,
 * and neither it nor the runtime's secrets are reachable from here. At the top, what a game
 * calls every day (the lifecycle, events, the plugin and the routes, the money helpers); the
 * rest by concern, each group in face/: `matches`, `books`, `operator` (with its `console`),
 * `service`. Every option lives in a private field, so no rendering of the object shows one.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { ConfigurationError } from './errors.js';
import { LightningBooks } from './face/books.js';
import { LightningMatches } from './face/matches.js';
import { LightningOperator } from './face/operator.js';
import { RoomHost } from './face/room-host.js';
import { RouteHost } from './face/routes-host.js';
import { LightningService } from './face/service.js';
import type { Intent } from './ledger/intent.js';
import { type LedgerView, readOnlyView } from './ledger/store.js';
import { parseInput } from './parse.js';
import type { LightningPluginOptions } from './room/options.js';
import { LightningPlugin } from './room/plugin.js';
import { Alerts } from './server/alerts.js';
import { Auditor, type AuditReport } from './server/audit.js';
import { readBalances } from './server/balances.js';
import { ClientAddresses, ConnectionAddresses } from './server/client-address.js';
import { lightningEndpoints } from './server/endpoints.js';
import { Engine } from './server/engine.js';
import { type LightningEventName, type LightningEvents, SafeEmitter } from './server/events.js';
import { KINDS } from './server/kinds/index.js';
import { attachRoutes } from './server/listener.js';
import { Matches } from './server/match/matches.js';
import { LightningMetrics } from './server/metrics.js';
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
import { Operator } from './server/operator.js';
import { type LightningOptions, resolveOptions, type Settings } from './server/options.js';
import { PriceFeed } from './server/price.js';
import { newProbeToken, probeCallbackRoute } from './server/probe.js';
import { PayoutQueue, queueRewards, type RewardManyResult } from './server/queue.js';
import { Reconciler } from './server/reconciler.js';
import { RegionCache } from './server/regions.js';
import { type Runtime, startRuntime } from './server/runtime.js';

type Listener<E extends LightningEventName> = (...args: LightningEvents[E]) => void;

interface Running {
  runtime: Runtime;
  /** The ledger's reads, the one face of it a game gets. */
  view: LedgerView;
  engine: Engine;
  auditor: Auditor;
  /** One audit run, then the alerts checked against it. */
  audit(): Promise<AuditReport>;
  /** Null unless `alerts` is set. */
  alerts: Alerts | null;
  metrics: LightningMetrics;
  reconciler: Reconciler;
  matches: Matches;
  /** The operator's actions, each a line in the ledger's operator log. */
  operator: Operator;
  regions: RegionCache;
  /** Null unless `fiat` is set. */
  price: PriceFeed | null;
}

export class Lightning {
  readonly #settings: Settings;
  readonly #events: SafeEmitter;
  readonly #host: RoomHost;
  readonly #routes: RouteHost;
  #starting: Promise<Running> | undefined;
  #running: Running | undefined;
  #closed = false;
  #readyWatch: NodeJS.Timeout | undefined;
  readonly #probeToken = newProbeToken();
  readonly #probe = new AbortController();

  /** Paid matches from the server, outside a room: open, enter, settle, abort, get. */
  readonly matches: LightningMatches;

  /**
   * The books: the balances, the journal, the live audit, the claim codes owed to a player, a
   * re-check of one intent, and the ledger's reads.
   */
  readonly books: LightningBooks;

  /**
   * The operator's calls (unknowns, resolve, pause and resume, approvals, reissue, blocks, the
   * operator log, alerts), the reconciler's controls, and the console (`operator.console`).
   */
  readonly operator: LightningOperator;

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
  }

  /**
   * Starts what the server runs on (the embedded emulator without a key, the ledger, the
   * reconciler) if it is not running yet. Safe to call any number of times.
   */
  async ready(): Promise<void> {
    await this.#start();
  }

  /**
   * Calls `listener` on each `event` (typed: `lightning.on('setled', ...)` does not compile; a
   * listener that throws is logged, never allowed to change an HTTP answer or hide an error).
   * Returns the function that removes it.
   */
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
   * The same routes as `endpoints()`, on the lightest path: a `node:http` request listener in
   * front of Colyseus's, cheaper per callback than the router (bench/README.md). Pass the
   * game's HTTP server, before or after it listens; every other request goes on to Colyseus
   * untouched. Returns a function that removes it.
   *
   *   const transport = new WebSocketTransport();
   *   lightning.attach(transport.server);
   *   export default defineServer({ transport, rooms, beforeListen: () => lightning.ready() });
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
    return this.#host.reward(parseInput(rewardInput, input));
  }

  /**
   * Rewards many players at once (a leaderboard): every reward is recorded `queued` now, in the
   * list's order, and sent in its turn by the reconciler of any process of the game (at the
   * game's `rateLimit`, or at the reconciler's pace), exactly once each; each player's code
   * appears when it is made (`settled` events follow as for `reward`). Each reward is checked
   * as `reward` checks it (a blocked player, `maxRewardMsat`, the budgets, the open-intent
   * limits): one refused is listed in `refused` with its error, and the others are recorded.
   * A bad list (1 to 1,000 rewards, each as for `reward`) is refused whole, nothing recorded.
   */
  async rewardMany(input: RewardManyInput): Promise<RewardManyResult> {
    const list = parseInput(rewardManyInput, input, 'rewards');
    return queueRewards((await this.#start()).engine, list);
  }

  /**
   * Pays a player straight to their Lightning address (`name@domain`), once. Resolves with the
   * intent once the service took it: `pending` while it is processing, or already `completed`
   * or `failed`; the `payment.completed` event follows a pending one. The address is checked
   * first, briefly: one the service cannot pay, whose check does not answer, or to which a
   * payment just failed rejects with LnAddressRefusedError, nothing recorded or sent (one the
   * service still refuses at the send: InvalidRequestError, nothing paid). A send whose answer
   * was lost rejects with AmbiguousResultError and leaves the intent `unknown`: it is never
   * sent again, a callback that proves it settles it, or an operator does
   * (`operator.unknowns()`, `operator.resolve()`).
   */
  async payAddress(input: AddressPaymentInput): Promise<Intent> {
    return this.#host.payAddress(parseInput(addressPaymentInput, input));
  }

  /** Charges an entry fee (a single-use static charge); resolves once created (`pending`). */
  async chargeEntryFee(input: EntryFeeInput): Promise<Intent> {
    return this.#host.chargeEntryFee(parseInput(entryFeeInput, input));
  }

  /** Debits a widget user's points, once, whatever is retried. Resolves `completed`. */
  async spendPoints(input: SpendInput): Promise<Intent> {
    return this.#host.spendPoints(parseInput(spendInput, input));
  }

  /** Stops the reconciler, closes the client, the ledger it opened and the emulator it started. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#readyWatch);
    this.#probe.abort();
    const running = await this.#starting?.catch(() => undefined);
    if (!running) return;
    await running.reconciler.stop();
    await running.engine.kept.close();
    running.operator.close();
    running.price?.stop();
    running.metrics.close();
    await running.alerts?.close();
    await running.runtime.close();
  }

  #start(): Promise<Running> {
    if (this.#closed) {
      return Promise.reject(new ConfigurationError('lightning', 'is closed'));
    }
    this.#starting ??= startRuntime(this.#settings).then(async (runtime) => {
      const engine = new Engine({
        port: runtime.port,
        ledger: runtime.ledger,
        outbound: runtime.outbound,
        events: this.#events,
        kinds: KINDS,
        settings: this.#settings,
      });
      new PayoutQueue(engine);
      const auditor = new Auditor(engine);
      // Read as the server starts, so that an SDK the game installed at boot is the one used.
      const metrics = new LightningMetrics(
        this.#settings.meterProvider ?? otelMetrics.getMeterProvider(),
      );
      if (metrics.live) {
        // Without an SDK a move costs nothing more: no observer, no timing.
        engine.follow(async (intent, what) => metrics.moved(intent, what));
        engine.onCallbackMove = (intent, ms) => metrics.callbackMoved(intent, ms);
      }
      const reads = {
        // The last wallet reading, never a call to the service: gauges and checks stay cheap.
        balances: () => readBalances(runtime.ledger, auditor.wallet),
        unknowns: (limit: number) => runtime.ledger.unknowns(limit),
        held: (limit: number) => runtime.ledger.held(limit),
        openCount: () => runtime.ledger.openCount(),
        paused: () => engine.breaker.paused,
      };
      metrics.observe(reads);
      const { alerts: alertSettings, clock, logger } = this.#settings;
      const alerts = alertSettings
        ? new Alerts({
            settings: alertSettings,
            clock,
            logger,
            reads,
            emit: (alert) => this.#events.emit('alert', alert),
          })
        : null;
      const audit = async () => {
        const report = await auditor.run();
        await alerts?.check(report);
        return report;
      };
      const reconciler = new Reconciler(engine, audit, (ok) => metrics.checked(ok));
      const matches = new Matches(engine);
      const regions = new RegionCache(runtime.port, this.#settings.clock);
      const view = readOnlyView(runtime.ledger);
      const operator = new Operator(engine, matches);
      // A process that starts while an operator's pause holds starts paused.
      await operator
        .syncPause()
        .catch((err: unknown) =>
          this.#settings.logger.warn(`reading the operator's pause: ${(err as Error).message}`),
        );
      operator.watchPause();
      const { fiat } = this.#settings;
      const price = fiat
        ? new PriceFeed(
            () => runtime.port.btcUsd(),
            { currency: 'USD', refreshMs: fiat.refreshMs },
            logger,
          )
        : null;
      this.#running = {
        runtime,
        view,
        engine,
        auditor,
        audit,
        alerts,
        metrics,
        reconciler,
        matches,
        operator,
        regions,
        price,
      };
      alerts?.start();
      price?.start();
      // The sweep runs whether or not this process reconciles: some process will.
      void reconciler.sweep().then(() => {
        if (this.#settings.reconciler.enabled && !this.#closed) reconciler.start();
      });
      this.#probeOwnRoute(runtime.emulator !== null);
      return this.#running;
    });
    return this.#starting;
  }

  /**
   * In development (the emulator, or a real key outside production), checks once the server
   * listens that `publicUrl` reaches this server's callback route, and warns when it does not.
   */
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
   * The routes or the plugin were made (`what`): the server is about to listen. Unless
   * `ready()` (or a first use) starts it within `startWithoutReadyMs`, it starts then, and says
   * so outside production, once: a forgotten `ready()` would leave a restarted server's open
   * payments unrecovered and the dev wallet URL unprinted until a player's first payment.
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
