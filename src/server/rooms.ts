/**
 * Where a move goes to reach its room, a subscriber of the one stream (moves.ts). A room lives
 * in one process: a room of this process (`host`) is handed the intent as the ledger returned
 * it, nothing read, nothing published; a room elsewhere gets a pointer on its presence channel
 * (settlement.ts) and reads the intent back. A reading this process met without making it
 * (`found`: a lost race) goes to a room of this process only: the winner published its move.
 *
 * Cost: per move one map lookup, then a call in hand or one presence publish.
 */
import { matchMaker } from '@colyseus/core';
import type { Intent } from '../ledger/intent.js';
import type { LightningLogger } from './logger.js';
import type { Move } from './moves.js';
import { type PresenceLike, roomChannel, settlementMessage } from './settlement.js';

export class Rooms {
  readonly #logger: LightningLogger;
  /** The rooms of this process, by id. */
  readonly #local = new Map<string, (intent: Intent) => void>();
  #presence: PresenceLike | undefined;

  constructor(logger: LightningLogger) {
    this.#logger = logger;
  }

  /** The stream's subscriber. */
  readonly tell = (move: Move): void => {
    const { intent, what } = move;
    if (intent.roomId === null || what === 'latePayment') return;
    if (this.#handOver(intent.roomId, intent) || what === 'found') return;
    this.#publish(intent.roomId, intent);
  };

  /**
   * A room of this process: each move of its intents is given to `deliver` in hand (moves
   * applied by other processes come as messages). Returns the function that forgets the room.
   */
  host(roomId: string, deliver: (intent: Intent) => void): () => void {
    this.#local.set(roomId, deliver);
    return () => {
      if (this.#local.get(roomId) === deliver) this.#local.delete(roomId);
    };
  }

  /** Publish for rooms elsewhere on this presence instead of the matchmaker's (the room's own). */
  usePresence(presence: PresenceLike): void {
    this.#presence = presence;
  }

  presence(): PresenceLike | undefined {
    return this.#presence ?? (matchMaker.presence as PresenceLike | undefined);
  }

  #handOver(roomId: string, intent: Intent): boolean {
    const local = this.#local.get(roomId);
    if (!local) return false;
    try {
      local(intent);
    } catch (err) {
      this.#logger.warn(`delivering ${intent.id} to its room: ${(err as Error).message}`);
    }
    return true;
  }

  #publish(roomId: string, intent: Intent): void {
    const presence = this.presence();
    if (!presence) return;
    const warn = (err: unknown) =>
      this.#logger.warn(`could not publish settlement ${intent.id}: ${(err as Error).message}`);
    try {
      // RedisPresence publishes asynchronously: a rejection must not become an unhandled one.
      const published = presence.publish(roomChannel(roomId), settlementMessage(intent));
      if (typeof (published as PromiseLike<unknown> | null)?.then === 'function') {
        Promise.resolve(published).catch(warn);
      }
    } catch (err) {
      warn(err);
    }
  }
}
