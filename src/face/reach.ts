/**
 * How a part of the face reaches what the server runs on (lightning.ts builds it on first use):
 * each group names the few collaborators it needs as a narrow type, and the face hands it a
 * `Reach` of them, never the whole of what runs.
 */
import { ConfigurationError } from '../errors.js';

export interface Reach<T> {
  /** Starts the server if it is not running yet; what it runs on. */
  start(): Promise<T>;
  /** What runs now: undefined before the first start. */
  now(): T | undefined;
}

/** What runs now, or a ConfigurationError naming the call made too early (`what`). */
export function need<T>(reach: Reach<T>, what: string): T {
  const running = reach.now();
  if (running) return running;
  throw new ConfigurationError(
    `lightning.${what}`,
    'is not available yet: `await lightning.ready()` first (the server starts on first use)',
  );
}
