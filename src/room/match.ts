/**
 * A match in a room: what `this.plugins.lightning.openMatch(...)` resolves with.
 *
 *   const match = await this.plugins.lightning.openMatch({ entryFeeMsat: 100_000, rake: 0.1, seats: 2 });
 *   await match.enter(client);                // one fee per player, never charged twice
 *   match.onFunded(() => this.startRound());  // both seats paid
 *   await match.settle({ [winnerId]: 1 });    // the pot minus the rake, paid once
 *
 * Every client sees it in `state.lightning.matches` until `lingerMs` after it ended. Cost: one
 * keep-alive timer per open match; a dead process's match is aborted after its timeout.
 */
import type { Client, Clock as RoomClock } from '@colyseus/core';
import { ConfigurationError } from '../errors.js';
import { parseInput } from '../parse.js';
import { reasonInput, type Shares, sharesInput } from '../server/match/terms.js';
import type { MatchView } from '../server/match/view.js';
import type { MatchCalls } from './host.js';
import { matchEntryArgs } from './inputs.js';
import { type ChargedEntryFee, type LightningState, Match } from './state.js';

type Delayed = ReturnType<RoomClock['setInterval']>;

export interface MatchEntryOptions {
  /** The player's Lightning address (LUD-16), for their payout or refund. */
  lnAddress?: string;
}

export interface RoomMatchDeps {
  calls: MatchCalls;
  /** Charges the client's fee into this match and shows it to them. */
  enter(match: RoomMatch, client: Client, options: MatchEntryOptions): Promise<ChargedEntryFee>;
  state: () => LightningState | undefined;
  clock: RoomClock;
  /** How long an ended match stays in the state, so every screen shows how it ended. */
  lingerMs: number;
  /** The match ended and left the state: the room forgets it. */
  onGone(matchId: string): void;
  onError(message: string): void;
}

export class RoomMatch {
  readonly id: string;
  #view: MatchView;
  readonly #deps: RoomMatchDeps;
  readonly #funded: (() => void)[] = [];
  #firedFunded = false;
  readonly #closed: ((view: MatchView) => void)[] = [];
  #firedClosed = false;
  #alive: Delayed | undefined;
  #leaving = false;
  /** The read of the match in flight, and the one queued after it (refresh). */
  #reading: Promise<MatchView> | undefined;
  #queued: Promise<MatchView> | undefined;

