/**
 * The room's settlement feed: one presence subscription on the room's channel, on which a
 * process that applied a change to one of the room's intents (callback, reconciler, create
 * answer) publishes it when the room is not its own (its own rooms are handed the change:
 * server/rooms.ts). Each message is only a pointer: the plugin reads the intent back from the
 * ledger before it acts.
 *
 * Cost: one subscription per room; per message one ledger read.
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
