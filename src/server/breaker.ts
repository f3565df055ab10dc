/**
 * The payout circuit breaker: when the service starts answering badly (ambiguous creates,
 * 5xx) or the wallet runs low, stop paying out until an operator has looked. A payout that is
 * refused here records nothing and sends nothing; entry fees and spends (money coming in)
 * are never paused.
 *
 * It trips when `failures` ambiguous or 5xx answers arrive within `windowMs`, or when a
 * payout would leave the wallet under `walletFloorMsat` (the balance is read at most every
 * `walletCheckMs`, and the amounts paid out since are subtracted from it). It stays open until
 * `resume()`. The state is per process: each process trips on what it sees.
 *
 * Footprint: one timestamp per counted failure within the window; one wallet read per
 * `walletCheckMs` while a floor is set.
 */
import type { PaymentsApi } from '../api/client.js';
import type { Clock } from '../clock.js';
import { PayoutsPausedError } from '../errors.js';
import type { PayoutPause } from './events.js';
import type { LightningLogger } from './logger.js';
import type { BreakerSettings } from './options.js';

export interface BreakerDeps {
  settings: BreakerSettings;
  clock: Clock;
  logger: LightningLogger;
  api: PaymentsApi;
  /** Told once each time the breaker trips. */
  onPause(pause: PayoutPause): void;
}

export class PayoutBreaker {
  readonly #deps: BreakerDeps;
  #failures: number[] = [];
  #paused: PayoutPause | null = null;
  #balance: { msat: bigint; readAt: number } | null = null;

  constructor(deps: BreakerDeps) {
    this.#deps = deps;
  }

  /** Why payouts are paused, or null while they run. */
  get paused(): PayoutPause | null {
    return this.#paused;
  }

  /** Counts a failed call if it is one that trips the breaker (ambiguous, or a 5xx). */
  recordFailure(err: unknown, ambiguous: boolean): void {
    const { failures, windowMs } = this.#deps.settings;
    if (failures === 0) return;
    const status = (err as { status?: unknown } | null)?.status;
    if (!ambiguous && !(typeof status === 'number' && status >= 500)) return;
    const now = this.#deps.clock.now();
    this.#failures = this.#failures.filter((at) => at > now - windowMs);
    this.#failures.push(now);
    if (this.#failures.length >= failures) {
      this.#trip(`${this.#failures.length} ambiguous or 5xx answers within ${windowMs} ms`);
    }
  }

  /** Resolves when a payout of `amountMsat` may go ahead; rejects with PayoutsPausedError. */
  async admit(amountMsat: bigint): Promise<void> {
    if (this.#paused) throw new PayoutsPausedError(this.#paused.reason);
    const floor = this.#deps.settings.walletFloorMsat;
    if (floor === undefined) return;
    const balance = await this.#walletMsat();
    if (balance - amountMsat < BigInt(floor)) {
      this.#trip(`the wallet would fall below its floor of ${floor} msat`);
      throw new PayoutsPausedError((this.#paused as PayoutPause | null)?.reason ?? 'paused');
    }
    if (this.#balance) this.#balance.msat -= amountMsat;
  }

  /** Payouts run again; the failure count starts afresh. */
  resume(): void {
    if (this.#paused) this.#deps.logger.info('payouts resumed');
    this.#paused = null;
    this.#failures = [];
    this.#balance = null;
  }

  #trip(reason: string): void {
    if (this.#paused) return;
    this.#paused = { reason, at: this.#deps.clock.now() };
    this.#deps.logger.error(`PAYOUTS PAUSED: ${reason}; call lightning.resume() once resolved`);
    this.#deps.onPause(this.#paused);
  }

  async #walletMsat(): Promise<bigint> {
    const now = this.#deps.clock.now();
    const cached = this.#balance;
    if (cached && now - cached.readAt < this.#deps.settings.walletCheckMs) return cached.msat;
    const wallet = await this.#deps.api.wallet.get();
    // The service states the balance in satoshis.
    const msat = BigInt(Math.floor(Number(wallet.balance) * 1000));
    this.#balance = { msat, readAt: now };
    return msat;
  }
}
