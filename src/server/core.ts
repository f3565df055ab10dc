/**
 * The server-level object behind `createLightning(options)`. It owns the API client and the ledger,
 * serves the callback and webhook routes, turns callbacks (hints) into verified settlements
 * by re-reading the resource, runs the reconciler that recovers lost callbacks, and tells
 * rooms through Colyseus presence.
 *
 *   const lightning = await createLightning({ apiKey, publicUrl: 'https://game.example.com' });
 *   const server = defineServer({
 *     rooms: { arena: defineRoom(ArenaRoom) },
 *     routes: createRouter({ ...lightning.endpoints() }),
 *   });
 *   lightning.on('settled', (intent) => audit(intent));
 *
 * Footprint: one timer for the reconciler; per settlement one ledger write, one API read and
 * one presence publish.
 */
import { EventEmitter } from 'node:events';
import { matchMaker } from '@colyseus/core';
import type { PaymentsApi } from '../api/client.js';
import type { Emulator } from '../emulator/index.js';
import { type Intent, type IntentPatch, type IntentStatus, isTerminal } from '../ledger/intent.js';
import type { LedgerStore } from '../ledger/store.js';
import { lightningEndpoints } from './endpoints.js';
import { observe } from './observe.js';
import { startEntryFee } from './operations/entry-fee.js';
import type { EntryFeeInput, RewardInput, SpendInput } from './operations/inputs.js';
import { startReward } from './operations/reward.js';
import { startSpend } from './operations/spend.js';
import type { LightningLogger, ResolvedOptions } from './options.js';
import { Reconciler } from './reconciler.js';
import { type PresenceLike, roomChannel, settlementMessage } from './settlement.js';
import { looksLikeToken, sameToken } from './tokens.js';

export interface LightningEvents {
  /** An intent reached a terminal status (completed, expired, failed): exactly once each. */
  settled: [intent: Intent];
  /** Same, per kind and status: `reward.completed`, `entryFee.expired`, `spend.failed`... */
  [event: `${string}.${string}`]: [intent: Intent];
  /** A create whose outcome is unknown: never re-sent; an operator may have to decide. */
  unknown: [intent: Intent, error: Error];
  /** Money arrived for an intent that had already ended (a fee paid after it expired). */
  latePayment: [intent: Intent];
  /**
   * A ramp or widget webhook seen for the first time. `verified` is true when its HMAC
   * signature matched `webhookSecret` (without a secret nothing can be verified).
   */
  webhook: [event: WebhookEvent];
}

export interface WebhookEvent {
  source: 'ramp' | 'widget';
  id: string;
  type: string;
  data: unknown;
  verified: boolean;
}

/** The embedded emulator, when createLightning started one. */
export type EmulatorHandle = Emulator;

export class LightningCore extends EventEmitter<LightningEvents> {
  readonly api: PaymentsApi;
  readonly ledger: LedgerStore;
  /** The embedded emulator, when started without an API key. */
  readonly emulator: EmulatorHandle | null;
  readonly options: ResolvedOptions;
  readonly logger: LightningLogger;
  readonly #reconciler: Reconciler;
  readonly #ownsLedger: boolean;
  #presence: PresenceLike | undefined;
  #closed = false;

  /** Use `createLightning`. */
  constructor(
    options: ResolvedOptions,
    deps: {
      api: PaymentsApi;
      ledger: LedgerStore;
      ownsLedger: boolean;
      emulator: EmulatorHandle | null;
    },
  ) {
    super();
    this.options = options;
    this.api = deps.api;
    this.ledger = deps.ledger;
    this.emulator = deps.emulator;
    this.#ownsLedger = deps.ownsLedger;
    this.logger = options.logger ?? consoleLogger;
    this.#reconciler = new Reconciler(this, options.reconciler);
    if (options.reconciler.enabled) this.#reconciler.start();
  }

  now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  /** The URL the service POSTs an intent's status updates to. */
  callbackUrl(token: string): string {
    return `${this.options.publicUrl}${this.options.prefix}/callbacks/${token}`;
  }

