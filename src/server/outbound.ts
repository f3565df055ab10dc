/**
 * The game's outbound scheduler: one per process, in front of every attempt the API client
 * sends when `rateLimit` is set (the transport asks it, api/outbound.ts). Calls wait for a
 * token of the game's bucket, which the ledger keeps for every process sharing it (Redis,
 * PostgreSQL; SQLite in process), rather than fail; the waiting are served a player's own
 * action first, then payouts, then re-reads, each in the order it came; a re-read takes a token
 * only when one more is left (READ_KEEP), so that re-reads in any process use the surplus of the
 * rate, never the token the next payout was about to take. A 429 writes its
 * Retry-After to the store, so that every process holds its calls until it ends.
 *
 * Footprint: one store call per token handed out, plus one per wake-up of a process that found
 * none (each process asks again when the next token is due; with N processes waiting, about N
 * calls per token); no timer while nobody waits. If the store cannot be reached, the process
 * falls back to a bucket of its own at the same rate, empty when it starts (logged once): calls
 * go on, maybe past the game's rate, and a 429 they meet is waited out as any other.
 *
 * A create takes its token before it is recorded (`reserve`), and its first attempt spends it
 * (`spend`, which marks the async context of the send): so an intent never waits in the queue
 * in status `creating`, where a reconciler that saw it past `creatingGraceMs` would think its
 * process died mid-call.
 *
 * Holds are told on the diagnostics channel `colyseus-lightning:rate` ({ event: 'hold',
 * waitMs, until }), for logs and tests.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { channel } from 'node:diagnostics_channel';
import { type CallPriority, type OutboundGate, PRIORITY_ORDER } from '../api/outbound.js';
import { type Clock, timerAt } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import { LocalRateBucket, type RateLimit, type RateStore } from '../ledger/rate.js';
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

/**
 * Tokens a re-read leaves in the game's bucket (when the burst allows): while payouts or
 * players' actions take tokens as fast as they come, in any process, re-reads wait for a
 * surplus instead of taking the token the next payout was about to.
 */
const READ_KEEP = 1;

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/** A token taken for one create, before its record: its first attempt spends it. */
export interface Ticket {
  unspent: boolean;
}

/** What a create needs of the scheduler (operations/create.ts), and the engine holds. */
export type CreateTokens = Pick<OutboundScheduler, 'reserve' | 'spend' | 'release'>;

export class OutboundScheduler implements OutboundGate {
  readonly #store: RateStore;
  readonly #limit: RateLimit;
  readonly #clock: Clock;
  readonly #logger: LightningLogger;
  readonly #queues = new Map<CallPriority, Waiter[]>(PRIORITY_ORDER.map((p) => [p, []]));
  #waiting = 0;
  #pumping = false;
  /** While the pump sleeps: for which priority, and how to wake it for a more urgent call. */
  #sleeping: { priority: CallPriority; wake(): void } | null = null;
  #closed = false;
  /** This process's own bucket, used only while the store cannot be reached. */
  #fallback: LocalRateBucket | null = null;
  /** The ticket of the create whose send runs in this async context, if any. */
  readonly #tickets = new AsyncLocalStorage<Ticket>();

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

  #wait(priority: CallPriority): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    return new Promise<void>((resolve, reject) => {
      this.#queues.get(priority)?.push({ resolve, reject });
      this.#waiting++;
      const sleeping = this.#sleeping;
      if (sleeping && rank(priority) < rank(sleeping.priority)) sleeping.wake();
      void this.#pump();
    });
  }

  async limited(waitMs: number): Promise<void> {
    const until = this.#clock.now() + Math.max(0, Math.ceil(waitMs));
    try {
      await this.#store.holdCalls(until);
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
    for (const queue of this.#queues.values()) {
      for (const waiter of queue.splice(0)) waiter.reject(closedError());
    }
    this.#waiting = 0;
  }

  /** One loop per process while calls wait: a token, then the first waiter of the first queue. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#waiting > 0 && !this.#closed) {
        const head = this.#head();
        const keep = head === 'read' ? Math.min(READ_KEEP, Math.floor(this.#limit.burst) - 1) : 0;
        const wait = await this.#take(keep);
        if (wait === 0) {
          this.#next()?.resolve();
          continue;
        }
        // A more urgent call came during the take: ask again for it, at once.
        if (rank(this.#head()) < rank(head)) continue;
        await this.#sleep(wait, head);
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Sleeps until the token is due, or until a call more urgent than `head` comes. */
  #sleep(ms: number, head: CallPriority): Promise<void> {
    return new Promise<void>((resolve) => {
      // Kept alive while it runs (calls wait on it), cancelled when woken early.
      const cancel = timerAt(this.#clock, this.#clock.now() + ms, resolve, true);
      this.#sleeping = {
        priority: head,
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

  /** The priority of the call served next. */
  #head(): CallPriority {
    for (const priority of PRIORITY_ORDER) {
      if ((this.#queues.get(priority)?.length ?? 0) > 0) return priority;
    }
    return 'read';
  }

  #next(): Waiter | undefined {
    for (const priority of PRIORITY_ORDER) {
      const waiter = this.#queues.get(priority)?.shift();
      if (waiter) {
        this.#waiting--;
        return waiter;
      }
    }
    return undefined;
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

function rank(priority: CallPriority): number {
  return PRIORITY_ORDER.indexOf(priority);
}

function closedError(): ConfigurationError {
  return new ConfigurationError('PaymentsApi', 'is closed; nothing was sent');
}
