/**
 * The control interface: what a test, a demo or the dev wallet does to the emulator besides
 * calling the API: projects, wallets, points, acting as the player's wallet, webhooks, faults,
 * callback delivery, time, and what happened.
 */

import { randomUUID } from 'node:crypto';
import type { CallbackDispatcher, CallbackOptions, CallbackRecord } from './callbacks.js';
import { disarmTimer, type EmulatorCore, isPrice } from './core.js';
import { claimAsWallet } from './dev-wallet.js';
import type { ActiveFault, FaultRule } from './faults.js';
import type { LnurlResult } from './lnurl.js';
import { paymentView } from './payments.js';
import { type EmulatorRateLimit, rateLimitProblem } from './rate-limit.js';
import type { LoggedRequest, RequestLog } from './request-log.js';
import { fireWebhook } from './sessions.js';
import {
  type PayResult,
  payInvoice,
  payStaticCharge,
  refreshStaticCharge,
  staticChargeView,
} from './static-charges.js';
import {
  type CreatedProject,
  type CreateProjectOptions,
  checkMsat,
  type KeyScope,
  type LnAddressRule,
  type SessionRecord,
  type TransferRecord,
} from './store.js';
import type { WebhookDelivery } from './webhooks.js';
import { startingPoints, userView } from './widget-users.js';
import { refreshWithdrawalRequest, withdrawalRequestView } from './withdrawals.js';

type WithProject<T> = T & { projectId: string };

export interface FaultControl {
  add(rule: FaultRule): ActiveFault;
  remove(fault: ActiveFault | number): void;
  clear(): void;
  list(): ActiveFault[];
}

export interface CallbackControl {
  /** Merges into the current delivery options. */
  set(options: CallbackOptions): void;
  get(): CallbackOptions;
  /** Back to faithful delivery (once, in order, no delay). */
  reset(): void;
  /** Resolves when no callback is delayed, held or in flight. */
  idle(): Promise<void>;
  /** Releases held (reordered) callbacks now, then waits like idle(). */
  flush(): Promise<void>;
  /** Callbacks that failed (receiver error or non-2xx). */
  readonly failures: number;
}

export interface EmulatorControl {
  /** The project startEmulator created; its production key is the emulator's `apiKey`. */
  readonly defaultProjectId: string;
  /** HS256 secret of widget and ramp session tokens. */
  readonly sessionSecret: string;
  /** Signs webhooks (X-ZBD-Signature) when set. */
  webhookSecret: string | undefined;

  createProject(options?: CreateProjectOptions): CreatedProject;
  createKey(projectId: string, scope?: KeyScope): string;
  /** Disables a key at once, as regenerating it in the dashboard does. */
  revokeKey(apiKey: string): void;
  /** Allows or denies the project the widget disclosure interface. */
  setDisclosures(projectId: string, allowed: boolean): void;
  setWallet(msat: number | bigint): void;
  setWallet(projectId: string | undefined, msat: number | bigint): void;
  /** Wallet balance in msat. */
  wallet(projectId?: string): number;

  createUser(options: { email: string; referenceId?: string; projectId?: string }): string;
  setPoints(userId: string, currency: string, amount: number): void;
  points(userId: string, currency: string): number;
  users(projectId?: string): WithProject<ReturnType<typeof userView>>[];
  transfers(projectId?: string): TransferRecord[];

  withdrawalRequests(projectId?: string): WithProject<ReturnType<typeof withdrawalRequestView>>[];
  staticCharges(projectId?: string): WithProject<ReturnType<typeof staticChargeView>>[];
  payments(projectId?: string): WithProject<ReturnType<typeof paymentView>>[];
  /** Payments sent to Lightning addresses (to `address` only, any case), oldest first. */
  lnAddressPayments(address?: string): WithProject<ReturnType<typeof paymentView>>[];
  /**
   * Changes how a test player's Lightning address (`<name>@emulator.test`) behaves: `valid:
   * false` makes it unresolvable; `failPayments: true` accepts payments that then fail. `null`
   * makes it ordinary again.
   */
  setLnAddress(address: string, rule: LnAddressRule | null): void;
  sessions(kind?: SessionRecord['kind']): SessionRecord[];

  /** Claims a withdrawal request as a wallet would (LUD-03 callback with a signed invoice). */
  claimWithdrawal(id: string): LnurlResult;
  /** Pays a static charge through its LNURL-pay path; amount defaults to minAmount. */
  payStaticCharge(id: string, amountMsat?: number): PayResult;
  /** Pays a BOLT11 invoice that the emulator's LNURL-pay callback issued. */
  payInvoice(pr: string): PayResult;

