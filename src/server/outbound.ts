/**
 * The game's outbound scheduler: one per process, in front of every attempt the API client sends
 * when `rateLimit` is set (port/gate.ts). Calls wait for a token of the game's bucket, kept in
 * the ledger for every process sharing it, rather than fail; a 429's Retry-After is written there
 * too, so every process holds its calls until it ends. Who goes first (docs/DEPLOY.md):
 * - players' actions (`asPlayer`), fairly: players who took few tokens lately are served in the
 *   order they waited, heavier ones after them, the lightest first;
 * - payouts, in order, with a floor: one after every PLAYERS_PER_PAYOUT players' tokens;
 * - re-reads, only from a surplus (READ_KEEP), never the token the next payout was about to take.
 * Payouts, re-reads and heavy players leave PLAYER_KEEP tokens, so a player who comes finds one.
 * A create takes its token before it is recorded (`reserve`) and its first attempt spends it, so
 * no intent waits in `creating` (which the reconciler would take for a dead process).
 *
 * Footprint: one store call per token (about one per waiting process per token when several
 * wait); no timer while nobody waits; one small record per player served lately. If the store
 * cannot be reached, a bucket of this process's own at the same rate, empty at first (logged).
 * Holds are told on the diagnostics channel `colyseus-lightning:rate`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { channel } from 'node:diagnostics_channel';
import { type Clock, timerAt } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import { LocalRateBucket, type RateLimit, type RateStore } from '../ledger/rate.js';
import type { CallPriority, OutboundGate } from '../port/gate.js';
import type { LightningLogger } from './logger.js';

export const RATE_CHANNEL = 'colyseus-lightning:rate';

export interface RateEvent {
  event: 'hold';
  /** What the service asked to wait, in ms. */
  waitMs: number;
  /** Epoch ms on this process's clock: no call before it. */
  until: number;
}

const rateChannel = channel(RATE_CHANNEL);

/** Tokens a re-read leaves in the bucket (as the burst allows): re-reads take only a surplus. */
const READ_KEEP = 1;

/** While players and payouts both wait, this many tokens go to players, then one to a payout. */
const PLAYERS_PER_PAYOUT = 3;

/** Tokens payouts, re-reads and heavy players leave (as the burst allows) for one who comes. */
const PLAYER_KEEP = 2;

/**
 * Tokens' time without a payout served, from which the next payout leaves no token: players of
 * the game's other processes, sharing the bucket, would take those left.
 */
const STARVED_TOKENS = 4;

/** Tokens lately (decayed) from which a player leaves PLAYER_KEEP, as payouts do. */
const HEAVY_USE = 8;

/** The turn of players' calls made outside any player's context (the game's own calls). */
const NO_PLAYER = '';

/** How fast a player's use of the rate is forgotten (equal again after a few quiet half-lives). */
const USE_HALF_LIFE_MS = 10_000;

/** Players whose use a process remembers (the one served longest ago is forgotten first). */
const REMEMBERED_PLAYERS = 10_000;

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/** A token taken for one create, before its record: its first attempt spends it. */
export interface Ticket {
  unspent: boolean;
}

/** What a create needs of the scheduler (operations/create.ts), and the engine holds. */
export type CreateTokens = Pick<OutboundScheduler, 'reserve' | 'spend' | 'release' | 'asPlayer'>;

/**
 * Runs `work` on behalf of the player who waits on it: with the game's rate, its calls wait in
 * that player's turn among players, re-reads included; without one, at once.
 */
export function asPlayer<T>(
  outbound: Pick<CreateTokens, 'asPlayer'> | null,
  playerId: string,
  work: () => Promise<T>,
): Promise<T> {
  return outbound ? outbound.asPlayer(playerId, work) : work();
}

export class OutboundScheduler implements OutboundGate {
  readonly #store: RateStore;
  readonly #limit: RateLimit;
  readonly #clock: Clock;
  readonly #logger: LightningLogger;
  /** Players' calls by player; the Map's order: who waits longest first. */
  readonly #players = new Map<string, Waiter[]>();
  /** Each player's tokens lately (decayed from `at`), the one served longest ago first. */
  readonly #use = new Map<string, { tokens: number; at: number }>();
  readonly #payouts: Waiter[] = [];
  /** When a payout last got a token, or the payouts' line last started (this process's clock). */
  #payoutServedAt = 0;
  readonly #reads: Waiter[] = [];
  /** Tokens players took in a row while payouts waited. */
  #playerRun = 0;
  #waiting = 0;
  #pumping = false;
  /** While the pump sleeps: for which priority, and how to wake it for a more urgent call. */
  #sleeping: { keep: number; wake(): void } | null = null;
  #closed = false;
  /** This process's own bucket, used only while the store cannot be reached. */
  #fallback: LocalRateBucket | null = null;
  /** The ticket of the create whose send runs in this async context, if any. */
  readonly #tickets = new AsyncLocalStorage<Ticket>();
  /** The player who waits on the calls of this async context, if any (`asPlayer`). */
  readonly #party = new AsyncLocalStorage<string>();

