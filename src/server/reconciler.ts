/**
 * The reconciler: recovers what the service never reports (its callbacks are not retried).
 * Every open intent has a `nextCheckAt`; one timer per process claims the due ones, leased in
 * the ledger so that two processes never read one at once, and re-reads each through the same
 * path as a callback, under `checksPerSecond`. Queued payouts (queue.ts) are claimed the same
 * way: with `rateLimit`, in a share of their own paced by the outbound scheduler; without one,
 * as checks. It also runs the live audit (audit.ts) every `audit.intervalMs`.
 *
 * Footprint: two interval timers; per tick one ledger query, plus the re-reads that are due.
 */
import { randomUUID } from 'node:crypto';
import type { Intent } from '../ledger/intent.js';
import type { Checks } from './checks.js';
import type { Engine } from './engine.js';
import type { ReconcilerSettings } from './options.js';

/** At most this many re-reads run at once in one pass of `runOnce`. */
const PARALLEL_CHECKS = 8;
/** Re-reads in flight in one process, across ticks: a hung one holds one place, not all. */
const MAX_IN_FLIGHT = 32;

/** What one claim may start: re-reads (and, without a rate, queued payouts) and drains. */
interface TickBudget {
  checks: number;
  drains: number;
}

export class Reconciler {
  /** Identifies this process's leases. */
  readonly owner = randomUUID();
  readonly #engine: Engine;
  /** Who looks at each due intent (the engine, the payout queue, the matches). */
  readonly #checks: Pick<Checks, 'check'>;
  readonly #settings: ReconcilerSettings;
  #timer: NodeJS.Timeout | undefined;
  #auditTimer: NodeJS.Timeout | undefined;
  readonly #audit: () => Promise<unknown>;
  #auditing: Promise<unknown> | undefined;
  #running: Promise<number> | undefined;
  /** The timer's re-reads (and, without a rate, queued payouts) still in flight. */
  readonly #inFlight = new Set<Promise<void>>();
  /** The timer's queued payouts still in flight (with a rate: each waits for its token). */
  readonly #draining = new Set<Promise<void>>();
  #claiming = false;
  readonly #onChecked: (ok: boolean) => void;

  /**
   * `audit` is run every `audit.intervalMs` while the reconciler runs; `onChecked` is told of
   * each re-read of a due intent (whether it threw), for the metrics.
   */
  constructor(
    engine: Engine,
    checks: Pick<Checks, 'check'>,
    audit: () => Promise<unknown>,
    onChecked: (ok: boolean) => void,
  ) {
    this.#engine = engine;
    this.#checks = checks;
    this.#settings = engine.settings.reconciler;
    this.#audit = audit;
    this.#onChecked = onChecked;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#tick(), this.#settings.intervalMs);
    this.#timer.unref();
    void this.#tick();
    const audit = this.#engine.settings.audit;
    if (audit.enabled) {
      this.#auditTimer = setInterval(() => this.#runAudit(), audit.intervalMs);
      this.#auditTimer.unref();
    }
  }

  #runAudit(): void {
    if (this.#auditing) return;
    this.#auditing = this.#audit()
      .catch((err: unknown) => this.#engine.logger.warn(`audit failed: ${(err as Error).message}`))
      .finally(() => {
        this.#auditing = undefined;
      });
  }

  /**
   * The start-up sweep: every open intent becomes due now, so that what settled while the game
   * was down is recovered in seconds, at the reconciler's pace. Resolves with how many; a
   * failure is logged, never thrown.
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
    clearInterval(this.#auditTimer);
    this.#timer = undefined;
    this.#auditTimer = undefined;
    await Promise.all([this.#running, this.#auditing, ...this.#inFlight, ...this.#draining]);
  }

  /**
   * The timer's step: claims what is due, up to the rate budget and the places free, and
   * starts each check without waiting for the others; the next tick does not wait either.
   */
  async #tick(): Promise<void> {
    const budget = this.#budget();
    const room: TickBudget = {
      checks: Math.min(budget.checks, MAX_IN_FLIGHT - this.#inFlight.size),
      drains: Math.min(budget.drains, budget.drainsInFlight - this.#draining.size),
    };
    if (this.#claiming || (room.checks <= 0 && room.drains <= 0)) return;
    this.#claiming = true;
    let due: Intent[];
    try {
      due = this.#within(await this.#claim(room), budget);
    } finally {
      this.#claiming = false;
    }
    for (const intent of due) {
      const places =
        intent.status === 'queued' && budget.drains > 0 ? this.#draining : this.#inFlight;
      const check: Promise<void> = this.#checkOne(intent).finally(() => {
        places.delete(check);
      });
      places.add(check);
    }
  }

  /** A tick's budget, and how many drains may wait for their tokens at once. */
  #budget(): TickBudget & { drainsInFlight: number } {
    const { checksPerSecond, intervalMs } = this.#settings;
    const rate = this.#engine.settings.rateLimit;
    // A tick's worth of the game's rate (at least its burst), paced by the scheduler; a second's
    // worth may wait for tokens at once, so a short tick never leaves the rate unused.
    const drains = rate
      ? Math.max(1, Math.ceil((rate.perSecond * intervalMs) / 1_000), Math.floor(rate.burst))
      : 0;
    return {
      checks: Math.max(1, Math.floor((checksPerSecond * intervalMs) / 1_000)),
      drains,
      drainsInFlight: rate ? Math.max(drains, Math.ceil(rate.perSecond)) : 0,
    };
  }

  /**
   * The claimed intents the budget covers: queued payouts first against `drains`, then anything
   * against `checks`. The others are released at once (due as they were: the next tick).
   */
  #within(claimed: Intent[], budget: TickBudget): Intent[] {
    let { checks, drains } = budget;
    const kept: Intent[] = [];
    for (const intent of claimed) {
      if (intent.status === 'queued' && drains > 0) {
        drains--;
        kept.push(intent);
      } else if (checks > 0) {
        checks--;
        kept.push(intent);
      } else {
        void this.#engine.ledger.release(intent.id, this.owner).catch(() => {});
      }
    }
    return kept;
  }

  /** Leases what `room` covers; with a rate, queued payouts in a share of their own. */
  async #claim(room: TickBudget): Promise<Intent[]> {
    const checks = Math.max(0, room.checks);
    const queued = this.#engine.settings.rateLimit ? Math.max(0, room.drains) : undefined;
    try {
      return await this.#engine.ledger.claimDue(
        this.#engine.now(),
        checks,
        this.owner,
        this.#settings.leaseMs,
        queued,
      );
    } catch (err) {
      this.#engine.logger.warn(`reconciler could not read the ledger: ${(err as Error).message}`);
      return [];
    }
  }

  async #checkOne(intent: Intent): Promise<void> {
    try {
      await this.#checks.check(intent);
      this.#onChecked(true);
    } catch (err) {
      this.#onChecked(false);
      this.#engine.logger.warn(`reconciling ${intent.id} failed: ${(err as Error).message}`);
    } finally {
      await this.#engine.ledger.release(intent.id, this.owner).catch(() => {});
    }
  }

  /** One pass over the due intents; resolves with how many were checked. */
  runOnce(): Promise<number> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(): Promise<number> {
    const budget = this.#budget();
    const due = this.#within(await this.#claim(budget), budget);
    let next = 0;
    const worker = async () => {
      while (next < due.length) await this.#checkOne(due[next++] as Intent);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_CHECKS, due.length) }, worker));
    return due.length;
  }
}