  /** Colyseus router endpoints: spread them into `createRouter({ ... })`. */
  endpoints() {
    return lightningEndpoints(this);
  }

  /** Use this presence instead of the matchmaker's (set by the room plugin on first use). */
  usePresence(presence: PresenceLike): void {
    this.#presence = presence;
  }

  presence(): PresenceLike | undefined {
    return this.#presence ?? (matchMaker.presence as PresenceLike | undefined);
  }

  /**
   * A status callback arrived for `token`. Returns the HTTP status to answer: 404 for a token
   * that is not ours, 200 otherwise. The body is only a hint: it may name the resource of an
   * intent whose create was ambiguous, but the status comes from the API.
   */
  async handleCallback(token: string, hint: unknown): Promise<number> {
    if (!looksLikeToken(token)) return 404;
    const intent = await this.ledger.byCallbackToken(token);
    if (!intent || intent.callbackToken === null || !sameToken(intent.callbackToken, token)) {
      return 404;
    }
    const hintedId =
      typeof hint === 'object' && hint !== null && typeof (hint as { id?: unknown }).id === 'string'
        ? (hint as { id: string }).id
        : undefined;
    await this.check(intent, hintedId);
    return 200;
  }

  /**
   * Re-reads the resource behind `intent` and applies what the API says. Safe to call from
   * any process at any time: transitions are compare-and-set, so a change applies once.
   */
  async check(intent: Intent, hintedRemoteId?: string): Promise<Intent> {
    if (isTerminal(intent.status)) {
      if (intent.kind === 'entryFee' && intent.status === 'expired' && intent.remoteId) {
        await this.#detectLatePayment(intent);
      }
      return intent;
    }
    if (intent.status === 'creating') {
      // Its create call is still in flight in some process, or that process died mid-call.
      if (this.now() - intent.createdAt < this.#reconciler.creatingGraceMs) return intent;
      const stale = await this.apply(
        intent,
        'unknown',
        { nextCheckAt: this.now() },
        'create never answered',
      );
      if (!stale) return intent;
      this.#emitSafely(
        'unknown',
        stale,
        new Error('the create call never answered (process stopped?)'),
      );
      intent = stale;
    }
    const remoteId = intent.remoteId ?? (intent.kind === 'spend' ? '' : hintedRemoteId);
    if (remoteId === undefined) {
      // Nothing to read until a callback names the resource; polling would find nothing.
      return (await this.ledger.update(intent.id, intent.status, { nextCheckAt: null })) ?? intent;
    }
    const now = this.now();
    let observation: Awaited<ReturnType<typeof observe>>;
    try {
      observation = await observe(this.api, intent, remoteId, now);
    } catch (err) {
      this.logger.warn(`check of ${intent.kind} ${intent.id} failed: ${(err as Error).message}`);
      await this.ledger.update(intent.id, intent.status, {
        nextCheckAt: now + this.#reconciler.retryAfterErrorMs(intent),
        checks: intent.checks + 1,
        error: (err as Error).message,
      });
      return intent;
    }
    if (intent.remoteId === null && intent.kind !== 'spend') {
      // An intent whose create was ambiguous learns its resource from a callback: accept it
      // only if the service's own record points back at this intent's callback URL.
      const ours =
        intent.callbackToken !== null &&
        observation.callbackUrl === this.callbackUrl(intent.callbackToken);
      if (!ours) {
        this.logger.warn(`callback for ${intent.id} named ${remoteId}, which is not this intent's`);
        return intent;
      }
    }
    const patch: IntentPatch = { ...observation.patch, checks: intent.checks + 1, error: null };
    let to: IntentStatus | null = observation.to;
    if (to === null && (intent.status === 'unknown' || intent.status === 'creating'))
      to = 'pending';
    if (to === null) {
      patch.nextCheckAt = this.#reconciler.nextCheckAt(intent, now);
      return (await this.ledger.update(intent.id, intent.status, patch, now)) ?? intent;
    }
    if (!isTerminal(to)) patch.nextCheckAt = this.#reconciler.nextCheckAt(intent, now);
    return (await this.apply(intent, to, patch, observation.note)) ?? intent;
  }