  fireRampWebhook(
    sessionTokenOrReferenceId: string,
    type: 'ramp.purchase.completed' | 'ramp.purchase.failed' | 'ramp.kyc.completed' | (string & {}),
    data?: Record<string, unknown>,
  ): Promise<WebhookDelivery>;
  fireWidgetWebhook(
    sessionTokenOrReferenceId: string,
    type: string,
    data?: Record<string, unknown>,
  ): Promise<WebhookDelivery>;
  readonly webhookLog: readonly WebhookDelivery[];

  readonly faults: FaultControl;
  readonly callbacks: CallbackControl;
  /** Every callback, in the order queued, with its outcome. */
  readonly callbackLog: readonly CallbackRecord[];
  /** Callbacks actually POSTed (delivered or failed). */
  sentCallbacks(): CallbackRecord[];

  /** The latest requests (capped at 10,000), oldest first. */
  readonly requests: readonly LoggedRequest[];
  /** How many requests had this method ('*' for any) and path (exact, or a RegExp). */
  count(method: string, path: string | RegExp): number;
  /** Requests the rate limit answered 429 since the start (or the last reset). */
  readonly limited: number;
  /** The rate limit per API key in force, or null (none). */
  readonly rateLimit: Readonly<Required<EmulatorRateLimit>> | null;
  /** Sets the rate limit per API key (null: none); every key starts with a full bucket. */
  setRateLimit(limit: EmulatorRateLimit | null): void;

  /** Sets what `GET /v0/prod-ips` answers (default 127.0.0.1 and ::1). */
  setProdIps(ips: string[]): void;
  /** Makes `GET /v0/is-supported-region/{ip}` refuse (or, with null, support again) one IP. */
  setRegion(ip: string, refused: { country: string; region: string } | null): void;
  /** Sets what `GET /v0/btcusd` answers, taken at `at` (epoch ms; default: each read's time). */
  setBtcUsdPrice(price: number, at?: number): void;

  /** Applies every due expiry now (timers do it too; this is for clocks without timers). */
  tick(): void;
  /** Back to the state right after start: the default project re-created, options as at start. */
  reset(): void;
}

export interface ControlDefaults {
  defaultProject: Required<
    Pick<CreateProjectOptions, 'projectId' | 'apiKey' | 'sandboxKeyValue' | 'walletMsat'>
  >;
  faults: FaultRule[];
  callbacks: CallbackOptions;
  /** What `GET /v0/btcusd` answers after reset(). */
  btcUsdPrice: number;
  rateLimit: EmulatorRateLimit | null;
}

function filter<T extends { projectId: string }>(items: Iterable<T>, projectId?: string): T[] {
  return [...items].filter((item) => projectId === undefined || item.projectId === projectId);
}

function callbackControl(dispatcher: CallbackDispatcher): CallbackControl {
  return {
    set: (options) => dispatcher.set(options),
    get: () => dispatcher.get(),
    reset: () => dispatcher.resetOptions(),
    idle: () => dispatcher.idle(),
    flush: () => dispatcher.flush(),
    get failures() {
      return dispatcher.failures;
    },
  };
}

