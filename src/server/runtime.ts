/**
 * The composition root, built once on first use: opens the service and the ledger (or the
 * embedded emulator), then builds the engine and every collaborator through its constructor,
 * nothing registered afterwards. All I/O happens here, so `createLightning` returns at once.
 */
import { metrics as otelMetrics } from '@opentelemetry/api';
import { type PaymentsApiOptions, paymentsService } from '../api/client.js';
import { ServicePort } from '../api/port.js';
import type { Emulator } from '../emulator/index.js';
import { SqliteLedger } from '../ledger/sqlite.js';
import { type LedgerStore, readOnlyView } from '../ledger/store.js';
import type { PaymentsPort } from '../port/port.js';
import { Alerts } from './alerts.js';
import { Auditor, type AuditReport } from './audit.js';
import { readBalances } from './balances.js';
import { PayoutBreaker } from './breaker.js';
import { Checks } from './checks.js';
import { ClientAddresses } from './client-address.js';
import { Engine } from './engine.js';
import { eventsOfMoves, type SafeEmitter } from './events.js';
import { KINDS } from './kinds/index.js';
import { Matches } from './match/matches.js';
import { LightningMetrics } from './metrics.js';
import { Moves } from './moves.js';
import { KeptAnswers } from './operations/kept-answers.js';
import { MoneyOperations } from './operations/money.js';
import { Operator } from './operator.js';
import type { Settings } from './options.js';
import { OutboundScheduler } from './outbound.js';
import { PriceFeed } from './price.js';
import { PayoutQueue } from './queue.js';
import { Reconciler } from './reconciler.js';
import { Refusals } from './refusals.js';
import { RegionCache } from './regions.js';
import { Rooms } from './rooms.js';
import { CallbackSources } from './sources.js';
import { webhookUrls } from './webhooks.js';

/** Everything the server runs, built and wired (null parts: their option is not set). */
export type Runtime = ReturnType<typeof build>;

/** The service and the ledger, opened. */
type Opened = Awaited<ReturnType<typeof open>>;

/** Opens, builds, then starts what runs by itself. `events` exists before the server starts. */
export async function createRuntime(settings: Settings, events: SafeEmitter): Promise<Runtime> {
  const opened = await open(settings);
  const runtime = build(opened, settings, events);
  let closed = false;
  const close = runtime.close;
  runtime.close = async () => {
    closed = true;
    await close();
  };
  // A process that starts while an operator's pause holds starts paused.
  await runtime.operator
    .syncPause()
    .catch((err: unknown) =>
      settings.logger.warn(`reading the operator's pause: ${(err as Error).message}`),
    );
  runtime.operator.watchPause();
  runtime.alerts?.start();
  runtime.price?.start();
  // The sweep runs whether or not this process reconciles: some process will.
  void runtime.reconciler.sweep().then(() => {
    if (settings.reconciler.enabled && !closed) runtime.reconciler.start();
  });
  return runtime;
}

/** Every collaborator, through its constructor, in the order they depend on each other. */
function build(opened: Opened, settings: Settings, events: SafeEmitter) {
  const { port, ledger } = opened;
  const { clock, logger } = settings;
  const { engine, rooms, moves } = buildEngine(opened, settings, events);
  const matches = new Matches(engine, moves);
  const auditor = new Auditor(engine, matches);
  const reads = {
    // The last wallet reading, never a call to the service: gauges and checks stay cheap.
    balances: () => readBalances(ledger, auditor.wallet),
    paused: () => engine.breaker.paused,
    ledger,
  };
  // Read as the server starts, so that an SDK the game installed at boot is the one used.
  const provider = settings.meterProvider ?? otelMetrics.getMeterProvider();
  const metrics = new LightningMetrics(provider, moves, reads);
  const checks = new Checks(engine, new PayoutQueue(engine), matches);
  const alerts = settings.alerts
    ? new Alerts({
        settings: settings.alerts,
        clock,
        logger,
        reads,
        emit: (alert) => events.emit('alert', alert),
      })
    : null;
  /** One audit run, then the alerts checked against it. */
  const audit = async (): Promise<AuditReport> => {
    const report = await auditor.run();
    await alerts?.check(report);
    return report;
  };
  const operator = new Operator(engine, matches);
  const refusals = new Refusals(() => engine.now());
  const money = new MoneyOperations(engine, refusals, (kind, err) => metrics.refused(kind, err));
  const reconciler = new Reconciler(engine, checks, audit, (ok) => metrics.checked(ok));
  const { fiat, callbackSources: sources } = settings;
  const price = fiat ? new PriceFeed(() => port.btcUsd(), fiat, logger) : null;
  return {
    ...opened,
    engine,
    rooms,
    checks,
    matches,
    money,
    refusals,
    operator,
    auditor,
    alerts,
    metrics,
    reconciler,
    regions: new RegionCache(port, clock),
    price,
    /** Who may send callbacks. */
    sources: sources
      ? new CallbackSources(
          () => port.callbackSources(),
          sources,
          new ClientAddresses(settings.clientAddress),
          clock,
          logger,
        )
      : null,
    /** The ledger's reads: the one face of it a game gets. */
    view: readOnlyView(ledger),
    webhookUrl: webhookUrls(settings),
    audit,
    close: async () => {
      money.close();
      await reconciler.stop();
      await engine.kept.close();
      operator.close();
      price?.stop();
      metrics.close();
      await alerts?.close();
      await opened.close();
    },
  };
}

