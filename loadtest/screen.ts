/**
 * A bot's connection and its screen: an @colyseus/sdk room joined through one process's
 * matchmaker (the next one if that process does not answer), or a table's seat given by the
 * tables' queue, the entries its client decoded
 * (its own only), and a wait for what the screen should show, given up on a drop or after a
 * limit.
 *
 * Cost per screen: one WebSocket and its decoded state.
 */
import { ColyseusSDK, type Room as SdkRoom } from '@colyseus/sdk';

type SeatReservation = Parameters<ColyseusSDK['consumeSeatReservation']>[0];

/** An entry as the bot's client decodes it. */
export interface Seen {
  id: string;
  kind: 'entryFee' | 'reward';
  status: string;
  code: string;
  purpose: string;
}

type EntryMap = {
  forEach(cb: (value: Omit<Seen, 'id' | 'kind'>, key: string) => void): void;
};
interface ClientState {
  lightning?: { rewards?: EntryMap; entryFees?: EntryMap };
}

/** What a bot's wait is given up on. */
export class Gone extends Error {}

/** The queue gave a seat at a table whose process is gone (killed): the player queues again. */
export class Unseated extends Error {}

/** One connection and what its screen shows, with a way to wait for what it should show. */
export class Screen {
  readonly room: SdkRoom;
  #dropped = false;
  readonly #waiters = new Set<() => void>();

  constructor(room: SdkRoom) {
    this.room = room;
    room.reconnection.enabled = false;
    room.onStateChange(() => this.#poke());
    const gone = () => {
      this.#dropped = true;
      this.#poke();
    };
    room.onLeave(gone);
    room.onDrop(gone);
  }

  get dropped(): boolean {
    return this.#dropped;
  }

  /** Something changed: waiters look again. */
  poke(): void {
    this.#poke();
  }

  #poke(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  entries(): Seen[] {
    const lightning = (this.room.state as ClientState | undefined)?.lightning;
    const all: Seen[] = [];
    for (const [kind, map] of [
      ['entryFee', lightning?.entryFees],
      ['reward', lightning?.rewards],
    ] as const) {
      map?.forEach((e, id) => {
        all.push({ id, kind, status: e.status, code: e.code, purpose: e.purpose });
      });
    }
    return all;
  }

  /** Resolves with `check`'s first truthy answer; rejects with Gone on a drop or after `ms`. */
  until<T>(check: () => T | undefined | null | false, ms: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const look = () => {
        const value = check();
        if (value) {
          done();
          resolve(value);
        } else if (this.#dropped) {
          done();
          reject(new Gone('dropped'));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Gone(`no ${what} within ${ms} ms`));
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(look);
      };
      this.#waiters.add(look);
      look();
    });
  }

  async leave(): Promise<void> {
    if (this.#dropped) return;
    this.#dropped = true;
    await this.room.leave(true).catch(() => {});
  }
}

/**
 * Joins a room by its id through one process's matchmaker, starting with `first`; a process that
 * does not answer (killed, say) is skipped for the next, as a load balancer would.
 */
async function joinById(
  urls: readonly string[],
  first: number,
  roomId: string,
  playerId: string,
): Promise<{ sdk: ColyseusSDK; room: SdkRoom }> {
  let last: unknown;
  for (let k = 0; k < urls.length; k++) {
    try {
      const sdk = new ColyseusSDK(
        (urls[(first + k) % urls.length] as string).replace(/^http/, 'ws'),
      );
      return { sdk, room: await sdk.joinById(roomId, { playerId }) };
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

/** Joins a room by its id (the tournament's hall) through any process. */
export async function joinAny(
  urls: readonly string[],
  first: number,
  roomId: string,
  playerId: string,
): Promise<Screen> {
  return new Screen((await joinById(urls, first, roomId, playerId)).room);
}

/**
 * Waits in the tables' queue (joined through any process) for the seat it reserves once it has
 * formed a table, and takes that seat; gives up after `ms`.
 */
export async function joinQueued(
  urls: readonly string[],
  first: number,
  queueId: string,
  playerId: string,
  ms: number,
): Promise<Screen> {
  const { sdk, room: queue } = await joinById(urls, first, queueId, playerId);
  let timer: NodeJS.Timeout | undefined;
  try {
    const seat = await new Promise<SeatReservation>((resolve, reject) => {
      queue.onMessage('clients', () => {});
      queue.onMessage('seat', (reservation: SeatReservation) => resolve(reservation));
      queue.onLeave((code) => reject(new Gone(`the queue closed (${code})`)));
      timer = setTimeout(() => reject(new Gone(`no table within ${ms} ms`)), ms);
    });
    const table = await sdk.consumeSeatReservation(seat).catch((err: Error) => {
      throw new Unseated(`the table's process did not take the seat: ${err.message}`);
    });
    // The queue lets the player go.
    queue.send('confirm');
    return new Screen(table);
  } finally {
    clearTimeout(timer);
    await queue.leave(true).catch(() => {});
  }
}
