/**
 * The room's settlement feed: one presence subscription on the room's channel, on which
 * whichever process applied a change (callback, reconciler, create answer) publishes it. Each
 * message is only a pointer: the plugin reads the intent back from the ledger before it acts,
 * unless the message says the intent was already handed over in this process (`delivered`).
 *
 * Cost: one subscription per room; per message from another process one ledger read.
 */
import type { SettlementMessage } from '../server/settlement.js';
import { type PresenceLike, roomChannel } from '../server/settlement.js';

export class SettlementFeed {
  readonly #channel: string;
  readonly #onMessage: (message: unknown) => void;
  #presence: PresenceLike | undefined;

  constructor(roomId: string, deliver: (message: SettlementMessage) => void) {
    this.#channel = roomChannel(roomId);
    this.#onMessage = (message) => deliver(message as SettlementMessage);
  }

  async subscribe(presence: PresenceLike | undefined): Promise<void> {
    this.#presence = presence;
    await presence?.subscribe(this.#channel, this.#onMessage);
  }

  unsubscribe(): void {
    this.#presence?.unsubscribe(this.#channel, this.#onMessage);
  }
}
