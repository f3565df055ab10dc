/**
 * The payout circuit breaker: when the service answers badly (ambiguous or 5xx, never a 429) or
 * the wallet runs low, payouts stop until `resume()`, refused with nothing recorded or sent.
 * No player can pause everyone's: failed payout creates count against their player and their
 * recipient (an address's domain), and pause only when they come from `players` of each; 5xx
 * reads count against the service, from `players` intents. Money coming in never counts. An
 * address that keeps failing is held for the window. State is per process.
 *
 * Footprint: at most `failures` records per player, recipient or intent; at most 10,000 held
 * addresses; one wallet read per `walletCheckMs` while a floor is set.
 */
import type { Clock } from '../clock.js';
import { PayoutsPausedError } from '../errors.js';
import type { PaymentsPort, ServiceFailure } from '../port/port.js';
import type { PayoutPause } from './events.js';
import type { LightningLogger } from './logger.js';
import type { BreakerSettings } from './options.js';

interface BreakerDeps {
  settings: BreakerSettings;
  clock: Clock;
  logger: LightningLogger;
  port: PaymentsPort;
  /** Told once each time the breaker trips. */
  onPause(pause: PayoutPause): void;
}

/** Whose payout failed: its player, and the Lightning address it went to (none: a claim code). */
interface PayoutParty {
  playerId: string;
  lnAddress?: string | null | undefined;
}

interface PayoutFailure {
  at: number;
  playerId: string;
  /** The recipient: `domain:<the address's domain>`, or `player:<id>` for a claim code. */
  recipient: string;
  lnAddress: string | null;
}

interface ReadFailure {
  at: number;
  intentId: string;
}

/** Held addresses remembered at most: the oldest is forgotten first. */
const MAX_HELD_ADDRESSES = 10_000;
/** Player ids named in a pause's reason at most (all of them are in `players`). */
const NAMED_IN_REASON = 10;