export function createControl(
  core: EmulatorCore,
  log: RequestLog,
  defaults: ControlDefaults,
): EmulatorControl {
  const { store } = core;
  const user = (id: string) => {
    const found = store.users.get(id);
    if (!found) throw new Error(`unknown widget user ${id}`);
    return found;
  };

  const control: EmulatorControl = {
    defaultProjectId: defaults.defaultProject.projectId,
    sessionSecret: core.sessionSecret,
    get webhookSecret() {
      return core.webhookSecret;
    },
    set webhookSecret(secret: string | undefined) {
      core.webhookSecret = secret;
    },

    createProject: (options) => store.createProject(options),
    createKey: (projectId, scope = 'production') => store.createKey(projectId, scope),
    revokeKey: (apiKey) => {
      store.keys.delete(apiKey);
    },
    setDisclosures: (projectId, allowed) => {
      store.project(projectId).disclosures = allowed;
    },
    setWallet(a: string | number | bigint | undefined, b?: number | bigint) {
      const [projectId, msat] =
        b === undefined ? [undefined, a as number | bigint] : [a as string | undefined, b];
      store.project(projectId ?? control.defaultProjectId).walletMsat = checkMsat(msat);
    },
    wallet: (projectId) => store.project(projectId ?? control.defaultProjectId).walletMsat,

    createUser({ email, referenceId, projectId }) {
      const id = randomUUID();
      const project = store.project(projectId ?? control.defaultProjectId);
      store.users.set(id, {
        id,
        projectId: project.id,
        referenceId: referenceId ?? null,
        email,
        acceptedDisclosures: new Set(),
        points: startingPoints(core, project),
        createdAt: core.clock.now(),
      });
      return id;
    },
    setPoints(userId, currency, amount) {
      if (!Number.isSafeInteger(amount) || amount < 0)
        throw new RangeError('points must be a non-negative integer');
      user(userId).points.set(currency, amount);
    },
    points: (userId, currency) => user(userId).points.get(currency) ?? 0,
    users: (projectId) =>
      filter(store.users.values(), projectId).map((u) => ({
        projectId: u.projectId,
        ...userView(u),
      })),
    transfers: (projectId) => filter(store.transfers.values(), projectId).map((t) => ({ ...t })),

    withdrawalRequests: (projectId) =>
      filter(store.withdrawalRequests.values(), projectId).map((wr) => {
        refreshWithdrawalRequest(core, wr);
        return { projectId: wr.projectId, ...withdrawalRequestView(core, wr) };
      }),
    staticCharges: (projectId) =>
      filter(store.staticCharges.values(), projectId).map((charge) => {
        refreshStaticCharge(core, charge);
        return { projectId: charge.projectId, ...staticChargeView(core, charge) };
      }),
    payments: (projectId) =>
      filter(store.payments.values(), projectId).map((p) => ({
        projectId: p.projectId,
        ...paymentView(p),
      })),
    lnAddressPayments: (address) =>
      [...store.payments.values()]
        .filter(
          (p) =>
            p.lnAddress !== null &&
            (address === undefined || p.lnAddress === address.toLowerCase()),
        )
        .map((p) => ({ projectId: p.projectId, ...paymentView(p) })),
    setLnAddress(address, rule) {
      if (rule === null) core.lnAddresses.delete(address.toLowerCase());
      else core.lnAddresses.set(address.toLowerCase(), { ...rule });
    },
    sessions: (kind) =>
      [...store.sessions.values()].filter((s) => kind === undefined || s.kind === kind),

    claimWithdrawal: (id) => claimAsWallet(core, id),
    payStaticCharge: (id, amountMsat) => payStaticCharge(core, id, amountMsat),
    payInvoice: (pr) => payInvoice(core, pr),

    fireRampWebhook: (target, type, data) => fireWebhook(core, 'ramp', target, type, data),
    fireWidgetWebhook: (target, type, data) => fireWebhook(core, 'widget', target, type, data),
    get webhookLog() {
      return core.webhookLog;
    },

    faults: core.faults,
    callbacks: callbackControl(core.callbacks),
    get callbackLog() {
      return core.callbacks.log;
    },
    sentCallbacks: () => core.callbacks.sent(),

    get requests() {
      return log.entries;
    },
    count: (method, path) => log.count(method, path),
    get limited() {
      return log.limited;
    },
    get rateLimit() {
      return core.rateLimiter.limit;
    },
    setRateLimit(limit) {
      const problem = limit === null ? undefined : rateLimitProblem(limit);
      if (problem !== undefined) throw new RangeError(`rateLimit: ${problem}`);
      core.rateLimiter.set(limit);
    },

    tick() {
      for (const wr of store.withdrawalRequests.values()) refreshWithdrawalRequest(core, wr);
      for (const charge of store.staticCharges.values()) refreshStaticCharge(core, charge);
    },

    setProdIps(ips) {
      core.prodIps = [...ips];
    },
    setBtcUsdPrice(price, at) {
      if (!isPrice(price)) {
        throw new RangeError('price must be a positive number of US dollars');
      }
      if (at !== undefined && !(Number.isSafeInteger(at) && at >= 0)) {
        throw new RangeError('at must be epoch milliseconds');
      }
      core.btcUsd = { price, at: at ?? null };
    },
    setRegion(ip, refused) {
      if (refused === null) core.unsupported.delete(ip);
      else core.unsupported.set(ip, refused);
    },
    reset() {
      core.prodIps = ['127.0.0.1', '::1'];
      core.btcUsd = { price: defaults.btcUsdPrice, at: null };
      core.unsupported.clear();
      core.lnAddresses.clear();
      for (const id of [...core.timers.keys()]) disarmTimer(core, id);
      core.scheduler.cancelAll();
      store.clear();
      log.clear();
      core.callbacks.clearLog();
      core.callbacks.resetOptions();
      core.callbacks.set(defaults.callbacks);
      core.webhookLog.length = 0;
      core.faults.clear();
      for (const rule of defaults.faults) core.faults.add(rule);
      core.rateLimiter.set(defaults.rateLimit);
      store.createProject(defaults.defaultProject);
    },
  };
  return control;
}
