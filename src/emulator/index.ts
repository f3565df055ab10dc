/**
 * colyseus-lightning/emulator: a local copy of the payments service for development, tests,
 * demos and benchmarks: same paths, envelopes, state machines, callbacks and LNURL endpoints,
 * plus a control interface, fault injection and an injectable clock.
 *
 *   const emu = await startEmulator();
 *   emu.control.claimWithdrawal(id); // the player's wallet
 *   await emu.close();
 *
 * Development only: loopback unless `allowRemote`; the dev wallet's routes need the key of this
 * start and send no CORS headers, so no other web page can read or use them.
 */

// First: on an older Node, fail here with the version needed, not deep in a dependency.
import '../require-node.js';

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigurationError } from '../errors.js';
import { isLoopbackHost, plainHttpUrl, remoteHostProblem } from './bind.js';
import { createControl, type EmulatorControl } from './control.js';
import { createCore, disarmAll, type EmulatorOptions, isPrice } from './core.js';

export type { EmulatorOptions } from './core.js';

import { rateLimitProblem } from './rate-limit.js';
import { RequestLog } from './request-log.js';
import { createRequestHandler } from './server.js';
import { newKey } from './store.js';

/** What `GET /v0/btcusd` answers unless told otherwise: 1 BTC = 100,000.00 USD. */
export const DEFAULT_BTC_USD_PRICE = 100_000;

/** The default project's wallet: 1,000,000 sats (0.01 BTC), plenty for a demo. */
export const DEFAULT_WALLET_MSAT = 1_000_000_000;

export interface Emulator {
  /** Base URL of the API (no trailing slash); on a wildcard host, the loopback address. */
  readonly url: string;
  /** The address and port bound, as the system reports them (`127.0.0.1:43123`). */
  readonly listening: string;
  /** Whether `listening` is a loopback address (the default); false only with allowRemote. */
  readonly loopbackOnly: boolean;
  /** Production-scope key of the default project. */
  readonly apiKey: string;
  /** Sandbox-scope key of the default project (widget calls answer 403 with it). */
  readonly sandboxKey: string;
  readonly projectId: string;
  /** The dev wallet page with its key in the fragment (never sent to a server): open this URL. */
  readonly devWalletUrl: string;
  /** The key of the `/_emulator/` control routes (header `x-emulator-key`), new at each start. */
  readonly controlKey: string;
  readonly control: EmulatorControl;
  readonly server: Server;
  close(): Promise<void>;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  if (
    options.userPoints !== undefined &&
    !(Number.isSafeInteger(options.userPoints) && options.userPoints >= 0)
  ) {
    throw new RangeError('userPoints must be a non-negative integer');
  }
  const btcUsdPrice = options.btcUsdPrice ?? DEFAULT_BTC_USD_PRICE;
  if (!isPrice(btcUsdPrice)) {
    throw new ConfigurationError('btcUsdPrice', 'must be a positive number of US dollars');
  }
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') {
    throw new ConfigurationError('host', 'must be an IP address or a host name');
  }
  if (options.allowRemote !== true && !isLoopbackHost(host)) {
    throw new ConfigurationError('host', remoteHostProblem(host, 'Pass allowRemote: true'));
  }
  let publicUrl: string | undefined;
  if (options.publicUrl !== undefined) {
    const parsed = plainHttpUrl.safeParse(options.publicUrl);
    if (!parsed.success) {
      throw new ConfigurationError('publicUrl', parsed.error.issues[0]?.message ?? 'invalid');
    }
    publicUrl = parsed.data;
  }
  if (options.rateLimit !== undefined) {
    const problem = rateLimitProblem(options.rateLimit);
    if (problem !== undefined) throw new ConfigurationError('rateLimit', problem);
  }
  const logger = options.logger ?? { warn: (m: string) => console.warn(`[emulator] ${m}`) };
  const core = createCore(options, btcUsdPrice, (m) => logger.warn(m));
  const { store } = core;
  const log = new RequestLog();
  const defaultProject = {
    projectId: 'default',
    apiKey: options.apiKey ?? newKey('production'),
    sandboxKeyValue: options.sandboxKey ?? newKey('sandbox'),
    walletMsat: options.walletMsat ?? DEFAULT_WALLET_MSAT,
  };
  store.createProject(defaultProject);
  const control = createControl(core, log, {
    defaultProject,
    faults: options.faults ?? [],
    callbacks: options.callbacks ?? {},
    btcUsdPrice,
    rateLimit: options.rateLimit ?? null,
  });

  const server = createServer(
    { keepAliveTimeout: 30_000 },
    createRequestHandler(core, log, options),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const { port } = bound;
  const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address);
  // A wildcard accepts on loopback too: the URL the game's own client can always reach.
  const wildcard = { '0.0.0.0': '127.0.0.1', '::': '::1' }[bound.address];
  const url = `http://${bracket(wildcard ?? (host.toLowerCase() === 'localhost' ? 'localhost' : bound.address))}:${port}`;
  core.baseUrl = publicUrl ?? url;

  let closing: Promise<void> | undefined;
  return {
    url,
    listening: `${bracket(bound.address)}:${port}`,
    loopbackOnly: isLoopbackHost(bound.address),
    apiKey: defaultProject.apiKey,
    sandboxKey: defaultProject.sandboxKeyValue,
    projectId: defaultProject.projectId,
    devWalletUrl: `${core.baseUrl}/_emulator/#key=${core.controlKey}`,
    controlKey: core.controlKey,
    control,
    server,
    close() {
      closing ??= new Promise<void>((resolve) => {
        disarmAll(core);
        core.callbacks.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

export { type Clock, ManualClock } from '../clock.js';
export { CONTROL_KEY_HEADER, isLoopbackHost } from './bind.js';
export { type Bolt11, type Bolt11Input, decodeBolt11, encodeBolt11 } from './bolt11.js';
export type {
  CallbackKind,
  CallbackOptions,
  CallbackOutcome,
  CallbackRecord,
} from './callbacks.js';
export type { CallbackControl, EmulatorControl, FaultControl } from './control.js';
export type { WebhookDelivery } from './core.js';
export type { ActiveFault, FaultMode, FaultRule } from './faults.js';
export { LN_ADDRESS_DOMAIN } from './ln-address.js';
export { decodeLnurl, encodeLnurl, type LnurlResult } from './lnurl.js';
export type { EmulatorRateLimit } from './rate-limit.js';
export type { LoggedRequest } from './request-log.js';
export { signWebhook } from './sessions.js';
export type { PayResult } from './static-charges.js';
export type {
  CreatedProject,
  CreateProjectOptions,
  KeyScope,
  LnAddressRule,
  SessionRecord,
  TransferRecord,
} from './store.js';
export { MIN_WITHDRAWAL_MSAT } from './withdrawals.js';