/** Whether a failed call says the service (or a recipient) answered badly: never a 429. */
function isBadAnswer(failure: ServiceFailure, ambiguous: boolean): boolean {
  return !failure.slowDown && (ambiguous || failure.serverError);
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

export class PayoutBreaker {
  readonly #deps: BreakerDeps;
  #payouts: PayoutFailure[] = [];
  #reads: ReadFailure[] = [];
  /** Failure times per Lightning address (lower case), least recently failed first. */
  readonly #addresses = new Map<string, number[]>();
  #paused: PayoutPause | null = null;
  #balance: { msat: bigint; readAt: number } | null = null;

  constructor(deps: BreakerDeps) {
    this.#deps = deps;
  }

  /** Why payouts are paused, or null while they run. */
  get paused(): PayoutPause | null {
    return this.#paused;
  }

  /** Rejects with PayoutsPausedError while payouts are paused; nothing else is checked. */
  refuseIfPaused(): void {
    if (this.#paused) throw new PayoutsPausedError(this.#paused.reason);
  }

  /**
   * A payout's create failed: counted against its player and recipient when the answer was
   * ambiguous or a 5xx (never a 429). Entry fees and spends must not be given here.
   */
  payoutFailed(err: unknown, ambiguous: boolean, party: PayoutParty): void {
    if (!isBadAnswer(this.#deps.port.failureOf(err), ambiguous)) return;
    const now = this.#deps.clock.now();
    const lnAddress = party.lnAddress ? party.lnAddress.toLowerCase() : null;
    if (lnAddress !== null) this.#addressFailed(lnAddress, now);
    const { failures, windowMs, players } = this.#deps.settings;
    if (failures === 0 || this.#paused) return;
    const recipient =
      lnAddress === null ? `player:${party.playerId}` : `domain:${domainOf(lnAddress)}`;
    const recent = this.#payouts.filter((f) => f.at > now - windowMs);
    // One player's or recipient's failures beyond `failures` replace their oldest: bounded.
    for (const same of [
      (f: PayoutFailure) => f.playerId === party.playerId,
      (f: PayoutFailure) => f.recipient === recipient,
    ]) {
      const theirs = recent.filter(same);
      if (theirs.length >= failures) recent.splice(recent.indexOf(theirs[0] as PayoutFailure), 1);
    }
    recent.push({ at: now, playerId: party.playerId, recipient, lnAddress });
    this.#payouts = recent;
    const who = [...new Set(recent.map((f) => f.playerId))];
    const recipients = new Set(recent.map((f) => f.recipient));
    if (recent.length < failures || who.length < players || recipients.size < players) return;
    const named = who.slice(0, NAMED_IN_REASON).join(', ');
    const more = who.length > NAMED_IN_REASON ? ` and ${who.length - NAMED_IN_REASON} more` : '';
    this.#trip({
      cause: 'payouts',
      reason: `${recent.length} ambiguous or 5xx answers within ${windowMs} ms to the payouts of ${who.length} players (${named}${more})`,
      players: who,
      recipients: [...new Set(recent.flatMap((f) => (f.lnAddress === null ? [] : [f.lnAddress])))],
    });
  }

  /** A read failed: a 5xx counts against the service, from `players` intents (not one record). */
  readFailed(err: unknown, intentId: string): void {
    const { failures, windowMs, players } = this.#deps.settings;
    if (failures === 0 || this.#paused || !isBadAnswer(this.#deps.port.failureOf(err), false)) {
      return;
    }
    const now = this.#deps.clock.now();
    const recent = this.#reads.filter((r) => r.at > now - windowMs);
    const same = recent.filter((r) => r.intentId === intentId);
    if (same.length >= failures) recent.splice(recent.indexOf(same[0] as ReadFailure), 1);
    recent.push({ at: now, intentId });
    this.#reads = recent;
    const intents = new Set(recent.map((r) => r.intentId)).size;
    if (recent.length < failures || intents < players) return;
    this.#trip({
      cause: 'reads',
      reason: `the service answered ${recent.length} reads of ${intents} intents with 5xx within ${windowMs} ms`,
    });
  }

  /** An address's check did not answer: counts against that address only (its server may hang). */
  addressUnchecked(lnAddress: string, err: unknown): void {
    const failure = this.#deps.port.failureOf(err);
    const unanswered =
      failure.meaning === 'unanswered' ||
      failure.meaning === 'garbled' ||
      isBadAnswer(failure, false);
    if (unanswered && failure.meaning !== 'rateLimited') {
      this.#addressFailed(lnAddress.toLowerCase(), this.#deps.clock.now());
    }
  }

  /** Whether payments to `lnAddress` are held: they failed `recipientFailures` times just now. */
  addressFailing(lnAddress: string): boolean {
    const { recipientFailures, windowMs } = this.#deps.settings;
    if (recipientFailures === 0) return false;
    const key = lnAddress.toLowerCase();
    const times = this.#addresses.get(key);
    if (!times) return false;
    const since = this.#deps.clock.now() - windowMs;
    const recent = times.filter((at) => at > since);
    if (recent.length === 0) this.#addresses.delete(key);
    return recent.length >= recipientFailures;
  }

  /** Resolves when a payout of `amountMsat` may go ahead; rejects with PayoutsPausedError. */
  async admit(amountMsat: bigint): Promise<void> {
    this.refuseIfPaused();
    const floor = this.#deps.settings.walletFloorMsat;
    if (floor === undefined) return;
    const balance = await this.#walletMsat();
    if (balance - amountMsat < BigInt(floor)) {
      this.#trip({
        cause: 'wallet',
        reason: `the wallet would fall below its floor of ${floor} msat`,
      });
      this.refuseIfPaused();
    }
    if (this.#balance) this.#balance.msat -= amountMsat;
  }

  /** An operator's pause; nothing changes when payouts are already paused. */
  pauseByOperator(by: string, reason: string): void {
    this.#trip({ cause: 'operator', reason, by });
  }

  /** Payouts run again; every count starts afresh, and no address is held. */
  resume(): void {
    if (this.#paused) this.#deps.logger.info('payouts resumed');
    this.#paused = null;
    this.#payouts = [];
    this.#reads = [];
    this.#addresses.clear();
    this.#balance = null;
  }

  #addressFailed(key: string, now: number): void {
    const { recipientFailures, windowMs } = this.#deps.settings;
    if (recipientFailures === 0) return;
    const times = (this.#addresses.get(key) ?? []).filter((at) => at > now - windowMs);
    times.push(now);
    if (times.length > recipientFailures) times.shift();
    // Deleted and set again: the map stays in the order addresses last failed.
    this.#addresses.delete(key);
    this.#addresses.set(key, times);
    if (this.#addresses.size > MAX_HELD_ADDRESSES) {
      const oldest = this.#addresses.keys().next().value;
      if (oldest !== undefined) this.#addresses.delete(oldest);
    }
  }

  /** Pauses payouts, once until `resume()`; `players` and `recipients` default to none. */
  #trip(pause: Pick<PayoutPause, 'cause' | 'reason'> & Partial<PayoutPause>): void {
    if (this.#paused) return;
    this.#paused = { players: [], recipients: [], ...pause, at: this.#deps.clock.now() };
    this.#deps.logger.error(
      `PAYOUTS PAUSED: ${pause.reason}; call lightning.operator.resume() once resolved`,
    );
    this.#deps.onPause(this.#paused);
  }

  async #walletMsat(): Promise<bigint> {
    const now = this.#deps.clock.now();
    const cached = this.#balance;
    if (cached && now - cached.readAt < this.#deps.settings.walletCheckMs) return cached.msat;
    const msat = await this.#deps.port.readWallet();
    this.#balance = { msat, readAt: now };
    return msat;
  }
}
