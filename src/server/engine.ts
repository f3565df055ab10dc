/**
 * The engine: the one place where intents move. It turns callbacks (hints) into verified
 * settlements by re-reading the resource, applies every move by compare-and-set, publishes
 * each change to the intent's room through Colyseus presence, and emits the server's events
 * through the one safe emitter. Operations, routes and the reconciler all work through it;
 * it knows none of them, and nothing above the server sees it (the public face is
 * `Lightning`, in ../lightning.ts).
 *
 * Footprint: per settlement one ledger write, one API read, and one delivery to the intent's
 * room: in hand to a room of this process (`hostRoom`: nothing read back, nothing published),
 * else one presence publish.
 */

import { matchMaker } from '@colyseus/core';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { BudgetExceededError } from '../errors.js';
import {
  type Intent,
  type IntentKind,
  type IntentPatch,
  type IntentStatus,
  isPayout,
  isTerminal,
  type NewIntent,
} from '../ledger/intent.js';
import { afterWrite, draftOf, postingsFor } from '../ledger/journal.js';
import type { BudgetWindow, CreateGuards, LedgerStore } from '../ledger/store.js';
import { parseInput } from '../parse.js';
import type { PaymentsPort } from '../port/port.js';
import { parseJson } from './body.js';
import { PayoutBreaker } from './breaker.js';
import { ClientAddresses } from './client-address.js';
import type { LightningEventName, LightningEvents, SafeEmitter } from './events.js';
import type { KindHost, KindRules, KindTable, Observation } from './kinds/kind.js';
import type { LightningLogger } from './logger.js';
import { KeptAnswers } from './operations/kept-answers.js';
import type { Settings } from './options.js';
import type { CreateTokens } from './outbound.js';
import { nextCheckAt, retryAfterErrorMs } from './schedule.js';
import { type PresenceLike, roomChannel, settlementMessage } from './settlement.js';
import { CallbackSources } from './sources.js';
import { looksLikeToken, sameToken } from './tokens.js';

/**
 * An intent id as the game hands it back: checked here, before the store sees it, because a
 * store binds what it is given (node:sqlite takes an object for named parameters).
 */
const intentId = z.string({ error: 'must be an intent id (a string)' }).min(1).max(200);
/** How many unknowns one call lists: enough for an operator's page, bounded for the store. */
const unknownsLimit = z.number().int().min(1).max(1000).default(100);

/** How many times a proven reading is applied again after losing a race to another writer. */
const MAX_REAPPLY = 4;

/** The approvals' per-player window (`approvals.perPlayerPerDayMsat`). */
const DAY_MS = 86_400_000;

/** What the engine is built from: everything it uses, nothing it does not. */
export interface EngineDeps {
  /** The payments provider, in the game's words: what it is sent was parsed where it entered. */
  port: PaymentsPort;
  ledger: LedgerStore;
  /** The game's outbound rate, when `rateLimit` is set: creates take their token first. */
  outbound?: CreateTokens | null;
  events: SafeEmitter;
  /** The rules of every kind (kinds/index.ts). */
  kinds: KindTable;
  settings: Pick<
    Settings,
    | 'publicUrl'
    | 'prefix'
    | 'reconciler'
    | 'audit'
    | 'breaker'
    | 'limits'
    | 'budgets'
    | 'approvals'
    | 'rateLimit'
    | 'payoutQueue'
    | 'clock'
    | 'logger'
    | 'webhookSecret'
    | 'callbackSources'
    | 'clientAddress'
  >;
}

