/**
 * What a room in another process hears about one of its intents: published on the room's
 * presence channel `lightning:room:<roomId>` by the process that applied the change, so the
 * process that hosts the room gets it with LocalPresence and RedisPresence alike. A room of the
 * applying process is handed the moved intent instead (server/rooms.ts), and nothing is
 * published for it. The message only points: the room reads the intent back from the ledger.
 */
import type { Intent, IntentKind, IntentStatus } from '../ledger/intent.js';

export interface SettlementMessage {
  id: string;
  kind: IntentKind;
  status: IntentStatus;
  playerId: string;
  updatedAt: number;
}

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
