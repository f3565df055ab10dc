/**
 * What the server runs on, started once on first use: the API client and the payments port
 * over one transport (pointed at the embedded emulator when there is no key, which starts
 * here; the game gets the client, everything else the port) and the ledger (opened here unless the
 * game passed its own store). Everything that needs I/O happens in `startRuntime`, so that
 * `createLightning` itself can return at once, in a room's module, with no top-level await.
 */
import { type PaymentsApi, type PaymentsApiOptions, paymentsService } from '../api/client.js';
import { ServicePort } from '../api/port.js';
import type { Emulator } from '../emulator/index.js';
import { SqliteLedger } from '../ledger/sqlite.js';
import type { LedgerStore } from '../ledger/store.js';
import type { PaymentsPort } from '../port/port.js';
import type { Settings } from './options.js';
import { OutboundScheduler } from './outbound.js';

export interface Runtime {
  /** The client the game gets (`lightning.service.api`): it parses what the game hands it. */
  api: PaymentsApi;
  /**
   * The service behind the port, over the same transport, for input already parsed: all the
   * server, the kinds and the rooms reach the service by. This is where a provider is chosen.
   */
  port: PaymentsPort;
  ledger: LedgerStore;
  /** The embedded emulator, when there is no API key. */
  emulator: Emulator | null;
  /** The scheduler in front of every call, when `rateLimit` is set. */
  outbound: OutboundScheduler | null;
  close(): Promise<void>;
}

export async function startRuntime(settings: Settings): Promise<Runtime> {
  let emulator: Emulator | null = null;
  let apiKey = settings.apiKey;
  let baseUrl = settings.baseUrl;
  if (apiKey === undefined) {
    const { startEmulator } = await import('../emulator/index.js');
    emulator = await startEmulator({
      port: settings.emulator.port,
      host: settings.emulator.host,
      allowRemote: settings.emulator.allowRemote,
      logger: settings.logger,
      ...(settings.webhookSecret ? { webhookSecret: settings.webhookSecret } : {}),
    });
    apiKey = emulator.apiKey;
    baseUrl = emulator.url;
    // Off loopback (emulator.allowRemote), the line says where it really listens, as a warning.
    const where = emulator.loopbackOnly
      ? ''
      : `, listening on ${emulator.listening}: other machines can reach it`;
    settings.logger[emulator.loopbackOnly ? 'info' : 'warn'](
      `no apiKey: using the embedded payments emulator at ${emulator.url}${where} (no real money moves); dev wallet: ${emulator.devWalletUrl}`,
    );
  }
  const apiOptions: PaymentsApiOptions = {
    ...settings.api,
    apiKey,
    ...(settings.webhookSecret ? { redact: [settings.webhookSecret] } : {}),
    ...(baseUrl ? { baseUrl } : {}),
  };
  const given = settings.ledger;
  const ledger =
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
  const started = emulator;
  try {
    // A store that cannot keep its promise (a PostgreSQL with fsync off) stops the start, loudly.
    await ledger.open();
  } catch (err) {
    outbound?.close();
    await api.close();
    if (typeof given !== 'object') await ledger.close();
    if (started) await started.close();
    throw err;
  }
  return {
    api,
    port: new ServicePort(calls),
    ledger,
    emulator,
    outbound,
    async close() {
      outbound?.close();
      await api.close();
      if (typeof given !== 'object') await ledger.close();
      if (started) await started.close();
    },
  };
}
