/**
 * The engine: the one place where intents move. Callbacks are hints, verified by re-reading the
 * resource; every move is a compare-and-set with its journal postings, published once on the
 * stream of moves (moves.ts). It knows none of its callers; runtime.ts builds it.
 *
 * Footprint: per settlement one ledger write, one API read, and one publish on the stream.
 */

import { DAY_MS } from '../clock.js';
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
import { afterWrite, draftOf, type Posting, postingsBetween } from '../ledger/journal.js';
import type { BudgetWindow, CreateGuards, LedgerStore } from '../ledger/store.js';
import type { PaymentsPort } from '../port/port.js';
import { parseJson } from './body.js';
import type { PayoutBreaker } from './breaker.js';
import type { LightningEventName, LightningEvents, SafeEmitter } from './events.js';
import type { KindHost, KindRules, KindTable, Observation } from './kinds/kind.js';
import type { LightningLogger } from './logger.js';
import type { Moves } from './moves.js';
import type { KeptAnswers } from './operations/kept-answers.js';
import type { Settings } from './options.js';
import { asPlayer, type CreateTokens } from './outbound.js';
import { nextCheckAt, retryAfterErrorMs, unknownCheckAt } from './schedule.js';
import { looksLikeToken, sameToken } from './tokens.js';

/** How many times a proven reading is applied again after losing a race to another writer. */
const MAX_REAPPLY = 4;

/** What the engine is built from: everything it uses, nothing it does not. */
export interface EngineDeps {
  port: PaymentsPort;
  ledger: LedgerStore;
  /** The game's outbound rate (`rateLimit`): creates take their token first. */
  outbound: CreateTokens | null;
  events: SafeEmitter;
  moves: Moves;
  breaker: PayoutBreaker;
  /** Answers the ledger could not record yet (operations/kept-answers.ts). */
  kept: KeptAnswers;
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
    | 'tabs'
    | 'approvals'
    | 'rateLimit'
    | 'payoutQueue'
    | 'clock'
    | 'logger'
    | 'webhookSecret'
  >;
}

/** What a callback's route answers, and the move the callback proved. */
export interface CallbackAnswer {
  status: number;
  moved: Intent | null;
}

export class Engine implements KindHost {
  readonly port: PaymentsPort;
  readonly ledger: LedgerStore;
  readonly outbound: CreateTokens | null;
  readonly logger: LightningLogger;
  readonly settings: EngineDeps['settings'];
  readonly breaker: PayoutBreaker;
  readonly kept: KeptAnswers;
  readonly #events: SafeEmitter;
  readonly #moves: Moves;
  readonly #kinds: KindTable;
  #strays = { count: 0, reportedAt: Number.NEGATIVE_INFINITY };

  constructor(deps: EngineDeps) {
    this.port = deps.port;
    this.ledger = deps.ledger;
    this.outbound = deps.outbound;
    this.#events = deps.events;
    this.#moves = deps.moves;
    this.#kinds = deps.kinds;
    this.settings = deps.settings;
    this.logger = deps.settings.logger;
    this.breaker = deps.breaker;
    this.kept = deps.kept;
  }

  now(): number {
    return this.settings.clock.now();
  }

  /** Emits one of the server's events that is not a move; a listener that throws is logged. */
  emit<E extends LightningEventName>(event: E, ...args: LightningEvents[E]): void {
    this.#events.emit(event, ...args);
  }

  /** What the ledger checks as it records an intent of `kind`: open limits; budgets for payouts. */
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

  /** The approvals' hold, decided in a payout's create; a match's payouts take it alone. */
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

  /** The single-payout cap, on the game's own money only (a match's pot was paid in by players). */
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

  /** When an open intent should be read again, from now. */
  nextCheckAt(intent: Intent): number {
    return nextCheckAt(intent, this.now(), this.settings.reconciler);
  }

  /**
   * A status callback for `token`: 404 when not ours, else 200 and the move it proved. The body
   * is only a hint (the resource of an ambiguous create); the status comes from a re-read.
   */
  async handleCallback(token: string, body: Buffer): Promise<CallbackAnswer> {
    if (!looksLikeToken(token)) return NOT_OURS;
    const intent = await this.ledger.byCallbackToken(token);
    if (!intent || intent.callbackToken === null || !sameToken(intent.callbackToken, token)) {
      this.#reportStrayCallback();
      return NOT_OURS;
    }
    // Nothing was sent for a queued payout: its turn is the reconciler's to give.
    if (intent.status === 'queued') return UNMOVED;
    // The player whose money moved waits on this re-read.
    const after = await asPlayer(this.outbound, intent.playerId, () =>
      this.check(intent, intent.remoteId === null ? hintedId(body) : undefined),
    );
    return after.status === intent.status ? UNMOVED : { status: 200, moved: after };
  }

