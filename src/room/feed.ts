/**
 * The room's settlement feed: one presence subscription on the room's channel, where other
 * processes publish moves of the room's intents (its own process hands them over). A message
 * is only a pointer: the plugin reads the intent back. Cost: one ledger read per message.
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
