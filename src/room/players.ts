/**
 * Who a player is. The ledger, the service (`internalId`, `reference_id`) and the StateView all
 * need one stable id per player; a room can pass a client or an id it already knows.
 */
import type { Client } from '@colyseus/core';
import { InvalidArgumentError } from '../errors.js';
import { idProblem } from '../ids.js';

export type PlayerRef = Client | string;

export function defaultPlayerId(client: Client): string {
  const auth = client.auth as { id?: unknown } | undefined;
  if (typeof auth?.id === 'string' && auth.id !== '') return auth.id;
  if (typeof auth?.id === 'number') return String(auth.id);
  const data = client.userData as { playerId?: unknown } | undefined;
  if (typeof data?.playerId === 'string' && data.playerId !== '') return data.playerId;
  return client.sessionId;
}

export function playerOf(
  player: PlayerRef,
  resolve: ((client: Client) => string) | undefined,
): string {
  if (typeof player === 'string') {
    if (player === '') throw new InvalidArgumentError('player', 'must not be empty');
    return player;
  }
  if (typeof player !== 'object' || player === null || typeof player.sessionId !== 'string') {
    throw new InvalidArgumentError('player', 'must be a Client or a player id');
  }
  const id = (resolve ?? defaultPlayerId)(player);
  if (typeof id !== 'string' || id === '') {
    throw new InvalidArgumentError('player', 'options.playerId returned no id for this client');
  }
  return id;
}

/** An id the room fills into a call, checked here since nothing behind the host parses again. */
export function recordableId(id: unknown, field: string): string {
  if (typeof id !== 'string' || id === '') {
    throw new InvalidArgumentError(field, 'must be a non-empty string id');
  }
  const problem = idProblem(id);
  if (problem !== null) throw new InvalidArgumentError(field, problem);
  return id;
}

/**
 * The client a widget helper sends to or acts for: a real Colyseus client, or the session or
 * debit would be made at the service and then reach nobody.
 */
export function clientOf(value: unknown): Client {
  const v = value as { sessionId?: unknown; send?: unknown } | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    typeof v.sessionId !== 'string' ||
    v.sessionId === '' ||
    typeof v.send !== 'function'
  ) {
    throw new InvalidArgumentError('client', 'must be a connected Client of this room');
  }
  return value as Client;
}
