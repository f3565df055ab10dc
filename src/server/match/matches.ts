/**
 * Matches: a pot held in escrow, paid out or refunded exactly once, whatever crashes.
 *
 * A match is an intent of kind `match`; its fees, payouts and refunds are intents grouped under
 * its id. open --settle/abort by compare-and-set--> deciding (pending) --all made--> settled |
 * aborted. The first decision stands (anything else: MatchClosedError); the pot is the fees paid
 * when it was decided, and a fee paid later is refunded. Payouts and refunds have fixed ids, so
 * a second attempt in any process is a duplicate the ledger refuses, never a second payment.
 * Seats are taken in the fee's atomic create; a decided match stays due in the reconciler until
 * it ends, so any process finishes it. Footprint: a few reads of the group per call; no timers.
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
import type { Engine } from '../engine.js';
import { entryFee, startEntryFee } from '../kinds/entry-fee.js';
import { type EntryFeeIntent, isEntryFee } from '../kinds/guards.js';
import { decisionOf, isMatch, type MatchIntent, newMatch, termsOf } from '../kinds/match.js';
import type { MatchDecision, MatchTerms } from '../kinds/meta.js';
import { startAddressPayment } from '../kinds/payment.js';
import {
  attemptOf,
  MAX_PAYOUT_ATTEMPTS,
  reissuedByOperator,
  wasShown,
} from '../kinds/payout-position.js';
import { startReward } from '../kinds/reward.js';
import type { Move, Moves } from '../moves.js';
import { type OnBehalf, refuseBlocked } from '../operations/create.js';
import { isAmbiguous } from '../operations/outcome.js';
import { type ParsedEnter, type ParsedOpenMatch, type Shares, seatsOf, splitPot } from './terms.js';
import { type MatchView, matchStatus, paidFees, replacedFees, rosterPaid, viewOf } from './view.js';

/** How soon a decided match that could not finish is looked at again. */
const RETRY_MS = 15_000;
/** Queued payouts made one by one share one look at their match (a look reads the group). */
const PROGRESS_LOOK_MS = 1_000;
/** Payouts a settle records for its queue at once: one by one, round trips would set its pace. */
const RECORDING_LANES = 8;
const REPLACED = 'its charge was replaced by a new one';

/** A payout or refund a match owes. `queue`: recorded for the payout queue. */
interface Owed {
  playerId: string;
  amountMsat: string;
  description: string;
  role: 'payout' | 'refund';
  why: string;
  feeId?: string;
  queue?: boolean;
}

