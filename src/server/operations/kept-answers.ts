/**
 * Answers the service gave while the ledger was away for a moment: kept in this process and
 * written once it answers again, so a live code is never dropped (its caller was told
 * AnswerNotRecordedError). On close each is tried once more; what still fails is logged by ids.
 *
 * Footprint: one timer per kept answer while the ledger is down, backing off to one try in 5 s.
 */
import { type Clock, timerAt } from '../../clock.js';
import { LedgerUnavailableError } from '../../ledger/errors.js';
import type { LightningLogger } from '../logger.js';

const FIRST_TRY_MS = 100;
const LAST_TRY_MS = 5_000;

interface Kept {
  remoteId: string | null;
  write(): Promise<void>;
  cancel(): void;
}

export class KeptAnswers {
  readonly #clock: Clock;
  readonly #logger: LightningLogger;
  readonly #kept = new Map<string, Kept>();
  #closed = false;

  constructor(clock: Clock, logger: LightningLogger) {
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Keeps `write` (the answer's record) and tries it again until it is written. */
  keep(intentId: string, remoteId: string | null, write: () => Promise<void>): void {
    if (this.#closed) {
      this.#unrecorded(intentId, remoteId);
      return;
    }
    this.#kept.get(intentId)?.cancel();
    const kept: Kept = { remoteId, write, cancel: () => {} };
    this.#kept.set(intentId, kept);
    this.#schedule(intentId, kept, FIRST_TRY_MS);
  }

  /** Tries each kept answer once more, then logs what is still unwritten. */
  async close(): Promise<void> {
    this.#closed = true;
    const left = [...this.#kept.entries()];
    this.#kept.clear();
    for (const [intentId, kept] of left) {
      kept.cancel();
      try {
        await kept.write();
      } catch {
        this.#unrecorded(intentId, kept.remoteId);
      }
    }
  }

  #schedule(intentId: string, kept: Kept, waitMs: number): void {
    kept.cancel = timerAt(this.#clock, this.#clock.now() + waitMs, () => {
      void this.#try(intentId, kept, waitMs);
    });
  }

  async #try(intentId: string, kept: Kept, waitedMs: number): Promise<void> {
    if (this.#kept.get(intentId) !== kept) return;
    try {
      await kept.write();
      if (this.#kept.get(intentId) === kept) this.#kept.delete(intentId);
      this.#logger.info(`intent ${intentId}: the service's answer is recorded now`);
    } catch (err) {
      if (this.#kept.get(intentId) !== kept) return;
      if (!(err instanceof LedgerUnavailableError)) {
        this.#kept.delete(intentId);
        this.#logger.error(
          `intent ${intentId}: the service's answer${kept.remoteId ? ` (${kept.remoteId})` : ''} could not be recorded: ${(err as Error).message}`,
        );
        return;
      }
      this.#schedule(intentId, kept, Math.min(waitedMs * 2, LAST_TRY_MS));
    }
  }

  #unrecorded(intentId: string, remoteId: string | null): void {
    this.#logger.error(
      `intent ${intentId}: closing with the service's answer${remoteId ? ` (${remoteId})` : ''} unrecorded; the reconciler of the next process makes it unknown, and its callback proves it`,
    );
  }
}
