/**
 * Where a move goes to reach its room: a room of this process is handed the intent; a room
 * elsewhere gets a pointer on its presence channel (settlement.ts). A `found` reading goes to a
 * room here only: the winner published its move.
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

  /** A room of this process: its moves go to `deliver` in hand; returns how to forget it. */
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
