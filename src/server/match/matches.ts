/**
 * Matches: a pot held in escrow, paid out or refunded exactly once, whatever crashes.
 *
 * A match is a ledger record (an intent of kind `match`, see terms.ts for its `meta`), and its
 * fees, payouts and refunds are ordinary intents whose `groupId` is the match's id:
 *
 *   open (creating) --settle/abort, by compare-and-set--> settling|aborting (pending)
 *     --every payout or refund created, every fee closed--> settled (completed) | aborted (failed)
 *
 * - The pot is the sum of the fees the ledger saw paid when the match was decided; their ids
 *   are kept in the decision. A fee paid later (into a decided match, or after its own
 *   deadline) is refunded to its player.
 * - Payouts and refunds have fixed ids (`<match>:payout:<player>`, `<fee>:refund`), so a second
 *   attempt (another process, the reconciler after a crash) is a duplicate the ledger refuses,
 *   never a second payment. One whose create answer was lost and whose code nobody saw ends
 *   expired by the ledger's own rule; it is then issued again (`...:2`, at most 3 attempts).
 * - The first decision stands: the same settle (same shares) or abort again is answered with
 *   it, anything else is refused with a MatchClosedError naming it, in whichever process.
 * - An entry is returned only if the match was still open once its fee was in the ledger (read
 *   again after the create); one that lost the race to a decision has its charge closed and is
 *   refused, and a payment that slipped in is refunded as paid into a decided match.
 * - Seats are the ledger's: each fee's create takes its player's seat in the same atomic step
 *   (CreateGuards.seat), so the last seat goes to one player whatever the processes, and an
 *   entry reads the match and the player's seat, never the group.
 * - A decided match is due in the reconciler until it is finished, so a process that dies
 *   halfway is finished by another. An open match times out at its `expiresAt`: while its room
 *   lives, the room pushes the timeout forward; once nobody does, the reconciler aborts it and
 *   every paid fee is refunded. A fee paid into it makes it due at once, in the move's own
 *   atomic step, so `funded` follows from the ledger: whichever process looks next marks it.
 *
 * Its calls take what the schemas of terms.ts return, parsed once where the call entered (a
 * method of `lightning`, the room); the fees, payouts and refunds it starts are built from the
 * match's record of those terms, and their operations parse nothing again.
 *
 * Footprint: per call a few ledger reads of the match's group, but an entry: two keyed reads
 * (the match, the player's seat) and its fee's create; no timers (the reconciler and the rooms
 * drive it).
 */
import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { timerAt } from '../../clock.js';
import {
  InvalidArgumentError,
  LimitExceededError,
  LnAddressRefusedError,
  MatchClosedError,
  MatchSeatError,
} from '../../errors.js';
import { DuplicateIntentError, InvalidIntentError } from '../../ledger/errors.js';
import { type Intent, isTerminal } from '../../ledger/intent.js';
import {
  attemptOf,
  MAX_PAYOUT_ATTEMPTS,
  reissuedByOperator,
  wasShown,
} from '../../ledger/journal.js';
import type { SeatGuard } from '../../ledger/store.js';
import { refuseBlocked } from '../blocked.js';
import type { Engine } from '../engine.js';
import { entryFee, startEntryFee } from '../kinds/entry-fee.js';
import { type EntryFeeIntent, isEntryFee } from '../kinds/guards.js';
import { decisionOf, isMatch, type MatchIntent, newMatch, termsOf } from '../kinds/match.js';
import { startAddressPayment } from '../kinds/payment.js';
import { startReward } from '../kinds/reward.js';
import type { Move, Moves } from '../moves.js';
import { isAmbiguous } from '../operations/outcome.js';
import {
  type MatchDecision,
  type MatchTerms,
  type ParsedEnter,
  type ParsedOpenMatch,
  type Shares,
  seatsOf,
  splitPot,
} from './terms.js';
import {
  type MatchView,
  matchStatus,
  paidFees,
  replacedFees,
  rosterPaid,
  seated,
  viewOf,
} from './view.js';

/** How soon a decided match that could not finish is looked at again. */
const RETRY_MS = 15_000;

/**
 * How long payouts of a queue made one after the other wait for one look at their match: the
 * look reads the whole group, so one per payout of a thousand-winner queue would cost more than
 * the queue's own sends.
 */
const PROGRESS_LOOK_MS = 1_000;

/**
 * Payouts a settle records for its queue at once. Each record is a round trip to the ledger;
 * one after the other, they (not the game's rate) set the queue's pace: the drains of every
 * process send each payout as soon as it is recorded.
 */
const RECORDING_LANES = 8;

export class Matches {
  readonly #engine: Engine;
  /**
   * For each match, the finish running in this process and the one waiting to run after it
   * (which any later call shares: it will read what that call saw, and more).
   */
  readonly #finishing = new Map<
    string,
    { current: Promise<MatchView>; next?: Promise<MatchView> }
  >();
  /** The last `made` each deciding match told (`match.progress`), in this process. */
  readonly #told = new Map<string, number>();
  /** Attempts this process started (a finish that started none need not read its group again). */
  #attempted = 0;
  /** Matches whose queued payouts were made since their last look: one look soon. */
  readonly #lookSoon = new Set<string>();

  /** The stream of moves: followed (fees and attempts), and told of a match's own changes. */
  readonly #moves: Moves;

