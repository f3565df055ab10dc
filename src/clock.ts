/**
 * The one clock shape: everything reads time (and waits) through a `Clock`. A `ManualClock`
 * runs what is due inside `advance(ms)`: tests move time, never wait.
 */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once the clock reaches `at`; returns its cancel. Without it: real timers. */
  setTimer?(at: number, fn: () => void): () => void;
}

export const systemClock: Clock = { now: () => Date.now() };

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock that moves only when told to; due timers run synchronously in `advance`. */
export class ManualClock implements Clock {
  #current: number;
  #timers: ManualTimer[] = [];
  #seq = 0;

  constructor(start: number | Date = Date.UTC(2025, 0, 1)) {
    this.#current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.#current;
  }

  setTimer(at: number, fn: () => void): () => void {
    const timer: ManualTimer = { at, seq: this.#seq++, fn };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward by `ms` and runs every timer that fell due, oldest deadline first. */
  advance(ms: number): void {
    this.set(this.#current + ms);
  }

  /** Jumps to an absolute time (never backwards) and runs what fell due. */
  set(at: number | Date): void {
    const target = typeof at === 'number' ? at : at.getTime();
    if (target < this.#current) throw new RangeError('ManualClock cannot move backwards');
    for (;;) {
      const due = this.#timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      // Timers see the time they were due at, so that chained timers keep their order.
      this.#current = Math.max(this.#current, due.at);
      due.fn();
    }
    this.#current = target;
  }

  /** Timers still waiting; useful to assert that nothing is armed. */
  get pendingTimers(): number {
    return this.#timers.length;
  }
}

/** setTimeout's ceiling; longer waits are re-armed when they fire. */
const MAX_DELAY = 2_147_483_647;

/**
 * Runs `fn` once `clock` reaches `at`; returns its cancel. A clock without timers gets a
 * `setTimeout`, re-armed until `now()` reached `at`, unref'd unless `keepAlive`: a background
 * schedule must not hold the process open.
 */
export function timerAt(clock: Clock, at: number, fn: () => void, keepAlive = false): () => void {
  if (clock.setTimer) return clock.setTimer(at, fn);
  let handle: NodeJS.Timeout;
  const arm = () => {
    const delay = Math.min(Math.max(at - clock.now(), 0), MAX_DELAY);
    handle = setTimeout(() => (clock.now() < at ? arm() : fn()), delay);
    if (!keepAlive) handle.unref();
  };
  arm();
  return () => clearTimeout(handle);
}

/** Resolves once `clock` moved `ms` forward; its timer keeps the process alive (someone awaits). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timerAt(clock, clock.now() + ms, resolve, true);
  });
}
