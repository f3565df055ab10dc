/**
 * The engine: the one place where intents move. It turns callbacks (hints) into verified
 * settlements by re-reading the resource, applies every move by compare-and-set, publishes
 * each change to the intent's room through Colyseus presence, and emits the server's events
 * through the one safe emitter. Operations, routes and the reconciler all work through it;
 * it knows none of them, and nothing above the server sees it (the public face is
 * `Lightning`, in ../lightning.ts).
 *
 * Footprint: per settlement one ledger write, one API read and one presence publish.
 */
import { matchMaker } from '@colyseus/core';
import type { PaymentsApi } from '../api/client.js';
import type { Clock } from '../clock.js';
import { type Intent, type IntentPatch, type IntentStatus, isTerminal } from '../ledger/intent.js';
import type { LedgerStore } from '../ledger/store.js';
import type { LightningEventName, LightningEvents, SafeEmitter } from './events.js';
import type { LightningLogger } from './logger.js';
import { observe } from './observe.js';
import type { Settings } from './options.js';
import { nextCheckAt, retryAfterErrorMs } from './schedule.js';
import { type PresenceLike, roomChannel, settlementMessage } from './settlement.js';
import { looksLikeToken, sameToken } from './tokens.js';

/** What the engine is built from: everything it uses, nothing it does not. */
export interface EngineDeps {
  api: PaymentsApi;
  ledger: LedgerStore;
  events: SafeEmitter;
  settings: Pick<
    Settings,
    'publicUrl' | 'prefix' | 'reconciler' | 'clock' | 'logger' | 'webhookSecret'
  >;
}

export class Engine {
  readonly api: PaymentsApi;
  readonly ledger: LedgerStore;
  readonly clock: Clock;
  readonly logger: LightningLogger;
  readonly settings: EngineDeps['settings'];
  readonly #events: SafeEmitter;
  #presence: PresenceLike | undefined;

  constructor(deps: EngineDeps) {
    this.api = deps.api;
    this.ledger = deps.ledger;
    this.#events = deps.events;
    this.settings = deps.settings;
    this.clock = deps.settings.clock;
    this.logger = deps.settings.logger;
  }

  now(): number {
    return this.clock.now();
  }

  /** Emits one of the server's events; a listener that throws is logged, never rethrown. */
  emit<E extends LightningEventName>(event: E, ...args: LightningEvents[E]): void {
    this.#events.emit(event, ...args);
  }

  /** The URL the service POSTs an intent's status updates to. */
  callbackUrl(token: string): string {
    return `${this.settings.publicUrl}${this.settings.prefix}/callbacks/${token}`;
  }

  /** The URL of the ramp or widget webhook route. */
  webhookUrl(source: 'ramp' | 'widget'): string {
    return `${this.settings.publicUrl}${this.settings.prefix}/webhooks/${source}`;
  }

  /** When an open intent should be read again, from now. */
  nextCheckAt(intent: Intent): number {
    return nextCheckAt(intent, this.now(), this.settings.reconciler);
  }

  /** Publish settlements on this presence instead of the matchmaker's (set by the room plugin). */
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

  /** Re-checks an intent by id now; null when the ledger has no such intent. */
  async refresh(id: string): Promise<Intent | null> {
    const intent = await this.ledger.get(id);
    return intent ? this.check(intent) : null;
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
      if (this.now() - intent.createdAt < this.settings.reconciler.creatingGraceMs) return intent;
      const stale = await this.apply(
        intent,
        'unknown',
        { nextCheckAt: this.now() },
        'create never answered',
      );
      if (!stale) return intent;
      this.emit('unknown', stale, new Error('the create call never answered (process stopped?)'));
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
        nextCheckAt: now + retryAfterErrorMs(intent, this.settings.reconciler),
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
      patch.nextCheckAt = nextCheckAt(intent, now, this.settings.reconciler);
      return (await this.ledger.update(intent.id, intent.status, patch, now)) ?? intent;
    }
    if (!isTerminal(to)) patch.nextCheckAt = nextCheckAt(intent, now, this.settings.reconciler);
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
      this.emit('settled', moved);
      this.emit(`${moved.kind}.${moved.status}`, moved);
    }
    return moved;
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

  async #detectLatePayment(intent: Intent): Promise<void> {
    try {
      const charge = await this.api.staticCharges.get(intent.remoteId as string);
      const baseline = Number(intent.meta.slotsBaseline ?? 0);
      if (charge.slots > baseline && intent.meta.latePaymentReported !== true) {
        await this.ledger.update(intent.id, 'expired', {
          meta: { ...intent.meta, latePaymentReported: true },
        });
        this.logger.warn(`entry fee ${intent.id} was paid after it expired: refund it`);
        this.emit('latePayment', intent);
      }
    } catch (err) {
      this.logger.warn(`late-payment check of ${intent.id} failed: ${(err as Error).message}`);
    }
  }
}