  constructor(deps: {
    store: RateStore;
    limit: RateLimit;
    clock: Clock;
    logger: LightningLogger;
  }) {
    this.#store = deps.store;
    this.#limit = deps.limit;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
  }

  /** Calls waiting for a token, in this process. */
  get waiting(): number {
    return this.#waiting;
  }

  acquire(priority: CallPriority): Promise<void> {
    const ticket = this.#tickets.getStore();
    if (ticket?.unspent) {
      ticket.unspent = false;
      return Promise.resolve();
    }
    return this.#wait(priority);
  }

  /**
   * Runs `work` on behalf of `playerId`, who waits on it: its calls wait in that player's turn
   * among players, and its re-reads are served as the player's action, not as background reads
   * (payouts stay payouts).
   */
  asPlayer<T>(playerId: string, work: () => T): T {
    return this.#party.run(playerId, work);
  }

  /** Waits for a create's token, before the create is recorded. */
  async reserve(priority: CallPriority): Promise<Ticket> {
    await this.#wait(priority);
    return { unspent: true };
  }

  /** Runs a create's send holding its ticket: the first attempt goes without waiting again. */
  spend<T>(ticket: Ticket, send: () => Promise<T>): Promise<T> {
    return this.#tickets.run(ticket, send);
  }

  /**
   * A ticket no attempt spent (the record was refused, or found an open intent): its token goes
   * to the first call waiting now, if any; kept for later, it would let a burst past the bucket.
   */
  release(ticket: Ticket): void {
    if (!ticket.unspent) return;
    ticket.unspent = false;
    this.#next()?.resolve();
  }