  constructor(engine: Engine, moves: Moves) {
    this.#engine = engine;
    this.#moves = moves;
    moves.subscribe((move) => this.#onMove(move));
  }

  /** A move of this process, or a late payment: followed after the ledger holds it. */
  #onMove({ what, intent }: Move): void {
    if (what !== 'moved' && what !== 'latePayment') return;
    this.#follow(intent, what).catch((err: unknown) =>
      this.#engine.logger.error(`following ${intent.kind} ${intent.id}: ${(err as Error).message}`),
    );
  }

  /** Opens a match: a record in the ledger, due at its timeout. */
  async open(args: ParsedOpenMatch): Promise<MatchView> {
    const now = this.#engine.now();
    const id = uuidv7();
    const terms: MatchTerms = {
      seatGuard: true,
      entryFeeMsat: args.entryFeeMsat,
      rakeBps: Math.round(args.rake * 10_000),
      feeExpiresIn: args.feeExpiresIn,
      timeoutMs: args.timeoutMs,
      claimExpiresIn: args.claimExpiresIn,
      description: args.description,
      ...(args.players ? { roster: args.players } : {}),
      ...(args.seats ? { seats: args.seats } : {}),
    };
    const match = await this.#engine.record(
      newMatch({
        id,
        roomId: args.roomId,
        // Never a player's id: a match counts against nobody's limits.
        playerId: `match:${id}`,
        amount: args.entryFeeMsat,
        unit: 'msats',
        description: args.description,
        groupId: id,
        // The timeout is `expiresAt`; `nextCheckAt` is when to look next, which a fee paid
        // into the match brings forward (its check then counts the roster).
        expiresAt: now + args.timeoutMs,
        nextCheckAt: now + args.timeoutMs,
        meta: { terms },
      }),
      now,
      {},
    );
    if (!isMatch(match)) throw new InvalidIntentError(`${match.kind} ${match.id} is no match`);
    return viewOf(match, [match]);
  }

  /**
   * Charges the player's fee into the match, once: a fee of theirs that is open or paid is
   * returned instead of charging again. A fee is only ever returned from a match that was
   * still open once the fee was in the ledger: when a decision came first (a `settle` racing
   * this call, in this process or another), the fee's charge is closed and the entry refused.
   */
  async enter(args: ParsedEnter): Promise<Intent> {
    await refuseBlocked(this.#engine, args.playerId);
    const match = await this.#match(args.matchId);
    if (match.status !== 'creating') throw closedError(match);
    const terms = termsOf(match);
    if (terms.roster && !terms.roster.includes(args.playerId)) {
      throw new MatchSeatError(match.id, args.playerId, 'not-in-roster');
    }
    if (terms.seatGuard !== true) return this.#enterByRead(match, args);
    // The player's seat is one keyed read, whatever the number already entered: a fee that
    // holds it (open or paid) is theirs; one whose create answer was lost is replaced.
    let holder = await this.#engine.ledger.seatHolder(match.id, args.playerId);
    for (let round = 0; ; round++) {
      if (holder !== null && !lostCreate(holder)) return this.#stillOpen(match.id, holder);
      try {
        return this.#stillOpen(match.id, await this.#charge(match, args, holder?.id));
      } catch (err) {
        if (err instanceof LimitExceededError && err.limit === 'seats') {
          throw new MatchSeatError(match.id, args.playerId, 'full');
        }
        if (!(err instanceof DuplicateIntentError && err.field === 'seat') || round > 0) throw err;
        // Another call of this player's took the seat first: its fee is the one.
        holder = err.existingId === null ? null : await this.#engine.ledger.get(err.existingId);
      }
    }
  }

  /**
   * `enter` into a match opened before the ledger kept seats (no `seatGuard` in its terms): its
   * seats are a read of its group, as they were then.
   */
  async #enterByRead(match: MatchIntent, args: ParsedEnter): Promise<Intent> {
    const terms = termsOf(match);
    const group = await this.#engine.ledger.byGroup(match.id);
    const replaced = replacedFees(group);
    const fees = group.filter(
      (i) => isEntryFee(i) && i.playerId === args.playerId && !replaced.has(i.id),
    );
    const held = fees.filter(
      (i) => i.status === 'completed' || (!isTerminal(i.status) && !lostCreate(i)),
    );
    if (held.length === 0) refuseSeat(match.id, terms, group, args.playerId);
    const fee =
      held.find((i) => i.status === 'completed') ??
      held.at(-1) ??
      (await this.#charge(match, args, fees.filter(lostCreate).at(-1)?.id));
    return this.#stillOpen(match.id, fee);
  }

  /**
   * Charges the player's fee. A create whose answer was lost (a timeout after sending, a 5xx)
   * leaves its fee `unknown`, with a code nobody saw: the player is met at once by a new charge
   * for the same seat, which names the lost one (`meta.replaces`, view.ts `replacedFees`). The
   * lost one never counts; should it exist at the service and be paid after all, its callback
   * proves it and the match refunds it, once. One new charge per call: if that answer is lost
   * too, the call rejects, and the player's next `enter` replaces it in turn. The open key of
   * a new charge is the lost fee's, so that two calls replacing one lost fee make one charge.
   */
  async #charge(match: MatchIntent, args: ParsedEnter, lost: string | undefined): Promise<Intent> {
    const terms = termsOf(match);
    let replaces = lost;
    for (let attempt = 0; ; attempt++) {
      const id = uuidv7();
      // The player's seat, in the create's own atomic step: capped by `seats`; a roster names
      // its players, one seat each. A new charge for a lost one takes the lost one's seat.
      const seat: SeatGuard = {
        ...(terms.seats === undefined || terms.roster ? {} : { seats: terms.seats }),
        ...(replaces === undefined ? {} : { replaces }),
      };
      try {
        return await startEntryFee(
          this.#engine,
          {
            playerId: args.playerId,
            roomId: match.roomId,
            amountMsat: terms.entryFeeMsat,
            description: terms.description,
            expiresIn: terms.feeExpiresIn,
            key: replaces === undefined ? match.id : `${match.id}:replaces:${replaces}`,
          },
          {
            id,
            groupId: match.id,
            meta: {
              matchRole: 'fee',
              ...(replaces === undefined ? {} : { replaces }),
              ...(args.lnAddress ? { lnAddress: args.lnAddress } : {}),
            },
            ...(terms.seatGuard === true
              ? { guards: { ...this.#engine.guards(entryFee.kind), seat } }
              : {}),
          },
        );
      } catch (err) {
        if (!isAmbiguous(this.#engine.port, err) || attempt >= 1) throw err;
        this.#engine.logger.warn(
          `match ${match.id}: the charge of ${args.playerId}'s fee ${id} had no certain answer (${(err as Error).message}); a new charge replaces it`,
        );
        replaces = id;
      }
    }
  }

  /**
   * The fee `enter` is about to return, if its match is still open now that the fee is in the
   * ledger. The decision reads the ledger when it is taken, so a fee recorded before it is one
   * of its group (closed by the finish, like any open fee) and a fee recorded after it is not
   * of its pot: either way the entry came too late. Its charge is closed here (the finish of
   * an ended match never comes back to it), and a payment that slipped in before the close
   * is refunded by the match, once ("paid after the match was decided"). A fee the decision
   * counted in its pot is the player's stake and is returned as it is.
   */
  async #stillOpen(matchId: string, fee: Intent): Promise<Intent> {
    const match = await this.#match(matchId);
    if (match.status === 'creating') return fee;
    if (match.meta.decision?.paidFeeIds.includes(fee.id)) return fee;
    const current = (await this.#engine.ledger.get(fee.id)) ?? fee;
    if (!isTerminal(current.status)) await this.#close(current);
    throw closedError(match);
  }

  /**
   * Pays the pot minus the rake by shares to players who paid in. The same shares again are
   * answered with the settlement; other shares, once decided, are refused (MatchClosedError).
   */
  async settle(matchId: string, shares: Shares): Promise<MatchView> {
    return this.#decide(matchId, 'settle', { shares, reason: null });
  }

  /** Refunds every paid fee and closes every open one; idempotent. */
  async abort(matchId: string, reason: string): Promise<MatchView> {
    return this.#decide(matchId, 'abort', { shares: null, reason });
  }

  async view(matchId: string): Promise<MatchView> {
    const match = await this.#match(matchId);
    return viewOf(match, await this.#engine.ledger.byGroup(matchId));
  }

  /**
   * Pushes an open match's timeout (`expiresAt`) forward: its room still lives. Its next look
   * is left as it is: a look a paid fee brought forward stays due, and a look at the old timeout
   * finds the new one and waits for it.
   */
  async keepAlive(matchId: string): Promise<void> {
    const match = await this.#engine.ledger.get(matchId);
    if (!isMatch(match) || match.status !== 'creating') return;
    const { timeoutMs } = termsOf(match);
    await this.#engine.ledger.update(match.id, 'creating', {
      expiresAt: this.#engine.now() + timeoutMs,
    });
  }

  /**
   * The reconciler's look at a due match: abort an open one nobody kept alive, count the roster
   * of one a paid fee made due (funded, and its event, once), finish a decided one. A match is
   * a record of ours (its kind reads 'own'): its check is this, not a read of the service.
   */
  async check(match: Intent): Promise<Intent> {
    if (!isMatch(match)) return match;
    if (isTerminal(match.status)) {
      // An ended match is looked at when its escrow still holds money (the audit) or on a
      // refresh: what it still owes is paid, once.
      await this.#finish(match);
      return match;
    }
    if (match.status === 'creating') {
      const now = this.#engine.now();
      const timeout = timeoutOf(match);
      if (timeout > now) {
        // The next look goes back to the timeout before the roster is read: a fee paid from
        // here on makes the match due again (its move's dueAlso, never later), and a fee paid
        // before is in what is read.
        // (A match opened before `expiresAt` was written gets it now, so that this write, which
        // moves its `updatedAt`, does not move its timeout.)
        const waiting =
          match.nextCheckAt === timeout && match.expiresAt !== null
            ? match
            : await this.#engine.ledger.update(match.id, 'creating', {
                nextCheckAt: timeout,
                expiresAt: timeout,
              });
        if (isMatch(waiting)) await this.#lookOpen(waiting);
        return (await this.#engine.ledger.get(match.id)) ?? match;
      }
      await this.#decide(match.id, 'abort', {
        shares: null,
        reason: 'timed out: nobody settled or aborted it (its room or process stopped)',
      }).catch((err: unknown) => {
        if (!(err instanceof MatchClosedError)) throw err;
      });
    } else {
      await this.#finish(match);
    }
    return (await this.#engine.ledger.get(match.id)) ?? match;
  }

  /** Settles or aborts by compare-and-set (the first decision wins), then finishes. */
  async #decide(
    id: string,
    kind: MatchDecision['kind'],
    wanted: Pick<MatchDecision, 'shares' | 'reason'>,
  ): Promise<MatchView> {
    let match = await this.#match(id);
    if (match.status === 'creating') {
      const meta = match.meta;
      const terms = termsOf(match);
      const group = await this.#engine.ledger.byGroup(id);
      const paid = paidFees(group);
      const pot = paid.reduce((sum, fee) => sum + BigInt(fee.amount), 0n);
      let split = { rakeMsat: 0n, payouts: [] as MatchDecision['payouts'] };
      if (kind === 'settle' && wanted.shares) {
        const payers = new Set(paid.map((fee) => fee.playerId));
        for (const playerId of Object.keys(wanted.shares)) {
          if (!payers.has(playerId)) {
            throw new InvalidArgumentError('shares', `names ${playerId}, who has not paid in`);
          }
        }
        split = splitPot(pot, terms.rakeBps, wanted.shares);
      }
      const now = this.#engine.now();
      const decision: MatchDecision = {
        kind,
        ...wanted,
        paidFeeIds: paid.map((fee) => fee.id),
        potMsat: pot.toString(),
        rakeMsat: split.rakeMsat.toString(),
        payouts: split.payouts,
        at: now,
      };
      const moved = await this.#engine.apply(
        match,
        'pending',
        {
          meta: { ...meta, decision },
          // Due at once for any other process if this one dies before it finishes.
          nextCheckAt: now + this.#engine.settings.reconciler.creatingGraceMs,
        },
        kind === 'settle' ? `settled: pot ${pot} msats` : `aborted: ${wanted.reason}`,
      );
      match = isMatch(moved) ? moved : await this.#match(id);
    }
    // The first decision stands: the same one again is answered with it; any other (an abort
    // of a settled match, a settle with other shares, from this process or another) is refused.
    const decision = match.meta.decision;
    if (
      decision?.kind !== kind ||
      (kind === 'settle' && !sameShares(decision.shares, wanted.shares))
    ) {
      throw closedError(match);
    }
    return this.#finish(match);
  }

  /**
   * Does what the decision asks until nothing is left: closes open fees, creates each payout
   * and refund (fixed ids), and ends the match once every fee is closed and every payment
   * made. Safe to run again at any time, in any process.
   */
  #finish(match: MatchIntent): Promise<MatchView> {
    // One at a time per match in this process: a finish that closes a fee sets off another
    // (the fee's move), which runs after it, on what it left. Processes race in the ledger.
    // Calls while one waits to run share it (a queue's payouts, made one by one, each call for
    // a look: one look after the running one sees them all).
    const slot = this.#finishing.get(match.id);
    if (slot?.next) return slot.next;
    const run: Promise<MatchView> = (slot?.current ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        const now = this.#finishing.get(match.id);
        if (now?.next === run) {
          now.current = run;
          delete now.next;
        }
        const read = await this.#engine.ledger.get(match.id);
        return this.#finishOnce(isMatch(read) ? read : match);
      });
    if (slot) slot.next = run;
    else this.#finishing.set(match.id, { current: run });
    void run
      .catch(() => {})
      .finally(() => {
        const now = this.#finishing.get(match.id);
        if (now?.current === run && !now.next) this.#finishing.delete(match.id);
      });
    return run;
  }

  /**
   * One look at a deciding match in PROGRESS_LOOK_MS, shared by every call until then: it ends
   * the match once nothing is left to wait for, and otherwise only tells the progress. It records
   * nothing: the settle that queued the payouts records them (should its process stop, the
   * match's due look does), so the processes that drain a queue never race its settle, each
   * recording the same payouts again (a refused create and a read per payout, in each).
   */
  #finishSoon(match: MatchIntent): void {
    if (this.#lookSoon.has(match.id)) return;
    this.#lookSoon.add(match.id);
    timerAt(this.#engine.settings.clock, this.#engine.now() + PROGRESS_LOOK_MS, () => {
      this.#lookSoon.delete(match.id);
      this.#lookProgress(match.id).catch((err: unknown) =>
        this.#engine.logger.warn(`match ${match.id}: ${(err as Error).message}`),
      );
    });
  }

  async #lookProgress(matchId: string): Promise<void> {
    const match = await this.#engine.ledger.get(matchId);
    if (!isMatch(match) || match.status !== 'pending') return;
    const group = await this.#engine.ledger.byGroup(matchId);
    if (!waitsForQueue(match, group)) {
      await this.#finish(match);
      return;
    }
    this.#tellProgress(viewOf(match, group));
  }

  /**
   * Whether a settle's payouts go to the queue (server/queue.ts): many winners, and a reconciler
   * in this process to drain them (the game's others drain them too).
   */
  #queues(decision: MatchDecision): boolean {
    const { payoutQueue, reconciler } = this.#engine.settings;
    return reconciler.enabled && decision.payouts.length >= payoutQueue.fromWinners;
  }

  async #finishOnce(match: MatchIntent): Promise<MatchView> {
    const engine = this.#engine;
    const decision = decisionOf(match);
    if (isTerminal(match.status)) {
      // Ended, yet an attempt may have ended unpaid since (a payment that failed after it was
      // accepted, a code lost unshown) or a fee come in late: each is paid once more (fixed ids),
      // never one whose answer was lost (`#made`).
      const group = await engine.ledger.byGroup(match.id);
      const attempted = this.#attempted;
      await this.#payAll(match, decision, group, false);
      return viewOf(
        match,
        this.#attempted === attempted ? group : await engine.ledger.byGroup(match.id),
      );
    }
    let done = true;
    let group = await engine.ledger.byGroup(match.id);
    const attempted = this.#attempted;

    // No one may pay into a decided match: each open fee's deadline becomes now, and its
    // check closes the charge (a payment that came just before shows, and is refunded below).
    for (const fee of group.filter((i) => isEntryFee(i) && !isTerminal(i.status))) {
      if (!isTerminal((await this.#close(fee)).status)) done = false;
    }
    group = await engine.ledger.byGroup(match.id);
    if (!(await this.#payAll(match, decision, group, this.#queues(decision)))) done = false;

    if (!done) {
      await engine.ledger.update(match.id, 'pending', { nextCheckAt: engine.now() + RETRY_MS });
      // Read again only when this look started attempts: a look at a draining queue reads its
      // group once (it is the cost of each look: thousands of intents).
      const seen = this.#attempted === attempted ? group : await engine.ledger.byGroup(match.id);
      const view = viewOf(match, seen);
      this.#tellProgress(view);
      return view;
    }
    this.#told.delete(match.id);
    return this.#end(match, decision);
  }

  /**
   * Ends a match whose payouts and refunds are all made, and says so once. The end is written
   * first (`meta.ended`: the view says settled or aborted from here on) while the match stays
   * due; then the event's once-marker, so the process that takes it first tells; only then the
   * terminal move. A process that stops, or a ledger that goes away, anywhere in between leaves
   * the match due, and whichever process looks next does what is left (an event already told
   * is not told again).
   */
  async #end(match: MatchIntent, decision: MatchDecision): Promise<MatchView> {
    const engine = this.#engine;
    let ending = match;
    if (match.meta.ended !== true) {
      const marked = await engine.ledger.update(match.id, 'pending', {
        meta: { ...match.meta, ended: true },
        nextCheckAt: engine.now() + RETRY_MS,
      });
      ending = isMatch(marked) ? marked : await this.#match(match.id);
      if (isTerminal(ending.status)) return viewOf(ending, await engine.ledger.byGroup(match.id));
    }
    const event = decision.kind === 'settle' ? 'match.settled' : 'match.aborted';
    const group = await engine.ledger.byGroup(match.id);
    if (await engine.ledger.recordEvent(`once:${event}:${match.id}`)) {
      engine.emit(event, viewOf(ending, group));
    }
    const to = decision.kind === 'settle' ? 'completed' : 'failed';
    const ended = await engine.apply(
      ending,
      to,
      {},
      decision.kind === 'settle' ? 'payouts created' : 'refunds created',
    );
    return viewOf(isMatch(ended) ? ended : await this.#match(match.id), group);
  }

  /**
   * Makes sure every payout of the decision and every refund owed exists (`#pay`): true when
   * all are made. `queue`: a first payout by claim code waits its turn in the payout queue.
   */
  async #payAll(
    match: MatchIntent,
    decision: MatchDecision,
    group: readonly Intent[],
    queue: boolean,
  ): Promise<boolean> {
    const terms = termsOf(match);
    let done = true;
    if (decision.kind === 'settle') {
      let aheadAt = this.#engine.now();
      let next = 0;
      const lane = async () => {
        while (next < decision.payouts.length) {
          const payout = decision.payouts[next++] as MatchDecision['payouts'][number];
          if (queue) aheadAt = await this.#keepAhead(match, aheadAt);
          const paid = await this.#pay(match, group, payoutKey(match.id, payout.playerId), {
            playerId: payout.playerId,
            amountMsat: payout.amountMsat,
            description: `${terms.description}: winnings`,
            role: 'payout',
            why: 'won',
            queue,
          });
          if (!paid) done = false;
        }
      };
      await Promise.all(Array.from({ length: queue ? RECORDING_LANES : 1 }, lane));
    }
    const replaced = replacedFees(group);
    for (const fee of group.filter(isEntryFee)) {
      const why = refundReason(fee, decision, replaced);
      if (why === null) continue;
      const refunded = await this.#pay(match, group, `${fee.id}:refund`, {
        playerId: fee.playerId,
        amountMsat: fee.amount,
        description: `${terms.description}: refund (${why})`,
        role: 'refund',
        why,
        feeId: fee.id,
      });
      if (!refunded) done = false;
    }
    return done;
  }

  /**
   * While a look records a long queue (a settle of many winners on a busy ledger may take
   * longer than the grace its decision gave it), it keeps the match's due look that far ahead, so
   * that another process's reconciler does not start recording the same payouts beside it. Should
   * this process stop, the match is due within the grace. Resolves with when it last did.
   */
  async #keepAhead(match: MatchIntent, since: number): Promise<number> {
    const now = this.#engine.now();
    const grace = this.#engine.settings.reconciler.creatingGraceMs;
    if (now - since < grace / 3) return since;
    await this.#engine.ledger.update(match.id, 'pending', { nextCheckAt: now + grace });
    return now;
  }

  /** `match.progress` when a deciding match's queued payouts made more since this process last told. */
  #tellProgress(view: MatchView): void {
    // Never backwards: a look that read the group earlier may end after one that read it later.
    if (view.total === 0 || view.made <= (this.#told.get(view.id) ?? -1)) return;
    const queued = view.payouts.some((p) => p.status === 'queued') || this.#told.has(view.id);
    if (!queued) return;
    this.#told.set(view.id, view.made);
    this.#engine.emit('match.progress', view);
  }

  /**
   * Makes sure one payout or refund exists, exactly once: resolves true when it is made (or
   * pending, or claimed), false when it must be looked at again (its create is in flight or its
   * outcome unknown, or the service refused for now).
   */
  async #pay(
    match: MatchIntent,
    group: readonly Intent[],
    key: string,
    what: {
      playerId: string;
      amountMsat: string;
      description: string;
      role: 'payout' | 'refund';
      why: string;
      feeId?: string;
      /** A first attempt by claim code goes to the payout queue (a settle with many winners). */
      queue?: boolean;
    },
  ): Promise<boolean> {
    const attempts = indexOf(group).attempts.get(key) ?? [];
    const last = attempts.at(-1);
    if (last) {
      const made = this.#made(match, last, what, attempts.length);
      if (made !== 'again') return made;
    }
    const id = attempts.length === 0 ? key : `${key}:${attempts.length + 1}`;
    this.#attempted++;
    const terms = termsOf(match);
    // The player's Lightning address, given when they entered, for a first attempt.
    const address =
      attempts.length === 0 ? indexOf(group).fees.get(what.playerId)?.meta.lnAddress : undefined;
    const toAddress = address !== undefined;
    try {
      const behalf = {
        id,
        groupId: match.id,
        meta: {
          matchRole: what.role,
          payKey: key,
          attempt: attempts.length + 1,
          why: what.why,
          ...(what.feeId ? { feeId: what.feeId } : {}),
        },
        // Paid from the pot, not the game's own money: no budget or open-intent limit applies.
        // The approvals may hold a winner's first attempt (one issued again was approved, or
        // under the line, already); never a refund, which gives a player's own fee back.
        guards: what.role === 'payout' && attempts.length === 0 ? this.#engine.payoutHold() : {},
        // A first attempt by claim code may wait its turn; one to an address is checked and
        // sent now (its check is a call of its own), and an attempt issued again goes at once.
        queue: what.queue === true && attempts.length === 0 && !toAddress,
      };
      const byCode = () =>
        startReward(
          this.#engine,
          {
            playerId: what.playerId,
            roomId: match.roomId,
            amountMsat: what.amountMsat,
            description: what.description.slice(0, 1000),
            expiresIn: terms.claimExpiresIn,
          },
          behalf,
        );
      const made =
        address !== undefined
          ? await startAddressPayment(
              this.#engine,
              {
                playerId: what.playerId,
                roomId: match.roomId,
                lnAddress: address,
                amountMsat: what.amountMsat,
                comment: what.description.slice(0, 255),
              },
              behalf,
            ).catch((err: unknown) => {
              // The address failed its check (or payments to it just failed): nothing was
              // recorded or sent, so this first attempt is a claim code instead.
              if (!(err instanceof LnAddressRefusedError)) throw err;
              this.#engine.logger.warn(
                `match ${match.id}: ${what.role} to ${what.playerId} by claim code: ${err.message}`,
              );
              return byCode();
            })
          : await byCode();
      if (what.role === 'refund') this.#engine.emit('match.refund', made, what.why);
      return made.status === 'pending' || made.status === 'completed';
    } catch (err) {
      if (err instanceof DuplicateIntentError && err.field === 'id') {
        // Another process made this attempt first: it counts as made only once it is, by the
        // same rules as any attempt (its create answer may have been lost in that process).
        const other = await this.#engine.ledger.get(id);
        if (other === null) return false;
        return this.#made(match, other, what, attempts.length + 1) === true;
      }
      // A lost payment answer: the intent is unknown; the next look decides (see above).
      if (this.#engine.port.failureOf(err).meaning !== 'ambiguous') {
        this.#engine.logger.warn(
          `match ${match.id}: ${what.role} to ${what.playerId} not made yet: ${(err as Error).message}`,
        );
      }
      return false;
    }
  }

  /**
   * Whether the latest attempt at a payout or refund has made it: true (pending or claimed, a
   * payment waiting for an operator, or ended for good), false (look again: a create in flight,
   * an unknown code), or 'again' (ended unpaid and nobody can hold its code: issue it again).
   */
  #made(
    match: MatchIntent,
    last: Intent,
    what: { playerId: string; amountMsat: string; role: string },
    attempts: number,
  ): boolean | 'again' {
    // A create in flight, a payout the approvals hold or one in the queue: the match waits.
    if (last.status === 'creating' || last.status === 'held' || last.status === 'queued') {
      return false;
    }
    // A payment whose answer was lost may have paid: never sent again, it waits for a proven
    // callback or an operator (lightning.operator.unknowns()), and the match goes on without it.
    if (last.status === 'unknown') return this.#engine.rulesOf(last.kind).lostAnswer === 'proof';
    if (last.status === 'pending' || last.status === 'completed') return true;
    // Ended unpaid. Issued again only when nobody can hold its code (refused, or expired never
    // shown), whatever route brought the news and whatever code is stored now, or when an
    // operator said so (operator.ts: a shown code that expired, once).
    if (this.#engine.rulesOf(last.kind).mayReissue(last)) return 'again';
    if (last.status === 'expired' && reissuedByOperator(last)) return 'again';
    const unpaid = last.status === 'failed' || !wasShown(last);
    if (unpaid && attemptOf(last) >= MAX_PAYOUT_ATTEMPTS) {
      this.#engine.logger.error(
        `match ${match.id}: the ${what.role} of ${what.amountMsat} msats to ${what.playerId} failed ${attempts} times; pay it by hand`,
      );
    }
    return true;
  }

  /** A fee of a match moved, or was paid after it expired; or a payout or refund ended. */
  async #follow(intent: Intent, what: 'moved' | 'latePayment'): Promise<void> {
    if (typeof intent.meta.payKey === 'string') return this.#repay(intent);
    if (!isEntryFee(intent) || intent.groupId === null) return;
    const match = await this.#engine.ledger.get(intent.groupId);
    if (!isMatch(match)) return;
    if (match.status === 'creating') {
      if (what !== 'moved' || intent.status !== 'completed') return;
      const group = await this.#engine.ledger.byGroup(match.id);
      // A lost charge that a new one replaced, paid after all: the player's money goes back now.
      if (replacedFees(group).has(intent.id)) await this.#refund(match, group, intent, REPLACED);
      else await this.#checkFunded(match, group);
      return;
    }
    if (match.status === 'pending') {
      // Any move of a fee may be what the decided match waited for (a create that answered).
      await this.#finish(match);
      return;
    }
    if (what === 'moved' && intent.status !== 'completed') return;
    // The match has ended: a fee paid after it ended is refunded on its own.
    const fee = (await this.#engine.ledger.get(intent.id)) ?? intent;
    const group = await this.#engine.ledger.byGroup(match.id);
    const decision = decisionOf(match);
    const why = refundReason(fee, decision, replacedFees(group));
    if (why === null) return;
    await this.#refund(match, group, fee, why);
  }

  /** Gives a fee back to its player, once (its refund's id is fixed: `<fee>:refund`). */
  async #refund(
    match: MatchIntent,
    group: readonly Intent[],
    fee: Intent,
    why: string,
  ): Promise<void> {
    await this.#pay(match, group, `${fee.id}:refund`, {
      playerId: fee.playerId,
      amountMsat: fee.amount,
      description: `${termsOf(match).description}: refund (${why})`,
      role: 'refund',
      why,
      feeId: fee.id,
    });
  }

  /**
   * A payout or refund that ended without paying (a Lightning-address payment that failed after
   * it was accepted, a code refused or lost unshown) is issued again, as a claim code, by the
   * match's finish: at once by the process that saw the attempt end. An ended match has no timer:
   * should that process stop first, the money is back in the match's escrow, and the live audit
   * of whichever process comes next looks at it (audit.ts). Fixed ids make two processes that
   * both get there issue it once.
   */
  async #repay(attempt: Intent): Promise<void> {
    const unpaid = attempt.status === 'failed' || attempt.status === 'expired';
    // A held payout an operator approved, or a queued one sent in its turn, is made: the match
    // that waited for it may end now.
    const approved =
      attempt.status === 'pending' &&
      (typeof attempt.meta.approvedBy === 'string' || attempt.history[0]?.to === 'queued');
    if ((!unpaid && !approved) || attempt.groupId === null) return;
    const match = await this.#engine.ledger.get(attempt.groupId);
    if (!isMatch(match)) return;
    // A deciding match goes on at once with what the attempt's end left it to do (issuing it
    // again, or ending), not at its next timer; a queue's payouts made share one look soon.
    if (match.status === 'pending') {
      if (approved && typeof attempt.meta.approvedBy !== 'string') this.#finishSoon(match);
      else await this.#finish(match);
      return;
    }
    if (isTerminal(match.status) && unpaid) await this.#finish(match);
  }

  /**
   * An attempt an operator marked to be issued again (operator.ts, `meta.reissuedBy`): issued
   * now, by the same rules as any attempt. Resolves with the new attempt, or null when none
   * could be made now (the service refused for now, payouts paused: the log says why).
   */
  async reissue(marked: Intent): Promise<Intent | null> {
    await this.#repay(marked);
    if (marked.groupId === null) return null;
    const group = await this.#engine.ledger.byGroup(marked.groupId);
    const latest = group.filter((i) => i.meta.payKey === marked.meta.payKey).at(-1);
    return latest === undefined || latest.id === marked.id ? null : latest;
  }

  /**
   * The roster has paid (view.ts `rosterPaid`): the funded flag in the ledger, and the event,
   * once, by a compare-and-set in the ledger (two fees paid together, in one process or two,
   * both get here). A match without a roster is never funded. Run by the process that saw the
   * fee paid (`#follow`) and by the match's check, which the fee's move made due in the ledger
   * (entry-fee.ts `groupDue`): a process that stops, or a ledger that goes away, between the
   * move and this leaves the match due, and whichever process looks next funds it.
   */
  async #checkFunded(match: MatchIntent, read?: readonly Intent[]): Promise<void> {
    const terms = termsOf(match);
    if (seatsOf(terms) === 0) return;
    const group = read ?? (await this.#engine.ledger.byGroup(match.id));
    if (!rosterPaid(terms, group)) return;
    const current = await this.#engine.ledger.get(match.id);
    if (!isMatch(current) || current.status !== 'creating') return;
    // The fact first, then the event's once-marker: a process that stops between the two
    // leaves the match funded, and the next look at it tells (whoever takes the marker first).
    const updated = current.meta.funded
      ? current
      : await this.#engine.ledger.update(match.id, 'creating', {
          meta: { ...current.meta, funded: true },
        });
    if (!isMatch(updated)) return;
    if (!(await this.#engine.ledger.recordEvent(`once:match.funded:${match.id}`))) return;
    // The match's own record: its rooms show the roster funded.
    this.#moves.publish({ what: 'changed', intent: updated });
    this.#engine.emit('match.funded', viewOf(updated, group));
  }

  /**
   * A look at an open match a paid fee made due (or its timeout, not yet come): what its
   * process's follow-up would have done, from the ledger. A lost charge that a new one replaced
   * and that turned out paid is refunded (fixed id: once), and a roster that paid is funded.
   */
  async #lookOpen(match: MatchIntent): Promise<void> {
    const group = await this.#engine.ledger.byGroup(match.id);
    const replaced = replacedFees(group);
    for (const fee of group) {
      if (replaced.has(fee.id) && fee.status === 'completed') {
        await this.#refund(match, group, fee, REPLACED);
      }
    }
    await this.#checkFunded(match, group);
  }

  /**
   * Closes an open fee of a decided match: its deadline becomes now, and its check closes the
   * charge at the service. Resolves with what the check left (still open when the service could
   * not be reached, or the fee's create is in flight: the reconciler closes it at its next look).
   */
  async #close(fee: Intent): Promise<Intent> {
    const now = this.#engine.now();
    const closing =
      fee.expiresAt !== null && fee.expiresAt <= now
        ? fee
        : await this.#engine.ledger.update(fee.id, fee.status, {
            expiresAt: now,
            nextCheckAt: now,
          });
    return closing ? await this.#engine.check(closing).catch(() => closing) : fee;
  }

  async #match(id: string): Promise<MatchIntent> {
    const match = await this.#engine.ledger.get(id);
    if (!isMatch(match)) {
      throw new InvalidArgumentError('matchId', 'names no match in the ledger');
    }
    return match;
  }
}

