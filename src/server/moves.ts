/**
 * The one stream of what happens to intents in this process: the engine publishes each thing
 * once, and whoever needs to know subscribes (the rooms, the game's events, the metrics, the
 * matches). A subscriber is called in the order it subscribed, synchronously: a room is handed
 * a move before the `apply` that made it returns. One that throws is logged and the others are
 * still told.
 *
 * Cost: per move one call per subscriber.
 */
import type { Intent } from '../ledger/intent.js';
import type { LightningLogger } from './logger.js';

/**
 * What the stream carries:
 * - `moved`: this process moved the intent (a compare-and-set it won);
 * - `recorded`: a new intent that is shown before anything is sent (queued, or held);
 * - `found`: a reading this process met but did not make (it lost a move to another process,
 *   whose own message to a room may be lost);
 * - `changed`: a field changed that a room shows, with no move (a match's roster funded);
 * - `latePayment`: money came in for an intent that had ended (a fee paid after its deadline).
 */
export type MoveKind = 'moved' | 'recorded' | 'found' | 'changed' | 'latePayment';

export interface Move {
  readonly what: MoveKind;
  readonly intent: Intent;
}

export type MoveListener = (move: Move) => void;

export class Moves {
  readonly #listeners: MoveListener[] = [];
  readonly #logger: LightningLogger;

  /** `listeners`: the subscribers known when the stream is built, told first, in order. */
  constructor(logger: LightningLogger, listeners: readonly MoveListener[] = []) {
    this.#logger = logger;
    this.#listeners.push(...listeners);
  }

  /**
   * For a subscriber built over the engine that publishes here (the matches): it subscribes as
   * it is constructed. Returns the function that unsubscribes.
   */
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
