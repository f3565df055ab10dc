/**
 * What a room in another process hears about one of its intents, on its presence channel: a
 * pointer only; the room reads the intent back from the ledger.
 */
import type { Intent } from '../ledger/intent.js';

export type SettlementMessage = Pick<Intent, 'id' | 'kind' | 'status' | 'playerId' | 'updatedAt'>;

export function roomChannel(roomId: string): string {
  return `lightning:room:${roomId}`;
}

export function settlementMessage(intent: Intent): SettlementMessage {
  return {
    id: intent.id,
    kind: intent.kind,
    status: intent.status,
    playerId: intent.playerId,
    updatedAt: intent.updatedAt,
  };
}

/** The minimal part of Colyseus's Presence that delivery needs. */
export interface PresenceLike {
  publish(topic: string, data: unknown): unknown;
  subscribe(topic: string, callback: (...args: unknown[]) => void): Promise<unknown>;
  unsubscribe(topic: string, callback?: (...args: unknown[]) => void): unknown;
}
