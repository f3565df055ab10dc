/**
 * The match kind: a record of ours holding its pot in escrow (`escrow:<match>`); its fees,
 * payouts and refunds are intents of the other kinds grouped under it (server/match/).
 */
import { InvalidIntentError } from '../../ledger/errors.js';
import type { Intent, IntentOf, NewIntentOf } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { KindRules } from './kind.js';
import type { MatchDecision, MatchTerms } from './meta.js';

export type MatchIntent = IntentOf<'match'>;

/** Whether `intent` is a match's record: its group's own intent, which moves no money. */
export function isMatch(intent: Intent | null | undefined): intent is MatchIntent {
  return intent?.kind === 'match';
}

/** The record a match is opened as. */
export function newMatch(fields: Omit<NewIntentOf<'match'>, 'kind'>): NewIntentOf<'match'> {
  return { ...fields, kind: 'match' };
}

/** The decision of a match that took one (settling, aborting, or ended): refused without one. */
export function decisionOf(match: MatchIntent): MatchDecision {
  const { decision } = match.meta;
  if (decision === undefined) throw new InvalidIntentError(`match ${match.id} has no decision`);
  return decision;
}

/** A match's terms: written when it was opened, so a record without them is refused. */
export function termsOf(match: MatchIntent): MatchTerms {
  const { terms } = match.meta;
  if (terms === undefined) throw new InvalidIntentError(`match ${match.id} has no terms`);
  return terms;
}

export const match: KindRules = {
  kind: 'match',
  reads: 'own',
  lostAnswer: 'proof',
  showsCode: false,
  room: null,
  movesMoney: false,
  counts: null,
  mayReissue: () => false,
  // A match's own money is its rake: taken from the pot when it is settled.
  position(intent) {
    const escrow = accounts.escrow(intent.id);
    const decision = isMatch(intent) ? intent.meta.decision : undefined;
    const rake = decision?.kind === 'settle' ? decision.rakeMsat : '0';
    return rake === '0'
      ? { account: escrow, source: escrow, amount: '0', unit: 'msats', why: 'pot' }
      : { account: accounts.rake, source: escrow, amount: rake, unit: 'msats', why: 'rake' };
  },
};