/** The error for a call the match no longer takes, naming the decision that stands. */
function closedError(match: MatchIntent): MatchClosedError {
  const decision = match.meta.decision;
  return new MatchClosedError(
    match.id,
    matchStatus(match),
    decision ? { kind: decision.kind, shares: decision.shares, reason: decision.reason } : null,
  );
}

/**
 * For a match opened before the ledger kept seats (`#enterByRead`; its roster was checked): refuses
 * a player the match has no seat for (MatchSeatError), before anything is recorded: one more than
 * its `seats` while every seat holds another player's open or paid fee. A read, not a guard.
 */
function refuseSeat(
  matchId: string,
  terms: MatchTerms,
  group: readonly Intent[],
  playerId: string,
): void {
  if (terms.roster) return;
  // The player's own seat (a fee of theirs whose create answer was lost) is not another's.
  const others = seated(group).filter((fee) => fee.playerId !== playerId);
  if (terms.seats !== undefined && others.length >= terms.seats) {
    throw new MatchSeatError(matchId, playerId, 'full');
  }
}

/**
 * When an open match times out: its `expiresAt`, which `open` and `keepAlive` write. A match
 * opened before it had one timed out `timeoutMs` after its last write (its keep-alive's).
 */
function timeoutOf(match: MatchIntent): number {
  return match.expiresAt ?? match.updatedAt + termsOf(match).timeoutMs;
}

