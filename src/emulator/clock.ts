/**
 * The emulator's timers: expiries (withdrawal requests, static charges, delayed payments) are
 * checked lazily on every read and also armed here, so that their callbacks fire without a
 * read. `cancelAll` is called on close.
 */
import { type Clock, timerAt } from '../clock.js';

export class Scheduler {
  #cancels = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  at(at: number, fn: () => void): () => void {
    const cancel = () => {
      this.#cancels.delete(cancel);
      stop();
    };
    const stop = timerAt(this.clock, at, () => {
      this.#cancels.delete(cancel);
      fn();
    });
    this.#cancels.add(cancel);
    return cancel;
  }

  cancelAll(): void {
    for (const cancel of [...this.#cancels]) cancel();
  }
}
