/** What an operator is alerted to, one typed kind per condition. Types only (events.ts names them). */
import type { IntentKind } from '../ledger/intent.js';
import type { AuditFinding } from './findings.js';

/** The conditions an alert can be about. */
export type AlertKind = AlertCondition['kind'];

/** One condition that holds (or held), without its state. */
export type AlertCondition = { message: string } & (
  | {
      /** Cover (wallet - owed - escrow - in flight) fell below `alerts.coverBelowMsat`. */
      kind: 'cover-low';
      coverMsat: string;
      thresholdMsat: string;
    }
  | {
      /** An intent has been `unknown` longer than `alerts.unknownAfterMs`: someone must decide. */
      kind: 'unknown-old';
      /** The one that has been unknown longest. */
      intentId: string;
      intentKind: IntentKind;
      /** epoch ms: when it became unknown. */
      unknownSince: number;
      /** How many unknowns are that old (of the oldest 1,000). */
      count: number;
    }
  | {
      /** The breaker paused payouts (`lightning.operator.paused`) until `lightning.operator.resume()`. */
      kind: 'payouts-paused';
      cause: 'payouts' | 'reads' | 'wallet' | 'operator';
      reason: string;
      /** epoch ms */
      pausedAt: number;
    }
  | {
      /** The live audit found a rule of the game's money broken (docs/OPERATING.md). */
      kind: 'audit-finding';
      finding: AuditFinding;
    }
  | {
      /** The service has answered 5xx, and nothing but, for `alerts.serviceFailingMs`. */
      kind: 'service-failing';
      /** epoch ms: the first 5xx of the run. */
      failingSince: number;
      /** The latest 5xx status. */
      status: number;
    }
);

/** An alert: raised once when its condition starts to hold, cleared once when it stops. */
export type Alert = AlertCondition & {
  state: 'raised' | 'cleared';
  /** What makes it the same alert from one check to the next (its kind and subject). */
  key: string;
  /** epoch ms: when it was raised. */
  raisedAt: number;
  /** epoch ms: when it was raised, or cleared. */
  at: number;
};
