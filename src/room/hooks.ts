/**
 * The room's side of a settlement: the hooks a room registers (`onSettled`, `onRewardClaimed`,
 * ...) and the promises that wait for one entry to end (`chargeEntryFee(...).settled`). A
 * listener that throws is logged and does not stop the others.
 */
import { EventEmitter } from 'node:events';
import type { Intent } from '../ledger/intent.js';
import type { SettledStatus } from '../server/events.js';
import type { LightningLogger } from '../server/logger.js';
import type { Entry } from './state.js';

/** What a room can listen to: any end, an end per kind and status, or any expiry. */
export type RoomEventName = 'settled' | 'expired' | `${Intent['kind']}.${SettledStatus}`;
export type RoomListener = (entry: Entry, intent: Intent) => void;

export class RoomHooks {
  readonly #events = new EventEmitter();
  readonly #waiters = new Map<string, ((entry: Entry) => void)[]>();
  readonly #logger: LightningLogger;

  constructor(logger: LightningLogger) {
    this.#logger = logger;
  }

  on(event: RoomEventName, listener: RoomListener): () => void {
    this.#events.on(event, listener);
    return () => this.#events.off(event, listener);
  }

  /** Resolves with the entry once `intentId` has ended. */
  waitFor(intentId: string): Promise<Entry> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(intentId) ?? [];
      list.push(resolve);
      this.#waiters.set(intentId, list);
    });
  }

  /** An entry ended: wake its waiters, then fire the hooks that match. */
  ended(entry: Entry, intent: Intent): void {
    const waiters = this.#waiters.get(intent.id) ?? [];
    this.#waiters.delete(intent.id);
    for (const resolve of waiters) resolve(entry);
    this.#fire('settled', entry, intent);
    this.#fire(`${intent.kind}.${intent.status}` as RoomEventName, entry, intent);
    if (intent.status === 'expired') this.#fire('expired', entry, intent);
  }

  clear(): void {
    this.#events.removeAllListeners();
    this.#waiters.clear();
  }

  #fire(event: RoomEventName, entry: Entry, intent: Intent): void {
    for (const listener of this.#events.listeners(event) as RoomListener[]) {
      try {
        listener(entry, intent);
      } catch (err) {
        this.#logger.error(`a room '${event}' listener threw: ${(err as Error).message}`);
      }
    }
  }
}
