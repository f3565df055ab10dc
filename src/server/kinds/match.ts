/**
 * The match kind: a record of ours, not a resource at the service. A match holds its pot in
 * escrow (the journal's `escrow:<match>`): its fees, payouts and refunds are intents of the other
 * kinds whose group is the match (server/match/ does the moves, and checks a due match through
 * `Engine.checkWith`). It never appears in a room as an entry: its room shows it as a match.
 */
import type { KindRules } from './kind.js';

export const match: KindRules = {
  kind: 'match',
  reads: 'own',
  lostAnswer: 'proof',
  showsCode: false,
  room: null,
  mayReissue: () => false,
};
