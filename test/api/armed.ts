/**
 * Waiting on a ManualClock: a test that drives the client's retry waits first lets the
 * client reach its wait (a timer armed on the clock), then moves time. Polls every
 * millisecond of real time; gives up after `withinMs` so a wait that never comes fails.
 */
import type { ManualClock } from '../../src/clock.js';

/** Resolves once `clock` holds `count` armed timers. */
export async function timersArmed(clock: ManualClock, count = 1, withinMs = 5_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (clock.pendingTimers !== count) {
    if (performance.now() > deadline) {
      throw new Error(`expected ${count} armed timer(s), found ${clock.pendingTimers}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
