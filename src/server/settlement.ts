/**
 * What a room hears about one of its intents: published on the room's presence channel
 * `lightning:room:<roomId>` by whichever process applied the change, so the process that
 * hosts the room gets it with LocalPresence and RedisPresence alike. When that process is the
 * room's own, the engine has already handed the room the intent itself (`delivered`), and the
 * room skips the message instead of reading the intent back from the ledger.
 */
import type { Intent, IntentKind, IntentStatus } from '../ledger/intent.js';

export interface SettlementMessage {
  id: string;
  kind: IntentKind;
  status: IntentStatus;
  playerId: string;
  updatedAt: number;
  /**
   * The process that applied the move hosts the room and gave it the moved intent in hand
   * (Engine.hostRoom): the room has it already. Other subscribers may read the message as usual.
   */
  delivered: boolean;
}

export function roomChannel(roomId: string): string {
  return `lightning:room:${roomId}`;
}

export function settlementMessage(intent: Intent, delivered = false): SettlementMessage {
  return {
    id: intent.id,
    kind: intent.kind,
    status: intent.status,
    playerId: intent.playerId,
    updatedAt: intent.updatedAt,
    delivered,
  };
}

/** The minimal part of Colyseus's Presence that delivery needs. */
export interface PresenceLike {
  publish(topic: string, data: unknown): unknown;
  subscribe(topic: string, callback: (...args: unknown[]) => void): Promise<unknown>;
  unsubscribe(topic: string, callback?: (...args: unknown[]) => void): unknown;
}