/** Whether two settles name the same winners with the same shares (in any order). */
function sameShares(a: Shares | null, b: Shares | null): boolean {
  if (a === null || b === null) return a === b;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key])
  );
}

/** Why a fee refunds: its create answer was lost, and a new charge replaced it. */
const REPLACED = 'its charge was replaced by a new one';

/** Why a fee of a decided match is owed back to its player, or null when it is not. */
function refundReason(
  fee: Intent,
  decision: MatchDecision,
  replaced: ReadonlySet<string>,
): string | null {
  if (fee.status === 'expired' && fee.meta.latePaymentReported === true) {
    return replaced.has(fee.id) ? REPLACED : 'paid after its deadline';
  }
  if (fee.status !== 'completed') return null;
  if (replaced.has(fee.id)) return REPLACED;
  if (decision.kind === 'abort') return `match aborted: ${decision.reason}`;
  if (!decision.paidFeeIds.includes(fee.id)) return 'paid after the match was decided';
  return null;
}

/** A fee whose create answer was lost: `unknown`, its code seen by nobody. */
function lostCreate(fee: Intent): boolean {
  return fee.status === 'unknown' && fee.code === null;
}

/** A payout's fixed id: the player's id hashed, so that the id names nobody. */
function payoutKey(matchId: string, playerId: string): string {
  return `${matchId}:payout:${createHash('sha256').update(playerId).digest('base64url').slice(0, 22)}`;
}

