/**
 * The credit kind: money added to a player's tab (`house:rewards -> tab:<player>`), in the
 * ledger alone. Recorded settled (`completed` at its create, CreateGuards.settled): nothing is
 * sent, nothing stays open, so a crash leaves the whole credit or none. Its id is derived from
 * the game's key, so a credit under a repeated key is the store's duplicate (docs/MATCHES.md).
 */

import { createHash } from 'node:crypto';
import { DAY_MS, HOUR_MS } from '../../clock.js';
import { CreditTooLargeError, EarningCapError } from '../../errors.js';
import { DuplicateIntentError } from '../../ledger/errors.js';
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { BudgetWindow } from '../../ledger/store.js';
import type { Engine } from '../engine.js';
import { refuseBlocked } from '../operations/create.js';
import type { ParsedCredit } from '../operations/inputs.js';
import type { KindRules } from './kind.js';

export const credit: KindRules = {
  kind: 'credit',
  reads: 'own',
  lostAnswer: 'proof',
  showsCode: false,
  room: null,
  movesMoney: true,
  // Money leaves when it is withdrawn: a credit counts nothing out.
  counts: null,
  mayReissue: () => false,
  position: (intent) => ({
    account: accounts.tab(intent.playerId),
    source: accounts.rewards,
    amount: intent.amount,
    unit: intent.unit,
    why: 'credited to the tab',
  }),
};

/** The id a keyed credit is recorded under: one per player and key, the shape of a UUID. */
export function creditId(playerId: string, key: string): string {
  const hex = createHash('sha256').update(`credit\u0000${playerId}\u0000${key}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The player's earning caps (`tabs`), windows over credits checked in the create's step. */
function earningWindows(engine: Engine): BudgetWindow[] {
  const { earnPerHourMsat, earnPerDayMsat } = engine.settings.tabs;
  return [
    { scope: 'player', limitMsat: earnPerHourMsat, windowMs: HOUR_MS, over: 'credits' },
    { scope: 'player', limitMsat: earnPerDayMsat, windowMs: DAY_MS, over: 'credits' },
  ];
}

/**
 * Records a credit in the player's tab at once, within the earning rules (docs/MATCHES.md); a
 * repeated key answers the first credit, whatever the caps say now.
 */
export async function startCredit(engine: Engine, args: ParsedCredit): Promise<Intent> {
  await refuseBlocked(engine, args.playerId);
  const max = engine.settings.tabs.maxCreditMsat;
  if (BigInt(args.amountMsat) > BigInt(max)) {
    throw new CreditTooLargeError(args.playerId, args.amountMsat, String(max));
  }
  const id = args.key === undefined ? undefined : creditId(args.playerId, args.key);
  const fields = {
    ...(id === undefined ? {} : { id }),
    kind: 'credit' as const,
    roomId: args.roomId,
    playerId: args.playerId,
    amount: args.amountMsat,
    unit: 'msats',
    description: args.description,
    ...(args.key === undefined ? {} : { meta: { key: args.key } }),
  };
  try {
    return await engine.record(fields, engine.now(), {
      settled: true,
      budgets: earningWindows(engine),
    });
  } catch (err) {
    // The caps are checked before the id: a repeated key at the cap is still the first credit.
    const repeat = err instanceof DuplicateIntentError || err instanceof EarningCapError;
    if (!repeat || id === undefined) throw err;
    const first = await engine.ledger.get(id);
    if (first === null || first.playerId !== args.playerId) throw err;
    return first;
  }
}