export class Engine implements KindHost {
  readonly port: PaymentsPort;
  readonly ledger: LedgerStore;
  readonly outbound: CreateTokens | null;
  readonly clock: Clock;
  readonly logger: LightningLogger;
  readonly settings: EngineDeps['settings'];
  /** Pauses payouts when the service answers badly or the wallet runs low. */
  readonly breaker: PayoutBreaker;
  /** Answers the service gave that the ledger could not record yet (operations/kept-answers.ts). */
  readonly kept: KeptAnswers;
  /** Who may send callbacks, when `callbackSources` is set. */
  readonly sources: CallbackSources | null;
  readonly #events: SafeEmitter;
  readonly #kinds: KindTable;
  #presence: PresenceLike | undefined;
  /** The rooms of this process, by id: each move of theirs is handed to them, not published. */
  readonly #rooms = new Map<string, (intent: Intent) => void>();
  #strays = { count: 0, reportedAt: Number.NEGATIVE_INFINITY };
  /** Told of every move after it is applied, and of late payments (server/match/). */
  readonly #observers: ((intent: Intent, what: 'moved' | 'latePayment') => Promise<void>)[] = [];
  /** Kinds that are our own records, not the service's resources (a match), and their checks. */
  readonly #checkers = new Map<IntentKind, (intent: Intent) => Promise<Intent>>();
  /** What sends a queued payout in its turn (server/queue.ts); none: it waits. */
  #drain: ((intent: Intent) => Promise<Intent>) | null = null;
  #warnedNoSecret = false;
  /** Told when a callback moved its intent, and how long after it arrived (server/metrics.ts). */
  onCallbackMove: ((intent: Intent, ms: number) => void) | undefined;

  constructor(deps: EngineDeps) {
    this.port = deps.port;
    this.ledger = deps.ledger;
    this.outbound = deps.outbound ?? null;
    this.#events = deps.events;
    this.#kinds = deps.kinds;
    this.settings = deps.settings;
    this.clock = deps.settings.clock;
    this.logger = deps.settings.logger;
    this.kept = new KeptAnswers(this.clock, this.logger);
    this.breaker = new PayoutBreaker({
      settings: deps.settings.breaker,
      clock: this.clock,
      logger: this.logger,
      port: this.port,
      onPause: (pause) => this.emit('paused', pause),
    });
    const sources = deps.settings.callbackSources;
    this.sources = sources
      ? new CallbackSources(
          () => this.port.callbackSources(),
          sources,
          new ClientAddresses(deps.settings.clientAddress),
          this.clock,
          this.logger,
        )
      : null;
  }

  now(): number {
    return this.clock.now();
  }

  /** Emits one of the server's events; a listener that throws is logged, never rethrown. */
  emit<E extends LightningEventName>(event: E, ...args: LightningEvents[E]): void {
    this.#events.emit(event, ...args);
  }

  /**
   * Lets a layer above follow every applied move and late payment (matches refund and count
   * fees this way). Runs after the move is in the ledger; a failure is logged, never thrown.
   */
  follow(observer: (intent: Intent, what: 'moved' | 'latePayment') => Promise<void>): void {
    this.#observers.push(observer);
  }

