/**
 * The one stream of what happens to intents in this process: the engine publishes each thing
 * once; subscribers are called in order, synchronously (a room has a move before the `apply`
 * that made it returns), and one that throws is logged.
 *
 * Cost: per move one call per subscriber.
 */
import type { Intent } from '../ledger/intent.js';
import type { LightningLogger } from './logger.js';

/**
 * `moved` by this process; `recorded` unsent (queued, held); `found` after losing a race (the
 * winner's message may be lost); `changed` without a move; `latePayment` after its end.
 */
type MoveKind = 'moved' | 'recorded' | 'found' | 'changed' | 'latePayment';

export interface Move {
  readonly what: MoveKind;
  readonly intent: Intent;
}

export type MoveListener = (move: Move) => void;

export class Moves {
  readonly #listeners: MoveListener[] = [];
  readonly #logger: LightningLogger;

  constructor(logger: LightningLogger, listeners: readonly MoveListener[] = []) {
    this.#logger = logger;
    this.#listeners.push(...listeners);
  }

  /** For a subscriber built over the engine (the matches); returns how to unsubscribe. */
  subscribe(listener: MoveListener): () => void {
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  publish(move: Move): void {
    for (const listener of this.#listeners) {
      try {
        listener(move);
      } catch (err) {
        this.#logger.warn(
          `telling of ${move.intent.kind} ${move.intent.id} (${move.what}): ${(err as Error).message}`,
        );
      }
    }
  }
}