  /**
   * Moves an intent and tells everyone who must know: the `settled` events on a terminal
   * status, and the room through presence on every change. Returns null when another writer
   * got there first (then that writer told everyone).
   */
  async apply(
    intent: Intent,
    to: IntentStatus,
    patch: IntentPatch,
    note: string,
  ): Promise<Intent | null> {
    const moved = await this.ledger.transition(intent.id, intent.status, to, {
      patch,
      note,
      now: this.now(),
    });
    if (!moved) return null;
    this.#publish(moved);
    if (isTerminal(moved.status)) {
      this.#emitSafely('settled', moved);
      this.#emitSafely(`${moved.kind}.${moved.status}`, moved);
    }
    return moved;
  }

  /** Pays a player a reward they claim with a wallet; resolves once created (`pending`). */
  reward(input: RewardInput): Promise<Intent> {
    return startReward(this, input);
  }

  /** Charges an entry fee (a single-use static charge); resolves once created (`pending`). */
  chargeEntryFee(input: EntryFeeInput): Promise<Intent> {
    return startEntryFee(this, input);
  }

  /** Debits a widget user's points, once, whatever is retried. Resolves `completed`. */
  spendPoints(input: SpendInput): Promise<Intent> {
    return startSpend(this, input);
  }

  /** Re-checks an intent now (e.g. a player pressed "I paid"), through the same path as callbacks. */
  async refresh(id: string): Promise<Intent | null> {
    const intent = await this.ledger.get(id);
    return intent ? this.check(intent) : null;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#reconciler.stop();
    await this.api.close();
    if (this.#ownsLedger) await this.ledger.close();
    if (this.emulator) await this.emulator.close();
  }

  /** @internal the reconciler's hook for tests and benchmarks */
  get reconciler(): Reconciler {
    return this.#reconciler;
  }

  #publish(intent: Intent): void {
    if (intent.roomId === null) return;
    const presence = this.presence();
    if (!presence) return;
    const warn = (err: unknown) =>
      this.logger.warn(`could not publish settlement ${intent.id}: ${(err as Error).message}`);
    try {
      // RedisPresence publishes asynchronously: a rejection must not become an unhandled one.
      Promise.resolve(
        presence.publish(roomChannel(intent.roomId), settlementMessage(intent)),
      ).catch(warn);
    } catch (err) {
      warn(err);
    }
  }

  #emitSafely<E extends keyof LightningEvents>(event: E, ...args: LightningEvents[E]): void {
    try {
      (this.emit as (e: string, ...a: unknown[]) => boolean)(event as string, ...args);
    } catch (err) {
      // A game's listener must not undo a settlement that the ledger already holds.
      this.logger.error(`a '${String(event)}' listener threw: ${(err as Error).message}`);
    }
  }

  async #detectLatePayment(intent: Intent): Promise<void> {
    try {
      const charge = await this.api.staticCharges.get(intent.remoteId as string);
      const baseline = Number(intent.meta.slotsBaseline ?? 0);
      if (charge.slots > baseline && intent.meta.latePaymentReported !== true) {
        await this.ledger.update(intent.id, 'expired', {
          meta: { ...intent.meta, latePaymentReported: true },
        });
        this.logger.warn(`entry fee ${intent.id} was paid after it expired: refund it`);
        this.#emitSafely('latePayment', intent);
      }
    } catch (err) {
      this.logger.warn(`late-payment check of ${intent.id} failed: ${(err as Error).message}`);
    }
  }
}

export const consoleLogger: LightningLogger = {
  info: (m) => console.info(`[lightning] ${m}`),
  warn: (m) => console.warn(`[lightning] ${m}`),
  error: (m) => console.error(`[lightning] ${m}`),
};
