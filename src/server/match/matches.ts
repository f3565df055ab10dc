/**
 * Matches: a pot held in escrow, paid out or refunded exactly once, whatever crashes.
 *
 * A match is an intent of kind `match` (terms.ts: its `meta`); its fees, payouts and refunds are
 * ordinary intents grouped under its id. open --settle/abort by compare-and-set--> deciding
 * (pending) --every payout and refund made, every fee closed--> settled | aborted.
 * - The pot is the fees paid when the match was decided; a fee paid later is refunded.
 * - Payouts and refunds have fixed ids (`<match>:payout:<player>`, `<fee>:refund`): a second
 *   attempt in any process is a duplicate the ledger refuses, never a second payment.
 * - The first decision stands; anything else is refused with MatchClosedError.
 * - Seats are taken in the fee's atomic create (CreateGuards.seat), across processes.
 * - A decided match stays due in the reconciler until finished, so another process finishes it.
 *
 * Footprint: a few ledger reads of the match's group per call; no timers of its own.
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
import type { SeatGuard } from '../../ledger/store.js';
import type { Engine } from '../engine.js';
import { entryFee, startEntryFee } from '../kinds/entry-fee.js';
import { type EntryFeeIntent, isEntryFee } from '../kinds/guards.js';
import { decisionOf, isMatch, type MatchIntent, newMatch, termsOf } from '../kinds/match.js';
import { startAddressPayment } from '../kinds/payment.js';
import {
  attemptOf,
  MAX_PAYOUT_ATTEMPTS,
  reissuedByOperator,
  wasShown,
} from '../kinds/payout-position.js';
import { startReward } from '../kinds/reward.js';
import type { Move, Moves } from '../moves.js';
import { refuseBlocked } from '../operations/create.js';
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
import { type MatchView, matchStatus, paidFees, replacedFees, rosterPaid, viewOf } from './view.js';

/** How soon a decided match that could not finish is looked at again. */
const RETRY_MS = 15_000;

/** Queued payouts made one by one share one look at their match (a look reads the group). */
const PROGRESS_LOOK_MS = 1_000;

/**
 * Payouts a settle records for its queue at once. Each record is a round trip to the ledger;
 * one after the other, they (not the game's rate) set the queue's pace: the drains of every
 * process send each payout as soon as it is recorded.
 */
const RECORDING_LANES = 8;

export class Matches {
  readonly #engine: Engine;
  /** Per match, the finish running here and the one queued after it (later calls share it). */
  readonly #finishing = new Map<
    string,
    { current: Promise<MatchView>; next?: Promise<MatchView> }
  >();
  /** The last `made` each deciding match told (`match.progress`), in this process. */
  readonly #told = new Map<string, number>();
  /** Attempts started here: a finish that started none need not read its group again. */
  #attempted = 0;
  /** Matches whose queued payouts were made since their last look. */
  readonly #lookSoon = new Set<string>();
  readonly #moves: Moves;

