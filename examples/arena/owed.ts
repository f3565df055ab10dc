/**
 * Money the arena took from a player that bought them nothing: an entry fee paid after it
 * expired (the server's `latePayment` event), a fee paid after its room closed, a fee paid
 * for a round that never ran, a prize that could not be created. Each is logged as one line
 * that starts with `OWED`, names the player and the amount, and is kept in `entries`, so an
 * operator refunds or credits it. The ledger holds every one of these movements too; this
 * book only says which of them the game still owes.
 *
 * Costs: two listeners on the server's events, and one set entry per fee left open by a
 * room that closed (it leaves when that fee ends).
 */
import type { Intent, Lightning } from 'colyseus-lightning';

export interface Owed {
  playerId: string;
  amountMsat: string;
  why: string;
}

export class OwedBook {
  readonly entries: Owed[] = [];
  readonly #lightning: Lightning;
  readonly #log: (line: string) => void;
  /** Entry fees still open when their room closed: paying one buys no seat any more. */
  readonly #orphans = new Set<string>();

  constructor(lightning: Lightning, log: (line: string) => void) {
    this.#lightning = lightning;
    this.#log = log;
    lightning.on('latePayment', (intent) =>
      this.owe(intent.playerId, intent.amount, `entry fee ${intent.id} was paid after it expired`),
    );
    lightning.on('entryFee.completed', (intent) => {
      if (this.#orphans.delete(intent.id)) {
        this.owe(
          intent.playerId,
          intent.amount,
          `entry fee ${intent.id} was paid after its room closed`,
        );
      }
    });
    const forget = (intent: Intent) => void this.#orphans.delete(intent.id);
    lightning.on('entryFee.expired', forget);
    lightning.on('entryFee.failed', forget);
  }

  owe(playerId: string, amountMsat: string | bigint, why: string): void {
    const owed = { playerId, amountMsat: String(amountMsat), why };
    this.entries.push(owed);
    this.#log(
      `[arena] OWED ${owed.amountMsat} msat to player ${playerId}: ${why}. Refund or credit them.`,
    );
  }

  /**
   * A room closed while this fee was open: if it is paid, now or later, the money is the
   * player's. The set entry comes first and whoever takes it out (this read, or the event)
   * reports it, so a payment that lands during the read is reported once.
   */
  async orphan(intentId: string): Promise<void> {
    this.#orphans.add(intentId);
    const intent = await this.#lightning.ledger.get(intentId);
    if (!intent || intent.status === 'expired' || intent.status === 'failed') {
      this.#orphans.delete(intentId);
    } else if (intent.status === 'completed' && this.#orphans.delete(intentId)) {
      this.owe(
        intent.playerId,
        intent.amount,
        `entry fee ${intent.id} was paid as its room closed`,
      );
    }
  }
}
