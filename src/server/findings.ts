/**
 * What the live audit (audit.ts) can find wrong with the game's money: one typed finding per
 * broken rule, each with a one-line message for the log. Types only.
 */
import type { IntentKind } from '../ledger/intent.js';

/** A rule the audit found broken. */
export type AuditFinding = { message: string } & (
  | { type: 'journal-unbalanced'; unit: string; sum: string }
  | { type: 'escrow-left'; matchId: string; escrowMsat: string }
  | {
      type: 'winner-unpaid';
      matchId: string;
      playerId: string;
      intentId: string | null;
      status: string | null;
    }
  | { type: 'unknown-overdue'; intentId: string; kind: IntentKind; deadline: number }
  | {
      type: 'wallet-mismatch';
      walletMsat: string;
      expectedMsat: string;
      differenceMsat: string;
      since: number;
    }
  | { type: 'cover-short'; coverMsat: string }
  | { type: 'tab-negative'; playerId: string; balanceMsat: string }
);