/** The engine, its stream of moves (rooms first) and its breaker; exported for a provider test. */
export function buildEngine(
  opened: Pick<Opened, 'port' | 'ledger' | 'outbound'>,
  settings: Settings,
  events: SafeEmitter,
) {
  const { port, ledger, outbound } = opened;
  const { clock, logger } = settings;
  const rooms = new Rooms(logger);
  const moves = new Moves(logger, [rooms.tell, eventsOfMoves(events, KINDS, logger)]);
  const breaker = new PayoutBreaker({
    settings: settings.breaker,
    clock,
    logger,
    port,
    onPause: (pause) => events.emit('paused', pause),
  });
  const kept = new KeptAnswers(clock, logger);
  const engine = new Engine({
    port,
    ledger,
    outbound,
    events,
    moves,
    breaker,
    kept,
    kinds: KINDS,
    settings,
  });
  return { engine, rooms, moves };
}

/** Starts the embedded emulator when there is no key, makes the client, opens the ledger. */
async function open(settings: Settings) {
  let emulator: Emulator | null = null;
  let { apiKey, baseUrl } = settings;
  if (apiKey === undefined) {
    emulator = await startEmbedded(settings);
    apiKey = emulator.apiKey;
    baseUrl = emulator.url;
  }
  const apiOptions: PaymentsApiOptions = {
    ...settings.api,
    apiKey,
    ...(settings.webhookSecret ? { redact: [settings.webhookSecret] } : {}),
    ...(baseUrl ? { baseUrl } : {}),
  };
  const given = settings.ledger;
  const ledger: LedgerStore =
    typeof given === 'object'
      ? given
      : new SqliteLedger({
          path: given ?? (emulator ? ':memory:' : 'lightning-ledger.sqlite'),
          clock: settings.clock,
        });
  // The game's one rate, kept in the ledger so that every process sharing it draws from it.
  const outbound = settings.rateLimit
    ? new OutboundScheduler({
        store: ledger,
        limit: settings.rateLimit,
        clock: settings.clock,
        logger: settings.logger,
      })
    : null;
  const { api, calls } = paymentsService(apiOptions, outbound ?? undefined);
  const close = async () => {
    outbound?.close();
    await api.close();
    if (typeof given !== 'object') await ledger.close();
    if (emulator) await emulator.close();
  };
  try {
    // A store that cannot keep its promise (fsync off) stops the start, loudly.
    await ledger.open();
  } catch (err) {
    await close();
    throw err;
  }
  const port: PaymentsPort = new ServicePort(calls);
  return { api, port, ledger, emulator, outbound, close };
}

/** The embedded emulator, for a game with no API key (and says so in one line). */
async function startEmbedded(settings: Settings): Promise<Emulator> {
  const { startEmulator } = await import('../emulator/index.js');
  const emulator = await startEmulator({
    port: settings.emulator.port,
    host: settings.emulator.host,
    allowRemote: settings.emulator.allowRemote,
    logger: settings.logger,
    ...(settings.webhookSecret ? { webhookSecret: settings.webhookSecret } : {}),
  });
  const where = emulator.loopbackOnly
    ? ''
    : `, listening on ${emulator.listening}: other machines can reach it`;
  settings.logger[emulator.loopbackOnly ? 'info' : 'warn'](
    `no apiKey: using the embedded payments emulator at ${emulator.url}${where} (no real money moves); dev wallet: ${emulator.devWalletUrl}`,
  );
  return emulator;
}
