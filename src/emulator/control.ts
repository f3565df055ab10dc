/**
 * The control interface: what a test, a demo or the dev wallet does to the emulator besides
 * calling the API: projects, wallets, points, acting as the player's wallet, webhooks, faults,
 * callback delivery, time, and what happened.
 */

import type { CallbackDispatcher, CallbackOptions, CallbackRecord } from './callbacks.js';
import { disarmAll, type EmulatorCore, isPrice, type WebhookDelivery } from './core.js';
import { claimAsWallet } from './dev-wallet.js';
import type { FaultRule, FaultSet } from './faults.js';
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
import { addUser, userView } from './widget-users.js';
import { refreshWithdrawalRequest, withdrawalRequestView } from './withdrawals.js';

/** What `emu.control.faults` does: add, remove, clear and list the injected faults. */
export type FaultControl = Pick<FaultSet, 'add' | 'remove' | 'clear' | 'list'>;
export type CallbackControl = ReturnType<typeof callbackControl>;
export type EmulatorControl = ReturnType<typeof createControl>;

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

function callbackControl(dispatcher: CallbackDispatcher) {
  return {
    /** Merges into the current delivery options. */
    set: (options: CallbackOptions) => dispatcher.set(options),
    get: (): CallbackOptions => dispatcher.get(),
    /** Back to faithful delivery (once, in order, no delay). */
    reset: () => dispatcher.resetOptions(),
    /** Resolves when no callback is delayed, held or in flight. */
    idle: () => dispatcher.idle(),
    /** Releases held (reordered) callbacks now, then waits like idle(). */
    flush: () => dispatcher.flush(),
    /** Callbacks that failed (receiver error or non-2xx). */
    get failures(): number {
      return dispatcher.failures;
    },
  };
}

