/**
 * The tab calls this process refused lately (a credit or a withdrawal a rule said no to, as
 * `isRefusal` tells, the same test as the `lightning.refused` metric's), for the operator: the
 * newest few, and a count per call and code since the process started. Per process, as the
 * alerts are; nothing is written to the ledger, so a bot that is refused without end costs
 * memory for MAX_KEPT refusals only.
 */
import { isRefusal } from '../errors.js';

/** One refused call. */
export interface Refusal {
  /** epoch ms */
  at: number;
  /** The face's call: `tabs.credit` or `tabs.withdraw`. */
  call: string;
  playerId: string;
  /** msats, a decimal string; null: the whole tab. */
  amountMsat: string | null;
  /** The error's stable code (`LN_INSUFFICIENT_FUNDS`, ...) and message. */
  code: string;
  message: string;
}

/** How many refusals of one call with one code this process saw. */
export interface RefusalCount {
  call: string;
  code: string;
  count: number;
}

const MAX_KEPT = 200;
/** Distinct `call code` pairs counted; codes are a closed set, so this is never reached. */
const MAX_COUNTS = 1_000;

export class Refusals {
  readonly #kept: Refusal[] = [];
  readonly #counts = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** `call` for `who` rejected with `err`: noted when it is a rule's refusal. */
  note(call: string, who: Pick<Refusal, 'playerId' | 'amountMsat'>, err: unknown): void {
    if (!isRefusal(err)) return;
    const at = this.#now();
    const { playerId, amountMsat } = who;
    this.#kept.push({ at, call, playerId, amountMsat, code: err.code, message: err.message });
    if (this.#kept.length > MAX_KEPT) this.#kept.shift();
    const key = `${call} ${err.code}`;
    if (this.#counts.has(key) || this.#counts.size < MAX_COUNTS) {
      this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    }
  }

  /** The newest `limit` refusals, newest first. */
  recent(limit: number): Refusal[] {
    return this.#kept.slice(-limit).reverse();
  }

  /** How many refusals per `call` and `code` since this process started. */
  counts(): RefusalCount[] {
    return [...this.#counts].map(([key, count]) => {
      const [call = '', code = ''] = key.split(' ');
      return { call, code, count };
    });
  }
}