  #tell(intent: Intent, what: 'moved' | 'latePayment'): void {
    for (const observer of this.#observers) {
      observer(intent, what).catch((err: unknown) =>
        this.logger.error(`following ${intent.kind} ${intent.id}: ${(err as Error).message}`),
      );
    }
  }

  /** Tells the intent's room about it now (a change that was not a status move). */
  announce(intent: Intent): void {
    this.#publish(intent);
  }

  /**
   * Lets the payout queue (server/queue.ts) take a queued payout when its check comes (the
   * reconciler's leased claim of a due intent): the check of a `queued` intent is its drain.
   */
  drainWith(drain: (intent: Intent) => Promise<Intent>): void {
    this.#drain = drain;
  }

  /** Lets a layer above check the intents of a kind it owns (the reconciler's due checks). */
  checkWith(kind: IntentKind, check: (intent: Intent) => Promise<Intent>): void {
    this.#checkers.set(kind, check);
  }

  /**
   * The checks the ledger makes with the record of a new intent of `kind`: the per-player and
   * game-wide limits on open intents for every kind, and the budgets for payouts (rewards and
   * payments to Lightning addresses).
   */
  guards(kind: IntentKind): CreateGuards {
    const { maxOpenPerPlayer, maxOpenPerGame } = this.settings.limits;
    if (!isPayout(kind)) return { maxOpenPerPlayer, maxOpenPerGame };
    const { perPlayer, perRoom, game } = this.settings.budgets;
    const budgets: BudgetWindow[] = [];
    if (perPlayer)
      budgets.push({ scope: 'player', limitMsat: perPlayer.msat, windowMs: perPlayer.windowMs });
    if (perRoom)
      budgets.push({ scope: 'room', limitMsat: perRoom.msat, windowMs: perRoom.windowMs });
    if (game) budgets.push({ scope: 'game', limitMsat: game.msat, windowMs: game.windowMs });
    return { maxOpenPerPlayer, maxOpenPerGame, budgets, ...this.payoutHold() };
  }

  /**
   * The approvals' hold (`approvals`), for the ledger to decide in a payout's create whether it
   * is recorded `held`; nothing when approvals are off. A match's payouts take it alone: paid
   * from the pot, they count against no budget or limit.
   */
  payoutHold(): Pick<CreateGuards, 'hold'> {
    const approvals = this.settings.approvals;
    if (approvals === undefined) return {};
    return {
      hold: {
        aboveMsat: approvals.aboveMsat,
        ...(approvals.perPlayerPerDayMsat === undefined
          ? {}
          : { perPlayer: { limitMsat: approvals.perPlayerPerDayMsat, windowMs: DAY_MS } }),
      },
    };
  }

  /**
   * A payout the approvals held as it was recorded: its room shows it (`held`), the game hears
   * of it (the `held` event), and nothing is sent until an operator decides.
   */
  noticeHeld(intent: Intent): void {
    this.#publish(intent);
    this.logger.warn(
      `${intent.kind} ${intent.id} of ${intent.amount} msats to player ${intent.playerId} is held for an operator's approval`,
    );
    this.emit('held', intent);
  }

  /**
   * The single-payout cap (`budgets.maxRewardMsat`), for a reward or a payment to an address
   * the game pays out of its own money; a payout of a match's pot (`ownMoney` false) was paid in
   * by its players and is not capped. Refuses with BudgetExceededError (scope `payout`) before
   * anything is recorded or sent.
   */
  capPayout(amountMsat: string, ownMoney: boolean): void {
    const max = this.settings.budgets.maxRewardMsat;
    if (ownMoney && max !== undefined && BigInt(amountMsat) > BigInt(max)) {
      throw new BudgetExceededError('payout', String(max), '0', null);
    }
  }

  /** The URL the service POSTs an intent's status updates to. */
  callbackUrl(token: string): string {
    return `${this.settings.publicUrl}${this.settings.prefix}/callbacks/${token}`;
  }

  /** The URL of the ramp or widget webhook route (given to the service with each session). */
  webhookUrl(source: 'ramp' | 'widget'): string {
    if (this.settings.webhookSecret === undefined && !this.#warnedNoSecret) {
      this.#warnedNoSecret = true;
      this.logger.warn(
        'widget or ramp sessions are opened without webhookSecret: their webhooks are refused (503) and nothing of them is recorded; set webhookSecret to the one of your project',
      );
    }
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
   * A room of this process: every move of its intents applied here is given to `deliver` as
   * the ledger returned it, and nothing is published for it (a room lives in one process, so
   * no other process hears its channel). Moves applied by other processes come as messages.
   * Returns the function that forgets the room (on dispose).
   */
  hostRoom(roomId: string, deliver: (intent: Intent) => void): () => void {
    this.#rooms.set(roomId, deliver);
    return () => {
      if (this.#rooms.get(roomId) === deliver) this.#rooms.delete(roomId);
    };
  }

  /**
   * A status callback arrived for `token`, with its raw `body`. Returns the HTTP status to
   * answer: 404 for a token that is not ours, 200 otherwise. The body is only a hint: it may name
   * the resource of an intent whose create was ambiguous (and is parsed only then), but the
   * status comes from the API. `arrivedAt` (`performance.now()` as the request came in) times
   * the move it proves, for the metrics.
   */
  async handleCallback(
    token: string,
    body: Buffer,
    arrivedAt = performance.now(),
  ): Promise<number> {
    if (!looksLikeToken(token)) return 404;
    const intent = await this.ledger.byCallbackToken(token);
    if (!intent || intent.callbackToken === null || !sameToken(intent.callbackToken, token)) {
      this.#reportStrayCallback();
      return 404;
    }
    // Nothing was sent for a queued payout yet: no callback can be about it, and its turn is
    // the reconciler's to give, never a caller's.
    if (intent.status === 'queued') return 200;
    // The player whose money moved waits on this re-read: it is served as their action.
    const after = await this.asPlayer(intent.playerId, () =>
      this.check(intent, intent.remoteId === null ? hintedId(body) : undefined),
    );
    if (after.status !== intent.status) this.onCallbackMove?.(after, performance.now() - arrivedAt);
    return 200;
  }

  /**
   * Runs `work` on behalf of the player who waits on it: with the game's rate, its calls wait in
   * that player's turn among players, re-reads included (server/outbound.ts).
   */
  asPlayer<T>(playerId: string, work: () => Promise<T>): Promise<T> {
    return this.outbound ? this.outbound.asPlayer(playerId, work) : work();
  }

  /** Re-checks an intent by id now; null when the ledger has no such intent. */
  async refresh(id: unknown): Promise<Intent | null> {
    const intent = await this.ledger.get(parseInput(intentId, id, 'id'));
    return intent ? this.check(intent) : null;
  }

  /** The unknown intents, oldest first, at most `limit` (1 to 1,000; default 100). */
  async unknowns(limit?: unknown): Promise<Intent[]> {
    return this.ledger.unknowns(parseInput(unknownsLimit, limit, 'limit'));
  }

  /**
   * Re-reads the resource behind `intent` and applies what the API says. Safe to call from
   * any process at any time: transitions are compare-and-set, so a change applies once.
   * `hintedRemoteId` is the id a callback's body named; it is used only for an intent that
   * does not know its resource yet, and only once the service's record of that resource
   * points back at this intent's callback URL.
   *
   * Only a check that was due counts as one: it backs off the next. Any other re-read (a
   * callback, a refresh) never moves the next check later than it was, so that repeated or
   * forged callbacks cannot delay the recovery of a real one that was dropped.
   */
  async check(intent: Intent, hintedRemoteId?: string): Promise<Intent> {
    const rules = this.rulesOf(intent.kind);
    if (rules.reads === 'own') {
      const own = this.#checkers.get(intent.kind);
      return own ? own(intent) : intent;
    }
    if (isTerminal(intent.status)) {
      // A callback may name the resource of an intent that ended without knowing it.
      await rules.afterEnd?.(this, intent, intent.remoteId === null ? hintedRemoteId : undefined);
      return intent;
    }
    // A payout in the queue: its turn has come (a payout to send, not a re-read).
    if (intent.status === 'queued') return this.#drain ? this.#drain(intent) : intent;
    const now = this.now();
    const byKey = rules.reads === 'key';
    const hint = intent.remoteId === null && !byKey ? hintedRemoteId : undefined;
    if (intent.status === 'creating' && hint === undefined) {
      // Its create call is still in flight in some process, or that process died mid-call.
      const graceEnds = intent.createdAt + this.settings.reconciler.creatingGraceMs;
      if (now < graceEnds) return this.#reschedule(intent, graceEnds);
      const stale = await this.apply(
        intent,
        'unknown',
        { nextCheckAt: this.unknownCheckAt(intent, 0) },
        'create never answered (its process stopped, or the answer is very late)',
      );
      if (!stale) return (await this.ledger.get(intent.id)) ?? intent;
      this.emit('unknown', stale, new Error('the create call never answered (process stopped?)'));
      return rules.lostAnswer === 'resend' ? this.check(stale) : stale;
    }
    if (intent.status === 'unknown' && intent.remoteId === null && !byKey && hint === undefined) {
      return this.#lostAnswer(intent, rules, now);
    }
    const remoteId = intent.remoteId ?? (byKey ? '' : hint);
    if (remoteId === undefined || rules.observe === undefined) {
      // Nothing to read until a callback names the resource; polling would find nothing.
      return (await this.ledger.update(intent.id, intent.status, { nextCheckAt: null })) ?? intent;
    }
    const due = intent.nextCheckAt !== null && intent.nextCheckAt <= now;
    const checks = due ? intent.checks + 1 : intent.checks;
    let observation: Observation | null;
    try {
      // A hinted resource must prove that it is this intent's before anything is written.
      const proof =
        hint !== undefined && intent.callbackToken !== null
          ? this.callbackUrl(intent.callbackToken)
          : hint !== undefined
            ? ''
            : undefined;
      observation = await rules.observe(this.port, intent, remoteId, now, proof);
    } catch (err) {
      this.logger.warn(`check of ${intent.kind} ${intent.id} failed: ${(err as Error).message}`);
      // A keyed kind's "read" is its write sent again (a spend, money coming in): not a read.
      if (!byKey) this.breaker.readFailed(err, intent.id);
      const retryAt = now + retryAfterErrorMs(intent, this.settings.reconciler);
      await this.ledger.update(intent.id, intent.status, {
        nextCheckAt: due ? retryAt : this.#noLater(intent, retryAt),
        checks,
        error: (err as Error).message,
      });
      return intent;
    }
    if (observation === null) {
      this.logger.warn(`callback for ${intent.id} named ${remoteId}, which is not this intent's`);
      return intent;
    }
    // A reading proves what the service holds, whatever route brought it: when another writer
    // moved the intent meanwhile (the create's own answer, a process that gave up waiting), it
    // is read again and the reading applied to what is there now, never dropped.
    let current = intent;
    for (let round = 0; ; round++) {
      const applied = await this.#applyReading(current, observation, { due, checks, now });
      if (applied !== null) return applied;
      const fresh = await this.ledger.get(current.id);
      if (fresh === null || isTerminal(fresh.status) || round >= MAX_REAPPLY) {
        return fresh ?? current;
      }
      current = fresh;
    }
  }

  /**
   * Applies one reading to `intent` as it is; null when another writer moved it first (the
   * caller reads it again and retries).
   */
  async #applyReading(
    intent: Intent,
    observation: Observation,
    look: { due: boolean; checks: number; now: number },
  ): Promise<Intent | null> {
    const { due, checks, now } = look;
    // Only an intent that stays open needs its next check (a settlement does not).
    const nextCheck = (): number => {
      const scheduled = nextCheckAt(
        { checks, expiresAt: intent.expiresAt },
        now,
        this.settings.reconciler,
      );
      return due ? scheduled : this.#noLater(intent, scheduled);
    };
    const patchFor = (of: Intent): IntentPatch => {
      const patch: IntentPatch = { ...unchangedLeftOut(of, observation.patch), checks };
      if (of.error !== null) patch.error = null;
      return patch;
    };
    let to: IntentStatus | null = observation.to;
    if (intent.status === 'creating' && to !== null && to !== 'pending' && to !== 'failed') {
      // A callback outran the create answer and the player already paid or claimed: the
      // resource is proven ours, so record it first (creating -> pending), then the outcome.
      const pending = await this.apply(
        intent,
        'pending',
        { ...patchFor(intent), nextCheckAt: nextCheck() },
        'created (seen by callback)',
      );
      if (!pending) return null;
      intent = pending;
    }
    const patch = patchFor(intent);
    if (to === null && (intent.status === 'unknown' || intent.status === 'creating')) {
      to = 'pending';
    }
    if (to === null || to === intent.status) {
      patch.nextCheckAt = nextCheck();
      return this.ledger.update(intent.id, intent.status, patch, now);
    }
    if (!isTerminal(to)) patch.nextCheckAt = nextCheck();
    return this.apply(intent, to, patch, observation.note);
  }

  /** The rules of a kind (kinds/). */
  rulesOf(kind: IntentKind): KindRules {
    return this.#kinds[kind];
  }

  /** Where an intent's money sits: its kind's rule, for the journal's postings. */
  readonly #position = (intent: Intent) => this.rulesOf(intent.kind).position(intent);

  /**
   * When an `unknown` intent should be looked at next. A keyed one is sent again after
   * `resendMs`; one whose code was only in the lost answer is due when it can be called expired.
   */
  unknownCheckAt(intent: Intent, resendMs: number | null): number | null {
    const { lostAnswer } = this.rulesOf(intent.kind);
    if (lostAnswer === 'resend') return this.now() + (resendMs ?? 0);
    if (
      lostAnswer === 'deadline' &&
      intent.remoteId === null &&
      intent.code === null &&
      intent.expiresAt !== null
    ) {
      return intent.expiresAt + this.settings.reconciler.expiryMarginMs;
    }
    return resendMs === null ? null : this.now() + resendMs;
  }

  /**
   * An `unknown` whose create answer was lost and that no callback has named yet. When its code
   * was only in that answer (a reward, a fee), no player has it: once the deadline has passed
   * (plus a margin for clock skew), the service's own expiry (a withdrawal request) or ours (a
   * fee) means that it can never be claimed or paid: expired. Until then, a callback naming the
   * resource can still prove it and move it. Otherwise (money that may have left with no code,
   * a payment to an address) only a proven callback or an operator ends it.
   */
  async #lostAnswer(intent: Intent, rules: KindRules, now: number): Promise<Intent> {
    if (rules.lostAnswer !== 'deadline' || intent.code !== null || intent.expiresAt === null) {
      return (await this.ledger.update(intent.id, 'unknown', { nextCheckAt: null })) ?? intent;
    }
    const at = intent.expiresAt + this.settings.reconciler.expiryMarginMs;
    if (now < at) return this.#reschedule(intent, at);
    const moved = await this.apply(
      intent,
      'expired',
      { error: null },
      'create answer lost: its code was never given to anyone, and its deadline has passed',
    );
    return moved ?? (await this.ledger.get(intent.id)) ?? intent;
  }

  /** Sets the next check to `at` unless it already is. */
  async #reschedule(intent: Intent, at: number): Promise<Intent> {
    if (intent.nextCheckAt === at) return intent;
    return (await this.ledger.update(intent.id, intent.status, { nextCheckAt: at })) ?? intent;
  }

  /** A next check computed by a re-read that was not due: never later than the one it had. */
  #noLater(intent: Intent, at: number): number {
    return intent.nextCheckAt === null ? at : Math.min(intent.nextCheckAt, at);
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
    const now = this.now();
    let written = patch;
    if (to === 'pending' && this.rulesOf(intent.kind).showsCode && (patch.code ?? intent.code)) {
      // The code is given out from here on (to its room, to the caller): the fact that decides
      // whether it may ever be issued again.
      written = { ...patch, meta: { ...(patch.meta ?? intent.meta), shownAt: now } };
    }
    const postings = postingsFor(intent, afterWrite(intent, to, written, now), this.#position);
    const groupDue = this.rulesOf(intent.kind).groupDue;
    const dueAlso =
      groupDue?.on.includes(to) && intent.groupId !== null && intent.groupId !== intent.id
        ? { id: intent.groupId, status: groupDue.while, at: now }
        : undefined;
    const moved = await this.ledger.transition(intent.id, intent.status, to, {
      patch: written,
      note,
      now,
      postings,
      // What the store needs of the intent as it was is in hand: no read of its history back.
      read: intent,
      ...(dueAlso ? { dueAlso } : {}),
    });
    if (!moved) return null;
    this.#publish(moved);
    // A group's record (a match) moves no money: its own events say what it did.
    const rules = this.rulesOf(moved.kind);
    if (isTerminal(moved.status) && rules.movesMoney) {
      this.emit('settled', moved);
      this.emit(`${rules.kind}.${moved.status}`, moved);
    }
    this.#tell(moved, 'moved');
    return moved;
  }

  /**
   * Records a new intent (status `creating`, or `held` when the guards' hold takes a payout)
   * with its journal postings, in the ledger's one atomic step with the guards.
   */
  async record(fields: NewIntent, now: number, guards: CreateGuards): Promise<Intent> {
    const postings = postingsFor(null, draftOf(fields, now), this.#position);
    return this.ledger.create(fields, now, guards, postings);
  }

  /**
   * Writes non-status fields of `intent` with the postings the change makes (a fee found paid
   * after its deadline holds money again); null when its status changed meanwhile or the
   * journal already holds that step.
   */
  async update(intent: Intent, patch: IntentPatch): Promise<Intent | null> {
    const now = this.now();
    const postings = postingsFor(
      intent,
      afterWrite(intent, intent.status, patch, now),
      this.#position,
    );
    return this.ledger.update(intent.id, intent.status, patch, now, postings);
  }

  /** A fact about an ended intent that the game must hear (a late payment): emitted, followed. */
  tell(intent: Intent, what: 'latePayment'): void {
    this.emit(what, intent);
    this.#tell(intent, what);
  }

  /**
   * Hands a reading of an intent to its room when this process hosts it; true if it did. Every
   * move this process applies goes through here first (#publish), and so does a reading a
   * create returns without having made it (operations/create.ts: a lost race, whose winner's
   * message may never come, or the open intent that holds the create's key), so that the room
   * holds every intent a helper's call returns.
   */
  handToRoom(intent: Intent): boolean {
    const local = intent.roomId === null ? undefined : this.#rooms.get(intent.roomId);
    if (!local) return false;
    try {
      local(intent);
    } catch (err) {
      this.logger.warn(`delivering ${intent.id} to its room: ${(err as Error).message}`);
    }
    return true;
  }

  /** Tells the intent's room of a move: in hand when it is a room of this process, else by presence. */
  #publish(intent: Intent): void {
    if (intent.roomId === null || this.handToRoom(intent)) return;
    const presence = this.presence();
    if (!presence) return;
    const warn = (err: unknown) =>
      this.logger.warn(`could not publish settlement ${intent.id}: ${(err as Error).message}`);
    try {
      // RedisPresence publishes asynchronously: a rejection must not become an unhandled one.
      const published = presence.publish(roomChannel(intent.roomId), settlementMessage(intent));
      if (typeof (published as PromiseLike<unknown> | null)?.then === 'function') {
        Promise.resolve(published).catch(warn);
      }
    } catch (err) {
      warn(err);
    }
  }

  /**
   * A well-formed token the ledger does not hold: a ledger that lost intents (the service then
   * holds money the game forgot), another server's callbacks, or a probe. Said at most once a
   * minute, with how many there were, so that a flood cannot flood the log.
   */
  #reportStrayCallback(): void {
    this.#strays.count++;
    const now = this.now();
    if (now - this.#strays.reportedAt < 60_000) return;
    this.logger.warn(
      `${this.#strays.count} callback(s) named a token this ledger does not hold: a ledger that lost intents, another server's callbacks, or a probe`,
    );
    this.#strays = { count: 0, reportedAt: now };
  }
}

/** The resource id a callback's body names, if it is JSON with a string `id`. */
function hintedId(body: Buffer): string | undefined {
  const hint = parseJson(body);
  return typeof hint === 'object' &&
    hint !== null &&
    typeof (hint as { id?: unknown }).id === 'string'
    ? (hint as { id: string }).id
    : undefined;
}

/**
 * The fields of a re-read's patch that differ from the intent: a re-read of a known resource
 * learns nothing new (its id and code are already recorded), so the move writes, and a store
 * with a worker or a server carries, only what changed.
 */
function unchangedLeftOut(intent: Intent, patch: IntentPatch): IntentPatch {
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(patch) as (keyof IntentPatch)[]) {
    if (patch[key] !== intent[key]) changed[key] = patch[key];
  }
  return changed as IntentPatch;
}