export function createControl(core: EmulatorCore, log: RequestLog, defaults: ControlDefaults) {
  const { store } = core;
  const user = (id: string) => {
    const found = store.users.get(id);
    if (!found) throw new Error(`unknown widget user ${id}`);
    return found;
  };
  const project = (id?: string) => store.project(id ?? defaults.defaultProject.projectId);
  /** The records of one project (every project when `projectId` is undefined), each shown. */
  const listed = <T extends { projectId: string }, V>(
    records: Iterable<T>,
    projectId: string | undefined,
    view: (record: T) => V,
  ) =>
    [...records]
      .filter((r) => projectId === undefined || r.projectId === projectId)
      .map((r) => ({ projectId: r.projectId, ...view(r) }));

  return {
    /** The project startEmulator created; its production key is the emulator's `apiKey`. */
    defaultProjectId: defaults.defaultProject.projectId,
    /** HS256 secret of widget and ramp session tokens. */
    sessionSecret: core.sessionSecret,
    /** Signs webhooks (X-ZBD-Signature) when set. */
    get webhookSecret(): string | undefined {
      return core.webhookSecret;
    },
    set webhookSecret(secret: string | undefined) {
      core.webhookSecret = secret;
    },

    createProject: (options?: CreateProjectOptions): CreatedProject => store.createProject(options),
    createKey: (projectId: string, scope: KeyScope = 'production') =>
      store.createKey(projectId, scope),
    /** Disables a key at once, as regenerating it in the dashboard does. */
    revokeKey: (apiKey: string) => void store.keys.delete(apiKey),
    /** Allows or denies the project the widget disclosure interface. */
    setDisclosures: (projectId: string, allowed: boolean) => {
      store.project(projectId).disclosures = allowed;
    },
    /** `setWallet(msat)` for the default project, or `setWallet(projectId, msat)`. */
    setWallet(
      ...args: [msat: number | bigint] | [projectId: string | undefined, msat: number | bigint]
    ) {
      const [projectId, msat] = args.length === 1 ? [undefined, args[0]] : args;
      project(projectId).walletMsat = checkMsat(msat);
    },
    /** Wallet balance in msat. */
    wallet: (projectId?: string) => project(projectId).walletMsat,
    /**
     * Names players on the dev wallet page (the id stays beside, on hover): the game's own
     * names for its player ids, where a person reads. Unknown ids show as themselves.
     */
    namePlayers(nameOf: (internalId: string) => string | undefined) {
      core.playerName = nameOf;
    },

    createUser(options: { email: string; referenceId?: string; projectId?: string }): string {
      return addUser(core, project(options.projectId), options.email, options.referenceId ?? null)
        .id;
    },
    setPoints(userId: string, currency: string, amount: number) {
      if (!Number.isSafeInteger(amount) || amount < 0)
        throw new RangeError('points must be a non-negative integer');
      user(userId).points.set(currency, amount);
    },
    points: (userId: string, currency: string) => user(userId).points.get(currency) ?? 0,
    users: (projectId?: string) => listed(store.users.values(), projectId, userView),
    transfers: (projectId?: string): TransferRecord[] =>
      listed(store.transfers.values(), projectId, (t) => t),

    withdrawalRequests: (projectId?: string) =>
      listed(store.withdrawalRequests.values(), projectId, (wr) => {
        refreshWithdrawalRequest(core, wr);
        return withdrawalRequestView(core, wr);
      }),
    staticCharges: (projectId?: string) =>
      listed(store.staticCharges.values(), projectId, (charge) => {
        refreshStaticCharge(core, charge);
        return staticChargeView(core, charge);
      }),
    payments: (projectId?: string) => listed(store.payments.values(), projectId, paymentView),
    /** Payments sent to Lightning addresses (to `address` only, any case), oldest first. */
    lnAddressPayments: (address?: string) =>
      listed(
        [...store.payments.values()].filter(
          (p) =>
            p.lnAddress !== null &&
            (address === undefined || p.lnAddress === address.toLowerCase()),
        ),
        undefined,
        paymentView,
      ),
    /**
     * Changes how a test player's Lightning address (`<name>@emulator.test`) behaves: `valid:
     * false` makes it unresolvable; `failPayments: true` accepts payments that then fail. `null`
     * makes it ordinary again.
     */
    setLnAddress(address: string, rule: LnAddressRule | null) {
      if (rule === null) core.lnAddresses.delete(address.toLowerCase());
      else core.lnAddresses.set(address.toLowerCase(), { ...rule });
    },
    sessions: (kind?: SessionRecord['kind']): SessionRecord[] =>
      [...store.sessions.values()].filter((s) => kind === undefined || s.kind === kind),

    /** Claims a withdrawal request as a wallet would (LUD-03 callback with a signed invoice). */
    claimWithdrawal: (id: string): LnurlResult => claimAsWallet(core, id),
    /** Pays a static charge through its LNURL-pay path; amount defaults to minAmount. */
    payStaticCharge: (id: string, amountMsat?: number): PayResult =>
      payStaticCharge(core, id, amountMsat),
    /** Pays a BOLT11 invoice that the emulator's LNURL-pay callback issued. */
    payInvoice: (pr: string): PayResult => payInvoice(core, pr),

    fireRampWebhook: (
      sessionTokenOrReferenceId: string,
      type:
        | 'ramp.purchase.completed'
        | 'ramp.purchase.failed'
        | 'ramp.kyc.completed'
        | (string & {}),
      data?: Record<string, unknown>,
    ) => fireWebhook(core, 'ramp', sessionTokenOrReferenceId, type, data),
    fireWidgetWebhook: (
      sessionTokenOrReferenceId: string,
      type: string,
      data?: Record<string, unknown>,
    ) => fireWebhook(core, 'widget', sessionTokenOrReferenceId, type, data),
    get webhookLog(): readonly WebhookDelivery[] {
      return core.webhookLog;
    },

    faults: core.faults as FaultControl,
    callbacks: callbackControl(core.callbacks),
    /** Every callback, in the order queued, with its outcome. */
    get callbackLog(): readonly CallbackRecord[] {
      return core.callbacks.log;
    },
    /** Callbacks actually POSTed (delivered or failed). */
    sentCallbacks: () => core.callbacks.sent(),

    /** The latest requests (capped at 10,000), oldest first. */
    get requests(): readonly LoggedRequest[] {
      return log.entries;
    },
    /** How many requests had this method ('*' for any) and path (exact, or a RegExp). */
    count: (method: string, path: string | RegExp) => log.count(method, path),
    /** Requests the rate limit answered 429 since the start (or the last reset). */
    get limited(): number {
      return log.limited;
    },
    /** The rate limit per API key in force, or null (none). */
    get rateLimit(): Readonly<Required<EmulatorRateLimit>> | null {
      return core.rateLimiter.limit;
    },
    /** Sets the rate limit per API key (null: none); every key starts with a full bucket. */
    setRateLimit(limit: EmulatorRateLimit | null) {
      const problem = limit === null ? undefined : rateLimitProblem(limit);
      if (problem !== undefined) throw new RangeError(`rateLimit: ${problem}`);
      core.rateLimiter.set(limit);
    },

    /** Applies every due expiry now (timers do it too; this is for clocks without timers). */
    tick() {
      for (const wr of store.withdrawalRequests.values()) refreshWithdrawalRequest(core, wr);
      for (const charge of store.staticCharges.values()) refreshStaticCharge(core, charge);
    },
    /** Sets what `GET /v0/prod-ips` answers (default 127.0.0.1 and ::1). */
    setProdIps(ips: string[]) {
      core.prodIps = [...ips];
    },
    /** Sets what `GET /v0/btcusd` answers, taken at `at` (epoch ms; default: each read's time). */
    setBtcUsdPrice(price: number, at?: number) {
      if (!isPrice(price)) throw new RangeError('price must be a positive number of US dollars');
      if (at !== undefined && !(Number.isSafeInteger(at) && at >= 0)) {
        throw new RangeError('at must be epoch milliseconds');
      }
      core.btcUsd = { price, at: at ?? null };
    },
    /** Makes `GET /v0/is-supported-region/{ip}` refuse (or, with null, support again) one IP. */
    setRegion(ip: string, refused: { country: string; region: string } | null) {
      if (refused === null) core.unsupported.delete(ip);
      else core.unsupported.set(ip, refused);
    },
    /** Back to the state right after start: the default project re-created, options as at start. */
    reset() {
      core.prodIps = ['127.0.0.1', '::1'];
      core.btcUsd = { price: defaults.btcUsdPrice, at: null };
      core.unsupported.clear();
      core.lnAddresses.clear();
      disarmAll(core);
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
}