  #wait(asked: CallPriority): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    const party = this.#party.getStore();
    const priority = party !== undefined && asked === 'read' ? 'player' : asked;
    return new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (priority === 'player') {
        const key = party ?? NO_PLAYER;
        const turn = this.#players.get(key);
        if (turn) turn.push(waiter);
        else this.#players.set(key, [waiter]);
      } else {
        if (priority === 'payout' && this.#payouts.length === 0) {
          this.#payoutServedAt = this.#clock.now();
        }
        (priority === 'payout' ? this.#payouts : this.#reads).push(waiter);
      }
      this.#waiting++;
      const sleeping = this.#sleeping;
      if (sleeping && this.#keep() < sleeping.keep) sleeping.wake();
      void this.#pump();
    });
  }

  async limited(waitMs: number): Promise<void> {
    const now = this.#clock.now();
    const until = now + Math.max(0, Math.ceil(waitMs));
    try {
      await this.#store.holdCalls(until, now);
    } catch (err) {
      this.#storeFailed(err);
      await this.#local(this.#clock.now()).holdCalls(until);
    }
    if (rateChannel.hasSubscribers) {
      rateChannel.publish({ event: 'hold', waitMs, until } satisfies RateEvent);
    }
  }

  /** Every waiting call rejects (the client is closing); later ones at once. */
  close(): void {
    this.#closed = true;
    this.#sleeping?.wake();
    const all = [...[...this.#players.values()].flat(), ...this.#payouts, ...this.#reads];
    this.#players.clear();
    this.#payouts.length = 0;
    this.#reads.length = 0;
    this.#waiting = 0;
    for (const waiter of all) waiter.reject(closedError());
  }

  /** One loop per process while calls wait: a token, then the waiter whose turn it is. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#waiting > 0 && !this.#closed) {
        const keep = this.#keep();
        const wait = await this.#take(keep);
        if (wait === 0) {
          this.#next()?.resolve();
          continue;
        }
        // A call that may take more of the bucket came during the take: ask again, at once.
        if (this.#keep() < keep) continue;
        await this.#sleep(wait, keep);
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Sleeps until the token is due, or until a call that may leave fewer than `keep` comes. */
  #sleep(ms: number, keep: number): Promise<void> {
    return new Promise<void>((resolve) => {
      // Kept alive while it runs (calls wait on it), cancelled when woken early.
      const cancel = timerAt(this.#clock, this.#clock.now() + ms, resolve, true);
      this.#sleeping = {
        keep,
        wake: () => {
          cancel();
          resolve();
        },
      };
    }).finally(() => {
      this.#sleeping = null;
    });
  }

  async #take(keep: number): Promise<number> {
    const now = this.#clock.now();
    try {
      const wait = await this.#store.takeToken(this.#limit, now, keep);
      if (this.#fallback !== null) {
        this.#logger.info('outbound rate: the store answers again; the game shares one bucket');
        this.#fallback = null;
      }
      return wait;
    } catch (err) {
      this.#storeFailed(err);
      return this.#local(now).takeToken(this.#limit, now, keep);
    }
  }

  /**
   * The class served next: players, but a payout after every PLAYERS_PER_PAYOUT tokens while
   * payouts wait (after one more when the player next in line took few); then re-reads.
   */
  #turn(): CallPriority | null {
    const payouts = this.#payouts.length > 0;
    if (this.#players.size > 0) {
      if (!payouts || this.#playerRun < PLAYERS_PER_PAYOUT) return 'player';
      // One token of slack for a player who took few (someone who just came, served from the
      // tokens left for them): the payout goes next, never later.
      const light = this.#lightest(this.#clock.now()).use < HEAVY_USE;
      if (light && this.#playerRun < PLAYERS_PER_PAYOUT + 1) return 'player';
    }
    if (payouts) return 'payout';
    return this.#reads.length > 0 ? 'read' : null;
  }

  /**
   * How many tokens the call served next leaves in the bucket (as the burst allows): none for a
   * player who took few lately; PLAYER_KEEP for payouts and for players who took many, so that
   * a player who comes finds a token at once; one more for re-reads, which take the surplus.
   */
  #keep(): number {
    const burst = Math.floor(this.#limit.burst);
    const leave = Math.max(0, Math.min(PLAYER_KEEP, burst - 1 - READ_KEEP));
    const turn = this.#turn();
    if (turn === 'player') {
      return this.#lightest(this.#clock.now()).use >= HEAVY_USE ? leave : 0;
    }
    if (turn === 'payout') {
      // Other processes' players take the tokens left for whoever comes: a payout that waited
      // STARVED_TOKENS tokens' time for one leaves none, and the queue keeps its share.
      const starvedMs = (STARVED_TOKENS * 1_000) / this.#limit.perSecond;
      return this.#clock.now() - this.#payoutServedAt >= starvedMs ? 0 : leave;
    }
    return Math.max(0, Math.min(leave + READ_KEEP, burst - 1));
  }

  #next(): Waiter | undefined {
    const turn = this.#turn();
    let waiter: Waiter | undefined;
    if (turn === 'player') {
      waiter = this.#nextPlayer();
      if (this.#payouts.length > 0) this.#playerRun++;
    } else if (turn === 'payout') {
      waiter = this.#payouts.shift();
      this.#playerRun = 0;
      this.#payoutServedAt = this.#clock.now();
    } else if (turn === 'read') {
      waiter = this.#reads.shift();
    }
    if (waiter) this.#waiting--;
    return waiter;
  }

  /**
   * The first call of the waiting player who took the fewest tokens lately (their use decays by
   * half every USE_HALF_LIFE_MS); of equals, the one waiting longest. Then that player goes to
   * the end of the line of equals.
   */
  #nextPlayer(): Waiter | undefined {
    const now = this.#clock.now();
    const { party: chosen, use: least } = this.#lightest(now);
    if (chosen === undefined) return undefined;
    const turn = this.#players.get(chosen) ?? [];
    this.#players.delete(chosen);
    const waiter = turn.shift();
    if (turn.length > 0) this.#players.set(chosen, turn);
    this.#use.delete(chosen);
    this.#use.set(chosen, { tokens: least + 1, at: now });
    for (const oldest of this.#use.keys()) {
      if (this.#use.size <= REMEMBERED_PLAYERS) break;
      this.#use.delete(oldest);
    }
    return waiter;
  }

  /** The waiting player who took the fewest tokens lately (of equals, the one waiting longest). */
  #lightest(now: number): { party: string | undefined; use: number } {
    let party: string | undefined;
    let least = Number.POSITIVE_INFINITY;
    let rank = Number.POSITIVE_INFINITY;
    for (const waiting of this.#players.keys()) {
      const use = this.#useOf(waiting, now);
      // Below HEAVY_USE players are equals, served in the order they waited: a player on the
      // third step of a visit is not passed by every newcomer (whose use is 0); only a flood
      // (HEAVY_USE and more) goes after them.
      const weight = use < HEAVY_USE ? 0 : use;
      if (weight < rank) {
        rank = weight;
        least = use;
        party = waiting;
        // None comes before the first light player: the common case reads one or two.
        if (weight === 0) break;
      }
    }
    return { party, use: least };
  }

  /** A player's tokens lately, decayed to `now`. */
  #useOf(party: string, now: number): number {
    const use = this.#use.get(party);
    if (use === undefined) return 0;
    return use.tokens * 0.5 ** (Math.max(0, now - use.at) / USE_HALF_LIFE_MS);
  }

  /** The fallback, made empty at `now`: the shared bucket was likely spent (a full one would burst). */
  #local(now: number): LocalRateBucket {
    this.#fallback ??= new LocalRateBucket({ emptyAt: now });
    return this.#fallback;
  }

  #storeFailed(err: unknown): void {
    if (this.#fallback !== null) return;
    this.#logger.warn(
      `outbound rate: the store failed (${(err as Error).message}); this process keeps its own bucket until it answers again`,
    );
  }
}

function closedError(): ConfigurationError {
  return new ConfigurationError('PaymentsApi', 'is closed; nothing was sent');
}
