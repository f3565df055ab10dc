/**
 * The one way a test waits for something to happen: poll a check until it holds. Every
 * positive wait in the suite goes through here; a fixed sleep never stands in for one, and
 * a test that asserts something did *not* happen first waits, with this, on an observable
 * sign that it would have happened by then (an answered callback, a finished pass, a later
 * message on the same channel).
 */

/** How often a check is polled: cheap enough for a ledger read, short next to any timeout. */
const POLL_MS = 10;

/** What a check resolves with once it holds. */
export type Truthy<T> = Exclude<T, false | 0 | 0n | '' | null | undefined>;

/**
 * Polls `check` until it returns a truthy value and resolves with that value; rejects after
 * `ms`. An exception thrown by `check` ends the wait at once. `what` names the condition in
 * the failure; a function is called at that moment, so it can say how far things got.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  ms = 5_000,
  what: string | (() => string) = 'condition',
): Promise<Truthy<Awaited<T>>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<Awaited<T>>;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