export class Matches {
  readonly #engine: Engine;
  readonly #moves: Moves;
  /** Per match, the finish running here and the one queued after it (later calls share it). */
  readonly #finishing = new Map<
    string,
    { current: Promise<MatchView>; next?: Promise<MatchView> }
  >();
  /** The last `made` each deciding match told (`match.progress`), in this process. */
  readonly #told = new Map<string, number>();
  /** Attempts started here: a finish that started none need not read its group again. */
  #attempted = 0;
  /** Matches with a look soon (#finishSoon). */
  readonly #lookSoon = new Set<string>();

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
    const { roomId, entryFeeMsat, feeExpiresIn, timeoutMs, claimExpiresIn, description } = args;
    const terms: MatchTerms = {
      seatGuard: true,
      entryFeeMsat,
      rakeBps: Math.round(args.rake * 10_000),
      feeExpiresIn,
      timeoutMs,
      claimExpiresIn,
      description,
      ...(args.players ? { roster: args.players } : {}),
      ...(args.seats ? { seats: args.seats } : {}),
    };
    // Its player is never a player: a match counts against nobody's limits. A fee paid in
    // brings `nextCheckAt` forward; `expiresAt` is the timeout.
    const fields = { id, roomId, playerId: `match:${id}`, amount: entryFeeMsat, unit: 'msats' };
    const at = now + timeoutMs;
    const match = await this.#engine.record(
      newMatch({
        ...fields,
        description,
        groupId: id,
        expiresAt: at,
        nextCheckAt: at,
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
    const { roster } = termsOf(match);
    if (roster && !roster.includes(args.playerId)) {
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
   * Charges the player's fee. One whose create answer was lost (a code nobody saw) is replaced at
   * once by a charge naming it (`meta.replaces`), keyed by it so that two calls make one charge;
   * the lost one never counts, and is refunded if paid after all.
   */
  async #charge(match: MatchIntent, args: ParsedEnter, lost: string | undefined): Promise<Intent> {
    const terms = termsOf(match);
    let replaces = lost;
    for (let attempt = 0; ; attempt++) {
      const id = uuidv7();
      const replacing = replaces === undefined ? {} : { replaces };
      // Taken in the create's atomic step; a roster names its players, one seat each.
      const seats = terms.seats === undefined || terms.roster ? {} : { seats: terms.seats };
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
              ...replacing,
              ...(args.lnAddress ? { lnAddress: args.lnAddress } : {}),
            },
            guards: { ...this.#engine.guards(entryFee.kind), seat: { ...seats, ...replacing } },
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
   * The fee `enter` returns if its match is still open now that the fee is in the ledger (or the
   * decision counted it). Otherwise the entry came too late: its charge is closed, and a payment
   * that slipped in is refunded as paid after the decision.
   */
  async #stillOpen(matchId: string, fee: Intent): Promise<Intent> {
    const match = await this.#match(matchId);
    if (match.status === 'creating' || match.meta.decision?.paidFeeIds.includes(fee.id)) {
      return fee;
    }
    const current = (await this.#engine.ledger.get(fee.id)) ?? fee;
    if (!isTerminal(current.status)) await this.#close(current);
    throw closedError(match);
  }

  /** Pays the pot minus the rake by shares to players who paid in; the first decision stands. */
  settle(matchId: string, shares: Shares): Promise<MatchView> {
    return this.#decide(matchId, 'settle', { shares, reason: null });
  }

  /** Refunds every paid fee and closes every open one; idempotent. */
  abort(matchId: string, reason: string): Promise<MatchView> {
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
    const expiresAt = this.#engine.now() + termsOf(match).timeoutMs;
    await this.#engine.ledger.update(match.id, 'creating', { expiresAt });
  }

  /**
   * The reconciler's look at a due match: abort an open one nobody kept alive, fund one whose
   * roster paid, finish a decided or ended one (what it still owes is paid, once).
   */
  async check(match: Intent): Promise<Intent> {
    if (!isMatch(match)) return match;
    if (match.status !== 'creating') {
      await this.#finish(match);
      if (isTerminal(match.status)) return match;
    } else if (timeoutOf(match) > this.#engine.now()) {
      await this.#lookOpen(match);
    } else {
      await this.#decide(match.id, 'abort', {
        shares: null,
        reason: 'timed out: nobody settled or aborted it (its room or process stopped)',
      }).catch((err: unknown) => {
        if (!(err instanceof MatchClosedError)) throw err;
      });
    }
    return (await this.#engine.ledger.get(match.id)) ?? match;
  }

  /**
   * An open match before its timeout: due again at the timeout before the roster is read (a fee
   * paid from here on makes it due), then what a paid fee's follow-up would have done.
   */
  async #lookOpen(match: MatchIntent): Promise<void> {
    const { ledger } = this.#engine;
    const timeout = timeoutOf(match);
    const waiting =
      match.nextCheckAt === timeout && match.expiresAt !== null
        ? match
        : await ledger.update(match.id, 'creating', { nextCheckAt: timeout, expiresAt: timeout });
    if (!isMatch(waiting)) return;
    const group = await ledger.byGroup(match.id);
    const replaced = replacedFees(group);
    for (const fee of group) {
      if (replaced.has(fee.id) && fee.status === 'completed') {
        await this.#refund(waiting, group, fee, REPLACED);
      }
    }
    await this.#checkFunded(waiting, group);
  }

  /** Settles or aborts by compare-and-set (the first decision wins), then finishes. */
  async #decide(
    id: string,
    kind: MatchDecision['kind'],
    wanted: Pick<MatchDecision, 'shares' | 'reason'>,
  ): Promise<MatchView> {
    let match = await this.#match(id);
    if (match.status === 'creating') {
      const paid = paidFees(await this.#engine.ledger.byGroup(id));
      const pot = paid.reduce((sum, fee) => sum + BigInt(fee.amount), 0n);
      let split = { rakeMsat: 0n, payouts: [] as MatchDecision['payouts'] };
      if (kind === 'settle' && wanted.shares) {
        const payers = new Set(paid.map((fee) => fee.playerId));
        const stranger = Object.keys(wanted.shares).find((playerId) => !payers.has(playerId));
        if (stranger !== undefined) {
          throw new InvalidArgumentError('shares', `names ${stranger}, who has not paid in`);
        }
        split = splitPot(pot, termsOf(match).rakeBps, wanted.shares);
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
        // Due for any other process should this one die before it finishes.
        {
          meta: { ...match.meta, decision },
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
    const { id } = match;
    const slot = this.#finishing.get(id);
    if (slot?.next) return slot.next;
    const run: Promise<MatchView> = (slot?.current ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        const now = this.#finishing.get(id);
        if (now?.next === run) {
          now.current = run;
          delete now.next;
        }
        const read = await this.#engine.ledger.get(id);
        return this.#finishOnce(isMatch(read) ? read : match);
      });
    if (slot) slot.next = run;
    else this.#finishing.set(id, { current: run });
    void run
      .catch(() => {})
      .finally(() => {
        const now = this.#finishing.get(id);
        if (now?.current === run && !now.next) this.#finishing.delete(id);
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
    if (waitsForQueue(match, group)) this.#tellProgress(viewOf(match, group));
    else await this.#finish(match);
  }

  /** A settle's payouts are queued: many winners, and a reconciler here to drain them. */
  #queues(decision: MatchDecision): boolean {
    const { payoutQueue, reconciler } = this.#engine.settings;
    return reconciler.enabled && decision.payouts.length >= payoutQueue.fromWinners;
  }

  async #finishOnce(match: MatchIntent): Promise<MatchView> {
    const { ledger } = this.#engine;
    const decision = decisionOf(match);
    const attempted = this.#attempted;
    let group = await ledger.byGroup(match.id);
    // Read again only when this look started attempts (a queue's group is large).
    const seen = async () => (this.#attempted === attempted ? group : ledger.byGroup(match.id));
    if (isTerminal(match.status)) {
      // An attempt may have ended unpaid since, or a fee come in late: each is paid once more.
      await this.#payAll(match, decision, group, false);
      return viewOf(match, await seen());
    }
    // No one may pay into a decided match: each open fee is closed (one paid just before is
    // refunded below).
    let done = true;
    for (const fee of group.filter((i) => isEntryFee(i) && !isTerminal(i.status))) {
      if (!isTerminal((await this.#close(fee)).status)) done = false;
    }
    group = await ledger.byGroup(match.id);
    if (!(await this.#payAll(match, decision, group, this.#queues(decision)))) done = false;
    if (done) {
      this.#told.delete(match.id);
      return this.#end(match, decision);
    }
    await ledger.update(match.id, 'pending', { nextCheckAt: this.#engine.now() + RETRY_MS });
    const view = viewOf(match, await seen());
    this.#tellProgress(view);
    return view;
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
    const settled = decision.kind === 'settle';
    const event = settled ? 'match.settled' : 'match.aborted';
    const group = await engine.ledger.byGroup(match.id);
    if (await engine.ledger.recordEvent(`once:${event}:${match.id}`)) {
      engine.emit(event, viewOf(ending, group));
    }
    const ended = await engine.apply(
      ending,
      settled ? 'completed' : 'failed',
      {},
      settled ? 'payouts created' : 'refunds created',
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
    let done = true;
    if (decision.kind === 'settle') {
      // The lanes keep the match ahead one after another: one write per period, not one each.
      let ahead = Promise.resolve(this.#engine.now());
      const payouts = decision.payouts.values();
      const lane = async () => {
        for (const { playerId, amountMsat } of payouts) {
          if (queue) {
            ahead = ahead.then((since) => this.#keepAhead(match, since));
            await ahead;
          }
          const owed: Owed = {
            playerId,
            amountMsat,
            description: `${termsOf(match).description}: winnings`,
            role: 'payout',
            why: 'won',
            queue,
          };
          if (!(await this.#pay(match, group, payoutKey(match.id, playerId), owed))) done = false;
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
   * Whether another process is recording this settle's queue (it keeps the match due a grace
   * ahead): a move here (a fee it closed, a payout that failed) would start a second recorder
   * beside it, every create refused as a duplicate. Should the recorder die, the match falls due.
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
    owed: Owed,
  ): Promise<boolean> {
    const index = indexOf(group);
    const attempts = index.attempts.get(key) ?? [];
    const last = attempts.at(-1);
    const made = last === undefined ? 'again' : this.#made(match, last, owed, attempts.length);
    if (made !== 'again') return made;
    const attempt = attempts.length + 1;
    const id = attempt === 1 ? key : `${key}:${attempt}`;
    this.#attempted++;
    // The address the player gave when they entered, for a first attempt.
    const address = attempt === 1 ? index.fees.get(owed.playerId)?.meta.lnAddress : undefined;
    const behalf: OnBehalf = {
      id,
      groupId: match.id,
      meta: {
        matchRole: owed.role,
        payKey: key,
        attempt,
        why: owed.why,
        ...(owed.feeId ? { feeId: owed.feeId } : {}),
      },
      // From the pot, so no budget or open limit; approvals may hold a winner's first attempt,
      // never a refund (a player's own fee).
      guards: owed.role === 'payout' && attempt === 1 ? this.#engine.payoutHold() : {},
      queue: owed.queue === true && attempt === 1 && address === undefined,
    };
    const to = { playerId: owed.playerId, roomId: match.roomId, amountMsat: owed.amountMsat };
    const byCode = () =>
      startReward(
        this.#engine,
        {
          ...to,
          description: owed.description.slice(0, 1000),
          expiresIn: termsOf(match).claimExpiresIn,
        },
        behalf,
      );
    try {
      const made =
        address === undefined
          ? await byCode()
          : await startAddressPayment(
              this.#engine,
              { ...to, lnAddress: address, comment: owed.description.slice(0, 255) },
              behalf,
            ).catch((err: unknown) => {
              // Nothing was recorded or sent: this first attempt is a claim code instead.
              if (!(err instanceof LnAddressRefusedError)) throw err;
              this.#engine.logger.warn(
                `match ${match.id}: ${owed.role} to ${owed.playerId} by claim code: ${err.message}`,
              );
              return byCode();
            });
      if (owed.role === 'refund') this.#engine.emit('match.refund', made, owed.why);
      return made.status === 'pending' || made.status === 'completed';
    } catch (err) {
      if (err instanceof DuplicateIntentError && err.field === 'id') {
        // Another process made this attempt first: judged by the same rules as any.
        const other = await this.#engine.ledger.get(id);
        return other !== null && this.#made(match, other, owed, attempt) === true;
      }
      if (this.#engine.port.failureOf(err).meaning !== 'ambiguous') {
        this.#engine.logger.warn(
          `match ${match.id}: ${owed.role} to ${owed.playerId} not made yet: ${(err as Error).message}`,
        );
      }
      return false;
    }
  }

  /** Whether the latest attempt has made it: true, false (look again) or 'again' (reissue it). */
  #made(match: MatchIntent, last: Intent, owed: Owed, attempts: number): boolean | 'again' {
    const { status } = last;
    if (status === 'creating' || status === 'held' || status === 'queued') return false;
    const rules = this.#engine.rulesOf(last.kind);
    // A payment whose answer was lost may have paid: never sent again (an operator decides).
    if (status === 'unknown') return rules.lostAnswer === 'proof';
    if (status === 'pending' || status === 'completed') return true;
    // Ended unpaid: issued again only when nobody can hold its code, or an operator said so.
    if (rules.mayReissue(last) || (status === 'expired' && reissuedByOperator(last))) {
      return 'again';
    }
    if ((status === 'failed' || !wasShown(last)) && attemptOf(last) >= MAX_PAYOUT_ATTEMPTS) {
      this.#engine.logger.error(
        `match ${match.id}: the ${owed.role} of ${owed.amountMsat} msats to ${owed.playerId} failed ${attempts} times; pay it by hand`,
      );
    }
    return true;
  }

  async #follow(intent: Intent, what: 'moved' | 'latePayment'): Promise<void> {
    if (typeof intent.meta.payKey === 'string') return this.#repay(intent);
    if (intent.groupId === null || !isEntryFee(intent)) return;
    const { ledger } = this.#engine;
    const match = await ledger.get(intent.groupId);
    if (!isMatch(match)) return;
    if (match.status === 'creating') {
      if (what !== 'moved' || intent.status !== 'completed') return;
      const group = await ledger.byGroup(match.id);
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
    const fee = (await ledger.get(intent.id)) ?? intent;
    const group = await ledger.byGroup(match.id);
    const why = refundReason(fee, decisionOf(match), replacedFees(group));
    if (why !== null) await this.#refund(match, group, fee, why);
  }

  /** Gives a fee back to its player, once (`<fee>:refund`). */
  #refund(match: MatchIntent, group: readonly Intent[], fee: Intent, why: string) {
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
   * An attempt that ended unpaid is issued again by the match's finish, at once (should this
   * process stop first, the money is in the escrow and the live audit finds it); a held payout
   * approved, or a queued one sent, lets the match that waited end.
   */
  async #repay(attempt: Intent): Promise<void> {
    const unpaid = attempt.status === 'failed' || attempt.status === 'expired';
    const approvedBy = typeof attempt.meta.approvedBy === 'string';
    const sent =
      attempt.status === 'pending' && (approvedBy || attempt.history[0]?.to === 'queued');
    if ((!unpaid && !sent) || attempt.groupId === null) return;
    const match = await this.#engine.ledger.get(attempt.groupId);
    if (!isMatch(match)) return;
    if (match.status === 'pending') {
      // A queue's payouts share one look soon.
      if ((sent && !approvedBy) || this.#recordedElsewhere(match)) this.#finishSoon(match);
      else await this.#finish(match);
    } else if (isTerminal(match.status) && unpaid) {
      await this.#finish(match);
    }
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
  async #checkFunded(match: MatchIntent, group: readonly Intent[]): Promise<void> {
    const terms = termsOf(match);
    if (seatsOf(terms) === 0 || !rosterPaid(terms, group)) return;
    const { ledger } = this.#engine;
    const current = await ledger.get(match.id);
    if (!isMatch(current) || current.status !== 'creating') return;
    const updated = current.meta.funded
      ? current
      : await ledger.update(match.id, 'creating', { meta: { ...current.meta, funded: true } });
    if (!isMatch(updated) || !(await ledger.recordEvent(`once:match.funded:${match.id}`))) return;
    this.#moves.publish({ what: 'changed', intent: updated });
    this.#engine.emit('match.funded', viewOf(updated, group));
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
    if (!isMatch(match)) throw new InvalidArgumentError('matchId', 'names no match in the ledger');
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

const WAITING: ReadonlySet<Intent['status']> = new Set(['queued', 'held', 'creating']);

/** A deciding match still waits for its queue: a payout not recorded yet, or not sent yet. */
function waitsForQueue(match: MatchIntent, group: readonly Intent[]): boolean {
  const { attempts } = indexOf(group);
  return decisionOf(match).payouts.some(({ playerId }) => {
    const last = attempts.get(payoutKey(match.id, playerId))?.at(-1);
    return last === undefined || WAITING.has(last.status);
  });
}

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
    if (typeof key === 'string') {
      index.attempts.set(key, [...(index.attempts.get(key) ?? []), intent]);
    }
    if (isEntryFee(intent)) index.fees.set(intent.playerId, intent);
  }
  indexes.set(group, index);
  return index;
}
