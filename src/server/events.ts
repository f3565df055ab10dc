/**
 * The server's events, and the one emitter that delivers all of them. A game's listener runs
 * after the ledger already holds what it reports, so nothing a listener does (throw, reject)
 * may undo or hide that: each listener is called on its own, and what it throws is logged.
 */
import { EventEmitter } from 'node:events';
import { type Intent, isTerminal } from '../ledger/intent.js';
import type { Alert } from './alert-kinds.js';
import type { AuditFinding } from './findings.js';
import type { KindTable, MoneyKind } from './kinds/kind.js';
import type { LightningLogger } from './logger.js';
import type { MatchView } from './match/view.js';
import type { MoveListener } from './moves.js';

/** The statuses an intent ends in. */
export type SettledStatus = 'completed' | 'expired' | 'failed';

/** A signed ramp or widget webhook, emitted once ever: a repeat is acknowledged, not emitted. */
export interface WebhookEvent {
  source: 'ramp' | 'widget';
  /** A hash of the route and the signed body: the same for every delivery of one event. */
  id: string;
  /** The delivery's `X-ZBD-Event-Id` header, if any (not signed: for logs, not for trust). */
  deliveryId: string | null;
  type: string;
  data: unknown;
}

/** Why payouts stopped (the circuit breaker tripped), and when. */
export interface PayoutPause {
  reason: string;
  /** What tripped it: failing payouts, 5xx reads, the wallet's floor, or an operator (`by`). */
  cause: 'payouts' | 'reads' | 'wallet' | 'operator';
  /** The operator who paused payouts (cause `operator`). */
  by?: string;
  /** The players whose payouts failed in the window (cause `payouts`); otherwise empty. */
  players: string[];
  /** The Lightning addresses those payouts went to (none for claim codes); otherwise empty. */
  recipients: string[];
  /** epoch ms */
  at: number;
}

export type LightningEvents = {
  /** An intent reached a terminal status (completed, expired, failed): exactly once each. */
  settled: [intent: Intent];
  /** A create whose outcome is unknown: never re-sent; an operator may have to decide. */
  unknown: [intent: Intent, error: Error];
  /** A payout was recorded `held` (approvals), nothing sent: for an operator to approve or reject. */
  held: [intent: Intent];
  /** Money arrived for an intent that had already ended (a fee paid after it expired). */
  latePayment: [intent: Intent];
  webhook: [event: WebhookEvent];
  /** Payouts are paused until `lightning.operator.resume()`: once each time the breaker trips. */
  paused: [pause: PayoutPause];
  /** The live audit found rules of the game's money broken: each finding once, in every process. */
  audit: [findings: AuditFinding[]];
  /** An alert was raised or cleared (with `alerts` set), once each. */
  alert: [alert: Alert];
  /** A match's roster paid (its `players`, or `seats` players); never for one without a roster. */
  'match.funded': [match: MatchView];
  /** A deciding match's queued payouts made more of them (`made` of `total`). */
  'match.progress': [match: MatchView];
  /** A match was settled and its payouts created (each exactly once). */
  'match.settled': [match: MatchView];
  /** A match was aborted (by the game, its room or its timeout) and every paid fee refunded. */
  'match.aborted': [match: MatchView];
  /** A fee was refunded (a claim code for its player), with why: aborted, paid late, paid twice. */
  'match.refund': [refund: Intent, why: string];
} & {
  /** Per kind and status: `reward.completed`, `entryFee.expired`, `spend.failed`... */
  [E in `${MoneyKind}.${SettledStatus}`]: [intent: Intent];
};

export type LightningEventName = keyof LightningEvents;

/** An EventEmitter whose `emit` never throws: listeners are isolated from each other and us. */
export class SafeEmitter extends EventEmitter<LightningEvents> {
  readonly #logger: () => LightningLogger;

  constructor(logger: () => LightningLogger) {
    super();
    this.#logger = logger;
  }

  override emit<E extends LightningEventName>(event: E, ...args: LightningEvents[E]): boolean {
    const listeners = this.rawListeners(event as never) as ((...a: unknown[]) => unknown)[];
    for (const listener of listeners) {
      try {
        const result = listener.apply(this, args);
        if (result instanceof Promise) result.catch((err) => this.#report(event, err));
      } catch (err) {
        this.#report(event, err);
      }
    }
    return listeners.length > 0;
  }

  #report(event: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    // A game's listener must not undo a settlement that the ledger already holds.
    this.#logger().error(`a '${event}' listener threw: ${message}`);
  }
}

/** The game's events of the stream of moves: `settled`, `<kind>.<status>`, `held`, `latePayment`. */
export function eventsOfMoves(
  events: SafeEmitter,
  kinds: KindTable,
  logger: LightningLogger,
): MoveListener {
  return ({ what, intent }) => {
    if (what === 'moved') {
      const rules = kinds[intent.kind];
      if (!isTerminal(intent.status) || !rules.movesMoney) return;
      events.emit('settled', intent);
      events.emit(`${rules.kind}.${intent.status as SettledStatus}`, intent);
    } else if (what === 'recorded' && intent.status === 'held') {
      logger.warn(
        `${intent.kind} ${intent.id} of ${intent.amount} msats to player ${intent.playerId} is held for an operator's approval`,
      );
      events.emit('held', intent);
    } else if (what === 'latePayment') {
      events.emit('latePayment', intent);
    }
  };
}
