/**
 * The arena's time: the system clock, or a test's ManualClock (colyseus-lightning/emulator),
 * and a timer that fires at a time on that clock (a ManualClock runs it when it advances).
 */
import type { Clock } from 'colyseus-lightning';

export const systemClock: Clock = { now: () => Date.now() };

/** Runs `fn` once `clock` reads `at` or later; returns a cancel. */
export function timerAt(clock: Clock, at: number, fn: () => void): () => void {
  if (clock.setTimer) return clock.setTimer(at, fn);
  let handle: NodeJS.Timeout;
  const arm = () => {
    // setTimeout's longest wait is about 24.8 days; a later time re-arms.
    const delay = Math.min(Math.max(at - clock.now(), 0), 2_000_000_000);
    handle = setTimeout(() => (clock.now() < at ? arm() : fn()), delay);
    handle.unref();
  };
  arm();
  return () => clearTimeout(handle);
}