/**
 * Whether a deciding match still waits for its payout queue: a winner's payout not recorded yet
 * (its settle is recording them), or one whose latest attempt is queued, held or in flight.
 */
function waitsForQueue(match: MatchIntent, group: readonly Intent[]): boolean {
  const { attempts } = indexOf(group);
  for (const payout of decisionOf(match).payouts) {
    const last = attempts.get(payoutKey(match.id, payout.playerId))?.at(-1);
    if (last === undefined || WAITING.has(last.status)) return true;
  }
  return false;
}

const WAITING: ReadonlySet<Intent['status']> = new Set(['queued', 'held', 'creating']);

/** A group's attempts by pay key and latest fee by player, each in the group's order. */
interface GroupIndex {
  attempts: Map<string, Intent[]>;
  fees: Map<string, EntryFeeIntent>;
}

/**
 * Built once per read of a group (a finish looks up every winner's attempts in it: a search
 * each would make a settle of n winners cost n² per look, which a queue draining looks often).
 */
const indexes = new WeakMap<readonly Intent[], GroupIndex>();

function indexOf(group: readonly Intent[]): GroupIndex {
  let index = indexes.get(group);
  if (index) return index;
  index = { attempts: new Map(), fees: new Map() };
  for (const intent of group) {
    const key = intent.meta.payKey;
    if (typeof key === 'string')
      index.attempts.set(key, [...(index.attempts.get(key) ?? []), intent]);
    if (isEntryFee(intent)) index.fees.set(intent.playerId, intent);
  }
  indexes.set(group, index);
  return index;
}
