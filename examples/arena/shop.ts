/**
 * The arena's shop: spends a player's points on an item, one purchase at a time per player,
 * and tells them only what is true:
 *
 *   the deplete completed                       "You bought the X."
 *   the balance was short (nothing debited)     "Not enough points for the X."
 *   refused, or never sent                      "... nothing was spent."
 *   sent, answer lost (it may have gone through) "... not confirmed yet." The ledger holds it
 *                                               as `unknown` and the reconciler re-sends it
 *                                               with the same key; when it settles the item is
 *                                               granted (or the failure told), and the player's
 *                                               pointSpends entry shows the outcome.
 *
 * Until a purchase has settled, that player cannot start another: a flood of `buy` messages
 * makes one deplete. A purchase whose create failed is `unknown` only if the server said so
 * (its `unknown` event, emitted before the helper rejects); any other failure left nothing
 * at the service, because an intent is recorded before the call and sent only after.
 *
 * Costs: one listener on the server's `unknown` event per Lightning, shared by every room's
 * shop (a listener per room would pass node's 10-listener warning at the 11th room), one map
 * entry per room and one per purchase in flight.
 */
import type { Client } from '@colyseus/core';
import { InsufficientPointsError, type Intent, type Lightning } from 'colyseus-lightning';

const ENDED: readonly string[] = ['completed', 'expired', 'failed'];

/** What the shop says to a player; `ok` is null while a purchase is not confirmed. */
export interface ShopMessage {
  ok: boolean | null;
  /** The purchase's description, as its pointSpends entry shows it ('' for none). */
  order: string;
  message: string;
}

export interface ShopHost {
  lightning: Lightning;
  roomId: string;
  prices: Readonly<Record<string, number>>;
  /** Spends points (the room plugin's spendPoints); resolves with the entry it made. */
  spend(
    client: Client,
    amount: number,
    description: string,
  ): Promise<{ id: string; status: string }>;
  grant(playerId: string, item: string): void;
  tell(playerId: string, message: ShopMessage): void;
}

interface Purchase {
  playerId: string;
  item: string;
  price: number;
  order: string;
  /** Known once the spend is recorded and its outcome must be waited for. */
  intentId?: string;
  done: boolean;
}

/** The shops of one Lightning, by room id, and how to remove the one listener that serves them all. */
interface Shops {
  byRoom: Map<string, Shop>;
  stop: () => void;
}

export class Shop {
  static readonly #shops = new WeakMap<Lightning, Shops>();
  readonly #host: ShopHost;
  readonly #inFlight = new Map<string, Purchase>();
  #orders = 0;

  constructor(host: ShopHost) {
    this.#host = host;
    let shops = Shop.#shops.get(host.lightning);
    if (!shops) {
      const byRoom = new Map<string, Shop>();
      const listener = (intent: Intent) => {
        const shop = intent.roomId === null ? undefined : byRoom.get(intent.roomId);
        if (shop) shop.#onUnknown(intent);
      };
      shops = { byRoom, stop: host.lightning.on('unknown', listener) };
      Shop.#shops.set(host.lightning, shops);
    }
    shops.byRoom.set(host.roomId, this);
  }

  close(): void {
    const { lightning, roomId } = this.#host;
    const shops = Shop.#shops.get(lightning);
    if (shops?.byRoom.get(roomId) !== this) return;
    shops.byRoom.delete(roomId);
    if (shops.byRoom.size === 0) {
      shops.stop();
      Shop.#shops.delete(lightning);
    }
  }

  async buy(client: Client, playerId: string, item: unknown): Promise<void> {
    const { prices } = this.#host;
    const price =
      typeof item === 'string' && Object.hasOwn(prices, item) ? prices[item] : undefined;
    if (typeof item !== 'string' || price === undefined) {
      return this.#host.tell(playerId, { ok: false, order: '', message: 'No such item.' });
    }
    const busy = this.#inFlight.get(playerId);
    if (busy) {
      return this.#host.tell(playerId, {
        ok: null,
        order: busy.order,
        message: `One purchase at a time: the ${busy.item} is not confirmed yet.`,
      });
    }
    const purchase: Purchase = {
      playerId,
      item,
      price,
      order: `Shop order ${++this.#orders}: ${item}`,
      done: false,
    };
    this.#inFlight.set(playerId, purchase);
    try {
      const entry = await this.#host.spend(client, price, purchase.order);
      if (entry.status === 'completed') return this.#end(purchase, 'completed');
      purchase.intentId = entry.id; // accepted, not yet completed: its settlement will say
      await this.#wait(purchase);
    } catch (err) {
      if (err instanceof InsufficientPointsError) return this.#end(purchase, 'short');
      // No `unknown` event for it: refused for certain, or never sent.
      if (purchase.intentId === undefined) return this.#end(purchase, 'failed');
      await this.#wait(purchase);
    }
  }

  /** A spend of this room ended (from the room's onSettled hook). */
  settled(intent: Intent): void {
    if (intent.kind !== 'spend') return;
    const purchase = this.#inFlight.get(intent.playerId);
    if (purchase?.intentId === intent.id) this.#end(purchase, intent.status);
  }

  #onUnknown(intent: Intent): void {
    if (intent.kind !== 'spend' || intent.roomId !== this.#host.roomId) return;
    const purchase = this.#inFlight.get(intent.playerId);
    if (purchase && purchase.order === intent.description) purchase.intentId = intent.id;
  }

  /** Says so, then reads the ledger once in case it settled before anyone listened. */
  async #wait(purchase: Purchase): Promise<void> {
    this.#host.tell(purchase.playerId, {
      ok: null,
      order: purchase.order,
      message: `Your purchase of the ${purchase.item} is not confirmed yet: the payment service did not answer clearly. You will see here whether it went through.`,
    });
    const now = await this.#host.lightning.books.ledger.get(purchase.intentId as string);
    if (now && ENDED.includes(now.status)) this.#end(purchase, now.status);
  }

  #end(purchase: Purchase, outcome: Intent['status'] | 'short'): void {
    if (purchase.done) return;
    purchase.done = true;
    if (this.#inFlight.get(purchase.playerId) === purchase) {
      this.#inFlight.delete(purchase.playerId);
    }
    const { item, order } = purchase;
    if (outcome === 'completed') {
      this.#host.grant(purchase.playerId, item);
      this.#host.tell(purchase.playerId, { ok: true, order, message: `You bought the ${item}.` });
      return;
    }
    const message =
      outcome === 'short'
        ? `Not enough points for the ${item} (${purchase.price}).`
        : `The ${item} did not go through: nothing was spent. Try again.`;
    this.#host.tell(purchase.playerId, { ok: false, order, message });
  }
}
