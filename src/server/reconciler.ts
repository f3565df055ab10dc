/**
 * The reconciler: recovers what the service never reports. The service's callbacks are not
 * retried, so a dropped one would leave a payout open forever; here every open intent has a
 * `nextCheckAt`, and one timer per process re-reads the due ones through the same path as a
 * callback (`Engine.check`). Re-reads back off exponentially, are due again right after an
 * intent's expiry, stay under a global rate cap, and are leased in the ledger so that two
 * processes never poll one intent at once; a lease outlives a dead process only by `leaseMs`.
 *
 * Footprint: one interval timer; per tick one ledger query, plus the re-reads that are due.
 */
import { randomUUID } from 'node:crypto';
import type { Intent } from '../ledger/intent.js';
import type { Engine } from './engine.js';
import type { ReconcilerSettings } from './options.js';

/** At most this many re-reads run at once in one process. */
const PARALLEL_CHECKS = 8;

export class Reconciler {
  /** Identifies this process's leases. */
  readonly owner = randomUUID();
  readonly #engine: Engine;
  readonly #settings: ReconcilerSettings;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(engine: Engine) {
    this.#engine = engine;
    this.#settings = engine.settings.reconciler;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.runOnce(), this.#settings.intervalMs);
    this.#timer.unref();
    void this.runOnce();
  }

  /**
   * The start-up sweep: every open intent becomes due now, so that what settled while this
   * process (or the whole game) was down is recovered in seconds, not at each intent's own
   * next check: the service never re-sends a callback. The re-reads then run at the
   * reconciler's pace, under its rate cap, in whichever process claims them. Resolves with how
   * many intents were brought forward; a failure is logged, never thrown.
   */
  async sweep(): Promise<number> {
    try {
      const moved = await this.#engine.ledger.advanceChecks(this.#engine.now());
      if (moved > 0) this.#engine.logger.info(`start-up sweep: re-reading ${moved} open intents`);
      return moved;
    } catch (err) {
      this.#engine.logger.warn(`start-up sweep failed: ${(err as Error).message}`);
      return 0;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One pass over the due intents; resolves with how many were checked. */
  runOnce(): Promise<number> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(): Promise<number> {
    const { checksPerSecond, intervalMs, leaseMs } = this.#settings;
    const budget = Math.max(1, Math.floor((checksPerSecond * intervalMs) / 1_000));
    let due: Intent[];
    try {
      due = await this.#engine.ledger.claimDue(this.#engine.now(), budget, this.owner, leaseMs);
    } catch (err) {
      this.#engine.logger.warn(`reconciler could not read the ledger: ${(err as Error).message}`);
      return 0;
    }
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const intent = due[next++] as Intent;
        try {
          await this.#engine.check(intent);
        } catch (err) {
          this.#engine.logger.warn(`reconciling ${intent.id} failed: ${(err as Error).message}`);
        } finally {
          await this.#engine.ledger.release(intent.id, this.owner).catch(() => {});
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_CHECKS, due.length) }, worker));
    return due.length;
  }
}
