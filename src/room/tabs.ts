/**
 * Players' tabs in a room (docs/MATCHES.md): each player's balance as the journal holds it, in the
 * room's state and in their own StateView only (what a player has earned is theirs to see);
 * and when each client joined, by the server's clock, which a credit waits for.
 *
 * Cost: per move that touches a tab, one read of one balance row; per client one number. A
 * room that never credits holds no tab (a player with an empty tab gets no entry).
 */
import type { Client, Room } from '@colyseus/core';
import { StateView } from '@colyseus/schema';
import { TimeInRoomError } from '../errors.js';
import { LedgerError } from '../ledger/errors.js';
import type { LightningState } from './state.js';
import { Tab } from './state.js';

export interface TabsDeps {
  room: Room;
  state(): LightningState | undefined;
  /** The player id of a connected client, or undefined. */
  owner(client: Client): string | undefined;
  /** The msats in a player's tab now. */
  read(playerId: string): Promise<number>;
  /** The server's clock, epoch ms. */
  now(): number;
  /** Told after a balance changed in the state (the room's immediate patch). */
  changed(): void;
  warn(message: string): void;
}

/** The reads of one player's tab: the latest issued, the latest written, the one to await. */
interface Reads {
  issued: number;
  written: number;
  last: Promise<Tab | undefined>;
}

export class RoomTabs {
  readonly #deps: TabsDeps;
  /** Each player's key in `tabs`: the room's own, never the player's id. */
  readonly #keys = new Map<string, string>();
  #nextKey = 0;
  readonly #reads = new Map<string, Reads>();
  /** When each client (by session) joined, by the server's clock. */
  readonly #joinedAt = new Map<string, number>();

  constructor(deps: TabsDeps) {
    this.#deps = deps;
  }

  joined(client: Client): void {
    this.#joinedAt.set(client.sessionId, this.#deps.now());
  }

  /** Forgets a client that left, and the player's tab once no client of theirs is in the room. */
  left(client: Client, playerId: string | undefined): void {
    this.#joinedAt.delete(client.sessionId);
    if (playerId === undefined || this.present(playerId, client)) return;
    const key = this.#keys.get(playerId);
    this.#keys.delete(playerId);
    this.#reads.delete(playerId);
    if (key !== undefined) this.#deps.state()?.tabs.delete(key);
  }

  /** Whether a client of `playerId` other than `leaving` is in the room. */
  present(playerId: string, leaving?: Client): boolean {
    for (const client of this.#deps.room.clients) {
      if (client !== leaving && this.#deps.owner(client) === playerId) return true;
    }
    return false;
  }

  /**
   * Refuses a credit to a client in the room less than `minMs` (TimeInRoomError). A client the
   * plugin never saw join (a room whose plugin hooks Colyseus skipped) counts from now.
   */
  admit(client: Client, playerId: string, minMs: number): void {
    if (minMs === 0) return;
    const now = this.#deps.now();
    const joinedAt = this.#joinedAt.get(client.sessionId) ?? now;
    this.#joinedAt.set(client.sessionId, joinedAt);
    if (now - joinedAt < minMs) throw new TimeInRoomError(playerId, now - joinedAt, minMs);
  }

  /** Adds the player's tab, if they have one here, to a (re)joining client's view. */
  showTo(client: Client, playerId: string): void {
    const tab = this.#entry(playerId);
    if (!tab) return;
    client.view ??= new StateView();
    client.view.add(tab);
  }

  /**
   * Reads the player's tab and writes it into the state; resolves with its entry (undefined:
   * an empty tab never credited here). Reads finish in any order: one issued before the last
   * written is dropped, so the state never goes back to an older balance.
   */
  refresh(playerId: string): Promise<Tab | undefined> {
    const reads = this.#reads.get(playerId) ?? {
      issued: 0,
      written: 0,
      last: Promise.resolve(undefined),
    };
    this.#reads.set(playerId, reads);
    const seq = ++reads.issued;
    reads.last = this.#deps
      .read(playerId)
      .then(
        (balance) => {
          if (seq < reads.written || this.#reads.get(playerId) !== reads) {
            return this.#entry(playerId);
          }
          reads.written = seq;
          return this.#write(playerId, balance);
        },
        (err: Error) => {
          this.#deps.warn(`reading the tab of ${playerId}: ${err.message}`);
          return this.#entry(playerId);
        },
      )
      .finally(() => {
        // A player not here keeps nothing in memory (a move after they left, a withdrawal's).
        if (!this.#keys.has(playerId) && !this.present(playerId)) this.#reads.delete(playerId);
      });
    return reads.last;
  }

  /** The read issued last for the player (their latest move's), or a new one. */
  latest(playerId: string): Promise<Tab | undefined> {
    return this.#reads.get(playerId)?.last ?? this.refresh(playerId);
  }

  /**
   * The player's tab once their latest move is read, after a credit: it has one. A read that
   * failed is tried once more, and then its error is the caller's.
   */
  async after(playerId: string): Promise<Tab> {
    const tab =
      (await this.latest(playerId)) ?? this.#write(playerId, await this.#deps.read(playerId));
    if (tab === undefined) throw new LedgerError(`the tab of ${playerId} is empty after a credit`);
    return tab;
  }

  #entry(playerId: string): Tab | undefined {
    const key = this.#keys.get(playerId);
    return key === undefined ? undefined : this.#deps.state()?.tabs.get(key);
  }

  #write(playerId: string, balance: number): Tab | undefined {
    const state = this.#deps.state();
    if (!state) return undefined;
    const text = String(balance);
    const known = this.#entry(playerId);
    if (known) {
      if (known.balance !== text) {
        known.balance = text;
        this.#deps.changed();
      }
      return known;
    }
    // A tab appears for a player here with something in it; one who left gets it on rejoin.
    if (balance === 0 || !this.present(playerId)) return undefined;
    const tab = new Tab();
    tab.balance = text;
    tab.playerId = playerId;
    const key = `t${++this.#nextKey}`;
    this.#keys.set(playerId, key);
    state.tabs.set(key, tab);
    for (const client of this.#deps.room.clients) {
      if (this.#deps.owner(client) === playerId) this.showTo(client, playerId);
    }
    this.#deps.changed();
    return tab;
  }
}