  /**
   * Re-reads the resource behind `intent` and applies what the API says, by compare-and-set,
   * from any process. `hintedRemoteId` (a callback's) is used only for an intent that does not
   * know its resource, once the resource points back at its callback URL. Only a due check
   * backs off the next: forged callbacks cannot delay the recovery of a dropped one.
   */
  async check(intent: Intent, hintedRemoteId?: string): Promise<Intent> {
    const rules = this.rulesOf(intent.kind);
    if (rules.reads === 'own' || intent.status === 'queued') return intent;
    if (isTerminal(intent.status)) {
      // A callback may name the resource of an intent that ended without knowing it.
      const late = await rules.afterEnd?.(
        this,
        intent,
        intent.remoteId === null ? hintedRemoteId : undefined,
      );
      if (late) this.#moves.publish({ what: 'latePayment', intent: late });
      return intent;
    }
    const now = this.now();
    const byKey = rules.reads === 'key';
    const hint = intent.remoteId === null && !byKey ? hintedRemoteId : undefined;
    if (intent.status === 'creating' && hint === undefined) {
      // Its create is in flight in some process, or that process died mid-call.
      const graceEnds = intent.createdAt + this.settings.reconciler.creatingGraceMs;
      if (now < graceEnds) return this.#reschedule(intent, graceEnds);
      const stale = await this.apply(
        intent,
        'unknown',
        { nextCheckAt: this.#unknownCheckAt(intent, 0) },
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
      // Nothing to read until a callback names the resource.
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
      // A keyed kind's "read" is its write sent again: not a read.
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
    // A reading proves what the service holds: when another writer moved the intent meanwhile,
    // it is applied to what is there now, never dropped.
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

  /** Applies one reading to `intent` as it is; null when another writer moved it first. */
  async #applyReading(
    intent: Intent,
    observation: Observation,
    look: { due: boolean; checks: number; now: number },
  ): Promise<Intent | null> {
    const { due, checks, now } = look;
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
      // A callback outran the create answer: record it created first, then the outcome.
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

  rulesOf(kind: IntentKind): KindRules {
    return this.#kinds[kind];
  }

  /** The postings of a write from `before` (null: a create) to `after`, by its kind's positions. */
  #postings(before: Intent | null, after: Intent): Posting[] {
    const { position } = this.rulesOf(after.kind);
    return postingsBetween(before, after, before && position(before), position(after));
  }

  #unknownCheckAt(intent: Intent, resendMs: number | null): number | null {
    const { lostAnswer } = this.rulesOf(intent.kind);
    return unknownCheckAt(intent, lostAnswer, this.now(), resendMs, this.settings.reconciler);
  }

  /**
   * An `unknown` whose create answer was lost, named by no callback. A code only in that answer
   * was seen by nobody: past its deadline (and a margin) it is expired. Money that may have left
   * with no code ends only by a proven callback or an operator.
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

  async #reschedule(intent: Intent, at: number): Promise<Intent> {
    if (intent.nextCheckAt === at) return intent;
    return (await this.ledger.update(intent.id, intent.status, { nextCheckAt: at })) ?? intent;
  }

  /** A re-read that was not due never moves the next check later. */
  #noLater(intent: Intent, at: number): number {
    return intent.nextCheckAt === null ? at : Math.min(intent.nextCheckAt, at);
  }

  /**
   * Moves an intent and publishes the move; null when another writer got there first (what it
   * left is published as `found`, for a room here the winner's message may never reach).
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
      // The code is given out from here on: what decides whether it may be issued again.
      written = { ...patch, meta: { ...(patch.meta ?? intent.meta), shownAt: now } };
    }
    const postings = this.#postings(intent, afterWrite(intent, to, written, now));
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
      read: intent,
      ...(dueAlso ? { dueAlso } : {}),
    });
    if (!moved) {
      const found = await this.ledger.get(intent.id);
      if (found) this.#moves.publish({ what: 'found', intent: found });
      return null;
    }
    this.#moves.publish({ what: 'moved', intent: moved });
    return moved;
  }

  /**
   * Records a new intent with its postings and guards in one atomic step; one that waits before
   * anything is sent (`queued`, `held`) is published at once.
   */
  async record(fields: NewIntent, now: number, guards: CreateGuards): Promise<Intent> {
    const postings = this.#postings(null, draftOf(fields, now));
    // A record that moves no money (a match) is not counted open: its kind says so.
    const intent = this.rulesOf(fields.kind).movesMoney ? fields : { ...fields, movesMoney: false };
    const recorded = await this.ledger.create(intent, now, guards, postings);
    if (recorded.status !== 'creating') this.#moves.publish({ what: 'recorded', intent: recorded });
    return recorded;
  }

  /** Writes non-status fields with the postings they make; null when the status moved meanwhile. */
  async update(intent: Intent, patch: IntentPatch): Promise<Intent | null> {
    const now = this.now();
    const postings = this.#postings(intent, afterWrite(intent, intent.status, patch, now));
    return this.ledger.update(intent.id, intent.status, patch, now, postings);
  }

  /** A token the ledger does not hold (lost intents, or a probe): logged at most once a minute. */
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

const NOT_OURS: CallbackAnswer = { status: 404, moved: null };
const UNMOVED: CallbackAnswer = { status: 200, moved: null };

/** The resource id a callback's body names, if it is JSON with a string `id`. */
function hintedId(body: Buffer): string | undefined {
  const hint = parseJson(body);
  return typeof hint === 'object' &&
    hint !== null &&
    typeof (hint as { id?: unknown }).id === 'string'
    ? (hint as { id: string }).id
    : undefined;
}

/** The fields of a re-read's patch that differ from the intent: a store carries only those. */
function unchangedLeftOut(intent: Intent, patch: IntentPatch): IntentPatch {
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(patch) as (keyof IntentPatch)[]) {
    if (patch[key] !== intent[key]) changed[key] = patch[key];
  }
  return changed as IntentPatch;
}
