/** The check every money helper makes first; its own module so the kinds import no operator. */
import { PlayerBlockedError } from '../errors.js';
import type { Engine } from './engine.js';

/** Rejects with PlayerBlockedError when an operator blocked the player; one ledger read. */
export async function refuseBlocked(engine: Engine, playerId: string): Promise<void> {
  if (await engine.ledger.isBlocked(playerId)) throw new PlayerBlockedError(playerId);
}
