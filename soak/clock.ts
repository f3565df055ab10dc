/**
 * The soak's clock: the system clock plus an offset that only grows. The emulator and every game
 * process (its engine and its ledger) read time through one, so that the runner can make a
 * minute pass in an instant for all of them together: the claim codes of matches live at least
 * 60 s (the least `claimExpiresIn`), longer than the short soak, and jumping past their deadline
 * is how some winners claim too late and unclaimed codes expire within the run.
 *
 * No timers of its own: the package's `timerAt` arms a real setTimeout against `now()`, so a
 * timer armed before a jump fires late in clock time; the emulator's `tick()` and the
 * reconciler's next pass catch up with what fell due.
 */
import type { Clock } from '../src/clock.js';

export class SoakClock implements Clock {
  #offset: number;

  constructor(offset = 0) {
    this.#offset = offset;
  }

  now(): number {
    return Date.now() + this.#offset;
  }

  /** How far ahead of the system clock it runs, ms. */
  get offset(): number {
    return this.#offset;
  }

  /** Runs `offset` ms ahead of the system clock from now on (never less than before). */
  setOffset(offset: number): void {
    if (!(offset >= this.#offset)) throw new RangeError('the soak clock only moves forward');
    this.#offset = offset;
  }
}