  constructor(view: MatchView, deps: RoomMatchDeps, timeoutMs: number) {
    this.id = view.id;
    this.#view = view;
    this.#deps = deps;
    this.#firedClosed = view.status !== 'open';
    this.#sync();
    this.#alive = deps.clock.setInterval(
      () =>
        void deps.calls
          .keepAlive(this.id)
          .catch((err: Error) => deps.onError(`keeping match ${this.id} alive: ${err.message}`)),
      Math.max(1_000, Math.floor(timeoutMs / 3)),
    );
  }

  /** The match as last seen (pot, players, payouts, refunds). */
  get view(): MatchView {
    return this.#view;
  }

  /**
   * Charges the player's entry fee, once (an open or paid fee of theirs is returned); with
   * `lnAddress` (from their own account, never a room message), their payout goes straight to it.
   */
  async enter(client: Client, options?: MatchEntryOptions): Promise<ChargedEntryFee> {
    const args = parseInput(matchEntryArgs, options, 'options');
    return this.#deps.enter(this, client, args);
  }

  /** Called once the roster (`players`, or `seats` players) has paid, at once if it has. */
  onFunded(listener: () => void): () => void {
    if (this.#view.seats === 0) {
      throw new ConfigurationError(
        'openMatch',
        `match ${this.id} was opened without players or seats, so it is never funded: open it with openMatch({ ..., seats: n }) or openMatch({ ..., players: [...] }) to use onFunded`,
      );
    }
    return this.#listen(this.#funded, this.#firedFunded, listener, 'onFunded');
  }

  /** Called once the match takes no more entries (decided by anyone, or timed out). */
  onClosed(listener: (view: MatchView) => void): () => void {
    return this.#listen(this.#closed, this.#firedClosed, listener, 'onClosed');
  }

  #listen<L extends (view: MatchView) => void>(
    list: L[],
    fired: boolean,
    listener: L,
    hook: string,
  ): () => void {
    if (fired) queueMicrotask(() => this.#call(listener, hook));
    else list.push(listener);
    return () => {
      const at = list.indexOf(listener);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** Pays shares of the pot minus the rake, e.g. `{ [winnerId]: 1 }`, once. */
  async settle(shares: Shares): Promise<MatchView> {
    const wanted = parseInput(sharesInput, shares, 'shares');
    const view = await this.#deps.calls.settle(this.id, wanted);
    this.update(view);
    return view;
  }

  /** Refunds every paid fee and closes every open one; idempotent (refused once settled). */
  async abort(reason: string): Promise<MatchView> {
    const why = parseInput(reasonInput, reason, 'reason');
    const view = await this.#deps.calls.abort(this.id, why);
    this.update(view);
    return view;
  }

  /**
   * Reads the match again. Calls during a read share the one read queued after it (the one in
   * flight may be older than they need): a read costs O(players), asked on each fee's move.
   */
  refresh(): Promise<MatchView> {
    if (!this.#reading) return this.#read();
    this.#queued ??= this.#reading
      .catch(() => {})
      .then(() => {
        this.#queued = undefined;
        return this.#read();
      });
    return this.#queued;
  }

  #read(): Promise<MatchView> {
    const reading = (async () => {
      const view = await this.#deps.calls.view(this.id);
      this.update(view);
      return view;
    })();
    this.#reading = reading;
    const done = () => {
      if (this.#reading === reading) this.#reading = undefined;
    };
    reading.then(done, done);
    return reading;
  }

  /** Takes a newer view: the synced entry, the funded listeners, the keep-alive timer. */
  update(view: MatchView): void {
    if (view.updatedAt < this.#view.updatedAt && view.status === this.#view.status) return;
    this.#view = view;
    this.#sync();
    if (view.status !== 'open') this.stop();
    if ((view.status === 'settled' || view.status === 'aborted') && !this.#leaving) {
      this.#leaving = true;
      this.#deps.clock.setTimeout(() => {
        this.#deps.state()?.matches.delete(this.id);
        this.#deps.onGone(this.id);
      }, this.#deps.lingerMs);
    }
    if (view.funded && view.status === 'open' && !this.#firedFunded) {
      this.#firedFunded = true;
      for (const listener of this.#funded.splice(0)) this.#call(listener, 'onFunded');
    }
    if (view.status !== 'open' && !this.#firedClosed) {
      this.#firedClosed = true;
      for (const listener of this.#closed.splice(0)) this.#call(listener, 'onClosed');
    }
  }

  #call(listener: (view: MatchView) => void, hook: string): void {
    try {
      listener(this.#view);
    } catch (err) {
      this.#deps.onError(`a match ${hook} listener threw: ${(err as Error).message}`);
    }
  }

  /** Stops keeping the match alive (it was decided, or the room goes away). */
  stop(): void {
    this.#alive?.clear();
    this.#alive = undefined;
  }

  #sync(): void {
    const state = this.#deps.state();
    if (!state) return;
    const v = this.#view;
    let entry = state.matches.get(v.id);
    if (!entry) {
      entry = new Match();
      entry.id = v.id;
      state.matches.set(v.id, entry);
    }
    entry.status = v.status;
    entry.entryFeeMsat = v.entryFeeMsat;
    entry.potMsat = v.potMsat;
    entry.rakeMsat = v.rakeMsat ?? '';
    entry.rake = v.rake;
    entry.entered = v.entered;
    entry.paid = v.paid;
    entry.made = Math.min(v.made, 65_535);
    entry.total = Math.min(v.total, 65_535);
    entry.seats = v.seats;
    entry.funded = v.funded;
    entry.reason = v.reason ?? '';
    entry.updatedAt = v.updatedAt;
  }
}
