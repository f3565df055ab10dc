/** Every kind, registered: a new kind is its file, one line here, and its name in ledger/intent.ts. */
import { type Intent, isPayout } from '../../ledger/intent.js';
import { accounts, type Position } from '../../ledger/journal.js';
import { credit } from './credit.js';
import { entryFee } from './entry-fee.js';
import type { KindTable } from './kind.js';
import { match } from './match.js';
import { payment } from './payment.js';
import { reward } from './reward.js';
import { spend } from './spend.js';
import { withdrawal } from './withdrawal.js';

export const KINDS: KindTable = { reward, entryFee, spend, payment, match, credit, withdrawal };

/** Where an intent's money sits in its state, by its kind's rule (the journal's postings). */
export function positionOf(intent: Intent): Position {
  return KINDS[intent.kind].position(intent);
}

/** Whether it is a claim code a player holds: a payout whose pending state shows a code. */
export function isClaimCode(intent: Intent): boolean {
  return isPayout(intent.kind) && KINDS[intent.kind].showsCode;
}

/** Whether the intent's money moves into or out of its player's tab (a room's balance follows). */
export function touchesTab(intent: Intent): boolean {
  const { account, source } = positionOf(intent);
  const tab = accounts.tab(intent.playerId);
  return account === tab || source === tab;
}
