/**
 * The check every money helper makes first: a player an operator blocked (operator.ts,
 * `lightning.operator.block`) gets nothing new from the game. One keyed read of the ledger (each store's
 * header says what that read costs). Its own module, so that the kinds, which the operator's
 * actions use to send an approved payout, import nothing of the operator.
 */
import { PlayerBlockedError } from '../errors.js';
import type { Engine } from './engine.js';

/** Rejects with PlayerBlockedError when an operator blocked the player; one ledger read. */
export async function refuseBlocked(engine: Engine, playerId: string): Promise<void> {
  if (await engine.ledger.isBlocked(playerId)) throw new PlayerBlockedError(playerId);
}