  constructor(engine: Engine, moves: Moves) {
    this.#engine = engine;
    this.#moves = moves;
    moves.subscribe((move) => this.#onMove(move));
  }

  #onMove({ what, intent }: Move): void {
    if (what !== 'moved' && what !== 'latePayment') return;
    // Only a payout the matches repay, or a fee of a match, concerns them.
    if (typeof intent.meta.payKey !== 'string' && intent.groupId === null) return;
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
        // A fee paid into the match brings `nextCheckAt` forward; `expiresAt` is the timeout.
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
   * Charges the player's fee, once (an open or paid fee of theirs is returned), and only while
   * the match is still open once the fee is in the ledger: a decision that came first refuses it.
   */
  async enter(args: ParsedEnter): Promise<Intent> {
    await refuseBlocked(this.#engine, args.playerId);
    const match = await this.#match(args.matchId);
    if (match.status !== 'creating') throw closedError(match);
    const terms = termsOf(match);
    if (terms.roster && !terms.roster.includes(args.playerId)) {
      throw new MatchSeatError(match.id, args.playerId, 'not-in-roster');
    }
    // A fee that holds the seat is theirs; one whose create answer was lost is replaced.
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
   * Charges the player's fee. A fee whose create answer was lost (a code nobody saw) is replaced
   * at once by a new charge naming it (`meta.replaces`); the lost one never counts, and is
   * refunded should it be paid after all. The new charge's key is the lost fee's, so two calls
   * replacing one lost fee make one charge; if its answer is lost too, the call rejects.
   */
  async #charge(match: MatchIntent, args: ParsedEnter, lost: string | undefined): Promise<Intent> {
    const terms = termsOf(match);
    let replaces = lost;
    for (let attempt = 0; ; attempt++) {
      const id = uuidv7();
      // Taken in the create's atomic step; a roster names its players, one seat each.
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
            guards: { ...this.#engine.guards(entryFee.kind), seat },
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
   * The fee `enter` returns if its match is still open now that the fee is in the ledger (or
   * the decision counted it). Otherwise the entry came too late: its charge is closed here, and
   * a payment that slipped in is refunded as paid after the decision.
   */
  async #stillOpen(matchId: string, fee: Intent): Promise<Intent> {
    const match = await this.#match(matchId);
    if (match.status === 'creating') return fee;
    if (match.meta.decision?.paidFeeIds.includes(fee.id)) return fee;
    const current = (await this.#engine.ledger.get(fee.id)) ?? fee;
    if (!isTerminal(current.status)) await this.#close(current);
    throw closedError(match);
  }

  /** Pays the pot minus the rake by shares to players who paid in; the first decision stands. */
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

  /** Pushes an open match's timeout forward (its room lives); its next look stays as it is. */
  async keepAlive(matchId: string): Promise<void> {
    const match = await this.#engine.ledger.get(matchId);
    if (!isMatch(match) || match.status !== 'creating') return;
    const { timeoutMs } = termsOf(match);
    await this.#engine.ledger.update(match.id, 'creating', {
      expiresAt: this.#engine.now() + timeoutMs,
    });
  }

  /**
   * The reconciler's look at a due match: abort an open one nobody kept alive, fund one whose
   * roster paid, finish a decided or ended one (what it still owes is paid, once).
   */
  async check(match: Intent): Promise<Intent> {
    if (!isMatch(match)) return match;
    if (isTerminal(match.status)) {
      await this.#finish(match);
      return match;
    }
    if (match.status === 'creating') {
      const now = this.#engine.now();
      const timeout = timeoutOf(match);
      if (timeout > now) {
        // Back to the timeout before the roster is read: a fee paid from here on makes it due.
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
          // Due for any other process should this one die before it finishes.
          nextCheckAt: now + this.#engine.settings.reconciler.creatingGraceMs,
        },
        kind === 'settle' ? `settled: pot ${pot} msats` : `aborted: ${wanted.reason}`,
      );
      match = isMatch(moved) ? moved : await this.#match(id);
    }
    // The same decision again is answered with it; any other is refused.
    const decision = match.meta.decision;
    if (
      decision?.kind !== kind ||
      (kind === 'settle' && !sameShares(decision.shares, wanted.shares))
    ) {
      throw closedError(match);
    }
    return this.#finish(match);
  }

  /** Closes open fees, makes each payout and refund, and ends the match; safe to run again. */
  #finish(match: MatchIntent): Promise<MatchView> {
    // One at a time per match here (a fee it closes sets off another); processes race in the
    // ledger. Calls while one waits share it: it runs later and sees what they would.
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
   * One shared look soon: ends the match once nothing is left, else tells the progress. It
   * records nothing, so processes draining a queue never race its settle recording payouts.
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

  /** A settle's payouts are queued: many winners, and a reconciler here to drain them. */
  #queues(decision: MatchDecision): boolean {
    const { payoutQueue, reconciler } = this.#engine.settings;
    return reconciler.enabled && decision.payouts.length >= payoutQueue.fromWinners;
  }

  async #finishOnce(match: MatchIntent): Promise<MatchView> {
    const engine = this.#engine;
    const decision = decisionOf(match);
    if (isTerminal(match.status)) {
      // An attempt may have ended unpaid since, or a fee come in late: each is paid once more.
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

    // No one may pay into a decided match: each open fee is closed (one paid just before is
    // refunded below).
    for (const fee of group.filter((i) => isEntryFee(i) && !isTerminal(i.status))) {
      if (!isTerminal((await this.#close(fee)).status)) done = false;
    }
    group = await engine.ledger.byGroup(match.id);
    if (!(await this.#payAll(match, decision, group, this.#queues(decision)))) done = false;

    if (!done) {
      await engine.ledger.update(match.id, 'pending', { nextCheckAt: engine.now() + RETRY_MS });
      // Read again only when this look started attempts (a queue's group is large).
      const seen = this.#attempted === attempted ? group : await engine.ledger.byGroup(match.id);
      const view = viewOf(match, seen);
      this.#tellProgress(view);
      return view;
    }
    this.#told.delete(match.id);
    return this.#end(match, decision);
  }

  /**
   * Ends a match whose payouts and refunds are made: `meta.ended` while it stays due, then the
   * event's once-marker, then the terminal move, so a stop in between is finished by the next look.
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

  /** Makes every payout and refund owed: true when all are made. `queue`: payouts wait. */
  async #payAll(
    match: MatchIntent,
    decision: MatchDecision,
    group: readonly Intent[],
    queue: boolean,
  ): Promise<boolean> {
    const terms = termsOf(match);
    let done = true;
    if (decision.kind === 'settle') {
      // The lanes keep the match ahead one after another: one write per period, not one each.
      let ahead = Promise.resolve(this.#engine.now());
      let next = 0;
      const lane = async () => {
        while (next < decision.payouts.length) {
          const payout = decision.payouts[next++] as MatchDecision['payouts'][number];
          if (queue) {
            ahead = ahead.then((since) => this.#keepAhead(match, since));
            await ahead;
          }
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
      if (why !== null && !(await this.#refund(match, group, fee, why))) done = false;
    }
    return done;
  }

  /**
   * Keeps the match's due look a grace ahead while a long queue is recorded, so that another
   * process does not record the same payouts beside it. Resolves with when it last did.
   */
  async #keepAhead(match: MatchIntent, since: number): Promise<number> {
    const now = this.#engine.now();
    const grace = this.#engine.settings.reconciler.creatingGraceMs;
    if (now - since < grace / 3) return since;
    await this.#engine.ledger.update(match.id, 'pending', { nextCheckAt: now + grace });
    return now;
  }

  /**
   * Whether another process is recording this settle's queue: its match is kept due a grace
   * ahead (#keepAhead) while it does, and a move here (a fee it closed, a payout that failed)
   * would otherwise start a second recorder beside it, every create refused as a duplicate.
   * Such a move gets a look soon, which records nothing; should the recorder die, the match
   * falls due and any process's reconciler finishes it.
   */
  #recordedElsewhere(match: MatchIntent): boolean {
    return (
      this.#queues(decisionOf(match)) &&
      !this.#finishing.has(match.id) &&
      match.nextCheckAt !== null &&
      match.nextCheckAt > this.#engine.now()
    );
  }

  /** `match.progress` when queued payouts made more since this process last told. */
  #tellProgress(view: MatchView): void {
    // Never backwards: an earlier read may end after a later one.
    if (view.total === 0 || view.made <= (this.#told.get(view.id) ?? -1)) return;
    const queued = view.payouts.some((p) => p.status === 'queued') || this.#told.has(view.id);
    if (!queued) return;
    this.#told.set(view.id, view.made);
    this.#engine.emit('match.progress', view);
  }

  /** Makes one payout or refund exist, once: true when made, false to look again. */
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
    // The address the player gave when they entered, for a first attempt.
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
        // From the pot, so no budget or open limit; approvals may hold a winner's first attempt,
        // never a refund (a player's own fee).
        guards: what.role === 'payout' && attempts.length === 0 ? this.#engine.payoutHold() : {},
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
              // Nothing was recorded or sent: this first attempt is a claim code instead.
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
        // Another process made this attempt first: judged by the same rules as any.
        const other = await this.#engine.ledger.get(id);
        if (other === null) return false;
        return this.#made(match, other, what, attempts.length + 1) === true;
      }
      if (this.#engine.port.failureOf(err).meaning !== 'ambiguous') {
        this.#engine.logger.warn(
          `match ${match.id}: ${what.role} to ${what.playerId} not made yet: ${(err as Error).message}`,
        );
      }
      return false;
    }
  }

  /** Whether the latest attempt has made it: true, false (look again) or 'again' (reissue it). */
  #made(
    match: MatchIntent,
    last: Intent,
    what: { playerId: string; amountMsat: string; role: string },
    attempts: number,
  ): boolean | 'again' {
    if (last.status === 'creating' || last.status === 'held' || last.status === 'queued') {
      return false;
    }
    // A payment whose answer was lost may have paid: never sent again (an operator decides).
    if (last.status === 'unknown') return this.#engine.rulesOf(last.kind).lostAnswer === 'proof';
    if (last.status === 'pending' || last.status === 'completed') return true;
    // Ended unpaid: issued again only when nobody can hold its code, or an operator said so.
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

  async #follow(intent: Intent, what: 'moved' | 'latePayment'): Promise<void> {
    if (typeof intent.meta.payKey === 'string') return this.#repay(intent);
    if (intent.groupId === null || !isEntryFee(intent)) return;
    const match = await this.#engine.ledger.get(intent.groupId);
    if (!isMatch(match)) return;
    if (match.status === 'creating') {
      if (what !== 'moved' || intent.status !== 'completed') return;
      const group = await this.#engine.ledger.byGroup(match.id);
      // A lost charge that a new one replaced, paid after all: refunded.
      if (replacedFees(group).has(intent.id)) await this.#refund(match, group, intent, REPLACED);
      else await this.#checkFunded(match, group);
      return;
    }
    if (match.status === 'pending') {
      if (!this.#recordedElsewhere(match)) {
        await this.#finish(match);
        return;
      }
      // Its finish is the recorder's; a fee paid late is this move's own to refund.
      this.#finishSoon(match);
    }
    if (what === 'moved' && intent.status !== 'completed') return;
    const fee = (await this.#engine.ledger.get(intent.id)) ?? intent;
    const group = await this.#engine.ledger.byGroup(match.id);
    const decision = decisionOf(match);
    const why = refundReason(fee, decision, replacedFees(group));
    if (why === null) return;
    await this.#refund(match, group, fee, why);
  }

  /** Gives a fee back to its player, once (`<fee>:refund`). */
  #refund(
    match: MatchIntent,
    group: readonly Intent[],
    fee: Intent,
    why: string,
  ): Promise<boolean> {
    return this.#pay(match, group, `${fee.id}:refund`, {
      playerId: fee.playerId,
      amountMsat: fee.amount,
      description: `${termsOf(match).description}: refund (${why})`,
      role: 'refund',
      why,
      feeId: fee.id,
    });
  }

  /**
   * An attempt that ended unpaid is issued again by the match's finish, at once. Should this
   * process stop first, the money is in the match's escrow and the live audit finds it.
   */
  async #repay(attempt: Intent): Promise<void> {
    const unpaid = attempt.status === 'failed' || attempt.status === 'expired';
    // A held payout approved, or a queued one sent: the match that waited may end.
    const approved =
      attempt.status === 'pending' &&
      (typeof attempt.meta.approvedBy === 'string' || attempt.history[0]?.to === 'queued');
    if ((!unpaid && !approved) || attempt.groupId === null) return;
    const match = await this.#engine.ledger.get(attempt.groupId);
    if (!isMatch(match)) return;
    // At once, not at its next timer; a queue's payouts share one look soon.
    if (match.status === 'pending') {
      const queued = approved && typeof attempt.meta.approvedBy !== 'string';
      if (queued || this.#recordedElsewhere(match)) this.#finishSoon(match);
      else await this.#finish(match);
      return;
    }
    if (isTerminal(match.status) && unpaid) await this.#finish(match);
  }

  /** Issues now an attempt an operator marked (operator.ts): the new attempt, or null for now. */
  async reissue(marked: Intent): Promise<Intent | null> {
    await this.#repay(marked);
    if (marked.groupId === null) return null;
    const group = await this.#engine.ledger.byGroup(marked.groupId);
    const latest = group.filter((i) => i.meta.payKey === marked.meta.payKey).at(-1);
    return latest === undefined || latest.id === marked.id ? null : latest;
  }

  /**
   * The roster has paid: the funded flag, then the event's once-marker in the ledger (two fees
   * paid together both get here). The fee's move made the match due, so a stop is finished later.
   */
  async #checkFunded(match: MatchIntent, read?: readonly Intent[]): Promise<void> {
    const terms = termsOf(match);
    if (seatsOf(terms) === 0) return;
    const group = read ?? (await this.#engine.ledger.byGroup(match.id));
    if (!rosterPaid(terms, group)) return;
    const current = await this.#engine.ledger.get(match.id);
    if (!isMatch(current) || current.status !== 'creating') return;
    const updated = current.meta.funded
      ? current
      : await this.#engine.ledger.update(match.id, 'creating', {
          meta: { ...current.meta, funded: true },
        });
    if (!isMatch(updated)) return;
    if (!(await this.#engine.ledger.recordEvent(`once:match.funded:${match.id}`))) return;
    this.#moves.publish({ what: 'changed', intent: updated });
    this.#engine.emit('match.funded', viewOf(updated, group));
  }

  /** What a paid fee's follow-up would have done, from the ledger: refund replaced, fund. */
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

  /** Closes an open fee: its deadline becomes now and its check closes the charge (or later). */
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

/** When an open match times out: `expiresAt`, or `timeoutMs` after its last write. */
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

/** A deciding match still waits for its queue: a payout not recorded yet, or not sent yet. */
function waitsForQueue(match: MatchIntent, group: readonly Intent[]): boolean {
  const { attempts } = indexOf(group);
  for (const payout of decisionOf(match).payouts) {
    const last = attempts.get(payoutKey(match.id, payout.playerId))?.at(-1);
    if (last === undefined || WAITING.has(last.status)) return true;
  }
  return false;
}

const WAITING: ReadonlySet<Intent['status']> = new Set(['queued', 'held', 'creating']);

/** A group's attempts by pay key and latest fee by player. */
interface GroupIndex {
  attempts: Map<string, Intent[]>;
  fees: Map<string, EntryFeeIntent>;
}

/** Once per read of a group: a search per winner would make each look cost n². */
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
