/**
 * The operator's actions on the game's money, each a compare-and-set through the engine (or, for
 * a block, in the ledger) and one line in the ledger's append-only operator log (who, when, what,
 * on which intent or player, before -> after, why), in the same call:
 *
 *   resolve(id, status, note, by)  an `unknown` intent -> completed | expired | failed
 *   pause(by, why) / resume(by)    the game's payouts, in every process: running <-> paused
 *   reissue(id, by)                a match's payout or refund that expired unclaimed after its
 *                                  code was shown -> a new claim code, once
 *   approve(id, by)                a payout the approvals held -> creating, then sent as any
 *   reject(id, by, why)            a held payout -> failed, never sent (a match's: to the house)
 *   block(playerId, by, why)       the player's money helpers refused (PlayerBlockedError), in
 *   unblock(playerId, by)          every process, until unblocked; codes they hold stay valid
 *
 * An action that does not apply to what the ledger holds is refused (OperatorRefusedError) and
 * records nothing. A line is written once the move it records was made, by the one caller whose
 * compare-and-set won: a process that dies between the two leaves the move (and, for a resolve or
 * a reissue, the operator's name in the intent's history or meta) without its line.
 *
 * Footprint: an action costs its move and one append; `refuseBlocked`, which every money helper
 * runs first, one keyed read of the ledger (each store's header says what that read costs).
 */
import { z } from 'zod';
import { OperatorRefusedError } from '../errors.js';
import { idInput } from '../ids.js';
import type { Intent, IntentPatch } from '../ledger/intent.js';
import { fromPot } from '../ledger/journal.js';
import type {
  NewOperatorAction,
  OperatorAction,
  OperatorLogPage,
  OperatorLogQuery,
} from '../ledger/operator-log.js';
import type { Engine } from './engine.js';
import { isClaimCode } from './kinds/index.js';
import { reissuedByOperator, wasShown } from './kinds/payout-position.js';
import { claimTimeFromNow, sendRecordedPayout } from './kinds/payouts.js';
import { pageFields } from './operations/inputs.js';
import type { Ticket } from './outbound.js';

/** What a reissue needs of the matches (match/matches.ts): to issue a marked attempt again. */
export interface Reissuer {
  reissue(marked: Intent): Promise<Intent | null>;
}

/** Who did it: required of every action (resolve's old signature aside). */
export const operatorName = z
  .string({ error: 'must name the operator (a string)' })
  .trim()
  .min(1, 'must name the operator')
  .max(255);
/** Why: said in the operator's words. */
export const operatorNote = z.string().trim().min(1, 'must say why').max(500);
/**
 * An intent id as the game hands it back: checked before the store sees it, because a store
 * binds what it is given (node:sqlite takes an object for named parameters).
 */
export const intentIdInput = z.string({ error: 'must be an intent id (a string)' }).min(1).max(200);
export const playerIdInput = idInput;
export const resolveStatus = z.enum(['completed', 'expired', 'failed']);
/** How many held payouts one read lists: 1 to 1,000, default 100. */
export const heldLimit = z.number().int().min(1).max(1000).default(100);
export const operatorLogQuery = z
  .strictObject({
    intentId: z.string().min(1).max(255).optional(),
    playerId: z.string().min(1).max(255).optional(),
    ...pageFields,
  })
  .default({});

/** How often each process looks at the operator's pause in the ledger. */
export const PAUSE_SYNC_MS = 1_000;

/** Recorded as `by` when a resolve names no operator (its signature before the log). */
const UNNAMED = 'unnamed operator';

export class Operator {
  readonly #engine: Engine;
  readonly #matches: Reissuer;
  #watch: ReturnType<typeof setInterval> | undefined;

  constructor(engine: Engine, matches: Reissuer) {
    this.#engine = engine;
    this.#matches = matches;
  }

  /** An operator's decision about an `unknown` intent: moved, `settled` fired, one line. */
  async resolve(
    id: string,
    status: z.infer<typeof resolveStatus>,
    note: string,
    by: string | undefined,
  ): Promise<Intent> {
    const engine = this.#engine;
    const intent = await engine.ledger.get(id);
    if (!intent) throw new OperatorRefusedError('resolve', 'id', 'names no intent in the ledger');
    if (intent.status !== 'unknown') {
      throw new OperatorRefusedError(
        'resolve',
        'id',
        `names a ${intent.status} intent, not an unknown one`,
      );
    }
    const said = by === undefined ? 'resolved by operator' : `resolved by operator ${by}`;
    const moved = await engine.apply(intent, status, {}, `${said}: ${note}`);
    if (!moved) {
      const now = await engine.ledger.get(id);
      throw new OperatorRefusedError(
        'resolve',
        'id',
        `names an intent that became ${now?.status} meanwhile`,
      );
    }
    await this.#record({
      by: by ?? UNNAMED,
      action: 'resolve',
      intentId: id,
      playerId: intent.playerId,
      before: 'unknown',
      after: status,
      note,
    });
    return moved;
  }

  /**
   * Pauses the game's payouts: the pause and its line in the ledger by one compare-and-set, this
   * process paused at once (the `paused` event fires, its cause `operator`), every other process
   * at its next look (`syncPause`, every PAUSE_SYNC_MS). Refused when an operator's pause holds.
   */
  async pause(by: string, why: string): Promise<OperatorAction> {
    const line = await this.#engine.ledger.recordPause(
      {
        by,
        action: 'pause',
        intentId: null,
        playerId: null,
        before: 'running',
        after: 'paused',
        note: why,
      },
      this.#engine.now(),
    );
    if (!line) {
      const held = await this.#engine.ledger.payoutPause();
      throw new OperatorRefusedError(
        'pause',
        'by',
        `payouts are already paused by operator ${held?.by ?? 'another'} (${held?.note ?? 'paused'})`,
      );
    }
    // A breaker that tripped here keeps its own pause (and reason) until the resume.
    this.#engine.breaker.pauseByOperator(by, why);
    return line;
  }

  /**
   * Lifts the operator's pause of the game's payouts (and this process's breaker, if it
   * tripped), or, with no such pause, this process's breaker's: one line either way. Other
   * processes lift the operator's pause at their next look; a breaker's trip is its process's.
   */
  async resume(by: string): Promise<OperatorAction> {
    const breaker = this.#engine.breaker;
    const local = breaker.paused;
    const line = await this.#liftGamePause(by);
    if (line) {
      breaker.resume();
      return line;
    }
    if (!local) throw new OperatorRefusedError('resume', 'by', 'payouts are not paused');
    breaker.resume();
    return this.#record({
      by,
      action: 'resume',
      intentId: null,
      playerId: null,
      before: `paused (${local.cause})`,
      after: 'running',
      note: '',
    });
  }

  /**
   * `resume()` without a name: lifts an operator's pause in the ledger, if one holds, its line
   * naming no one (this process's own pause was lifted by the caller).
   */
  async resumeUnnamed(): Promise<void> {
    await this.#liftGamePause(UNNAMED);
  }

  /** The compare-and-set that lifts the operator's pause in the ledger, with its line; null if none. */
  #liftGamePause(by: string): Promise<OperatorAction | null> {
    return this.#engine.ledger.recordPause(
      {
        by,
        action: 'resume',
        intentId: null,
        playerId: null,
        before: 'paused (operator)',
        after: 'running',
        note: '',
      },
      this.#engine.now(),
    );
  }

  /**
   * Makes this process's payouts follow the operator's pause in the ledger: paused while it
   * holds (unless already paused), running again once it is lifted (a pause of the breaker's
   * own stays). One keyed read of the ledger.
   */
  async syncPause(): Promise<void> {
    const line = await this.#engine.ledger.payoutPause();
    const breaker = this.#engine.breaker;
    const local = breaker.paused;
    if (line !== null && local === null) breaker.pauseByOperator(line.by, line.note);
    else if (line === null && local?.cause === 'operator') breaker.resume();
  }

  /** Looks at the ledger's pause every PAUSE_SYNC_MS until `close`. */
  watchPause(): void {
    if (this.#watch !== undefined) return;
    this.#watch = setInterval(() => {
      this.syncPause().catch((err: unknown) =>
        this.#engine.logger.warn(`reading the operator's pause: ${(err as Error).message}`),
      );
    }, PAUSE_SYNC_MS);
    this.#watch.unref();
  }

  close(): void {
    clearInterval(this.#watch);
    this.#watch = undefined;
  }

  /**
   * Issues a match's payout or refund again as a new claim code, once: only the latest attempt,
   * a claim code that expired unclaimed after it was shown (one never shown the match issues
   * again by itself). Its amount goes from `house:unclaimed` back to the pot (a journaled
   * update of the expired attempt, `meta.reissuedBy`, whose entry is written at most once) and
   * out again with the new attempt. Resolves with the new attempt.
   */
  async reissue(id: string, by: string): Promise<Intent> {
    const engine = this.#engine;
    const refuse = (problem: string) => new OperatorRefusedError('reissue', 'id', problem);
    const last = await engine.ledger.get(id);
    if (!last || !fromPot(last) || !isClaimCode(last) || last.groupId === null) {
      throw refuse("names no claim code of a match's payout or refund");
    }
    if (last.status !== 'expired') {
      throw refuse(`names a ${last.status} ${roleOf(last)}: only an expired one is issued again`);
    }
    if (!wasShown(last)) {
      throw refuse(`names a ${roleOf(last)} whose code was never shown: the match issues it again`);
    }
    const group = await engine.ledger.byGroup(last.groupId);
    const attempts = group.filter((i) => i.meta.payKey === last.meta.payKey);
    if (attempts.at(-1)?.id !== last.id) throw refuse('names an attempt issued again already');
    if (attempts.some((a) => a.id !== last.id && reissuedByOperator(a))) {
      throw refuse(`the ${roleOf(last)} was issued again by an operator once already`);
    }
    // The compare-and-set: the amount back to the pot, journaled once. A mark an earlier call
    // made whose new attempt could not be created then is taken as it is.
    const marked = reissuedByOperator(last)
      ? last
      : await engine.update(last, { meta: { ...last.meta, reissuedBy: by } });
    if (!marked) throw refuse('names an attempt another call issued again meanwhile');
    const attempt = await this.#matches.reissue(marked);
    if (attempt === null) {
      throw refuse(
        'the new claim code could not be created now (see the log); the amount is back in the pot: call reissue again',
      );
    }
    await this.#record({
      by,
      action: 'reissue',
      intentId: last.id,
      playerId: last.playerId,
      before: 'expired',
      after: attempt.id,
      note: `${roleOf(last)} issued again as ${attempt.id}`,
    });
    return attempt;
  }

  /** Payouts the approvals held, oldest first: what waits for `approve` or `reject`. */
  async held(limit: number): Promise<Intent[]> {
    return this.#engine.ledger.held(limit);
  }

  /**
   * Sends a held payout: the compare-and-set held -> creating (`meta.approvedBy`; a reward's
   * claim time counted from now), its line, then the service called as for any payout. Payouts
   * paused, or the wallet under its floor, refuse it (PayoutsPausedError) with nothing moved.
   * Resolves with the payout as the send left it (pending; failed or unknown when the service
   * refused or did not answer: its error says why, and a match issues its payout again).
   */
  async approve(id: string, by: string): Promise<Intent> {
    const engine = this.#engine;
    const intent = await this.#heldIntent('approve', id);
    await engine.breaker.admit(BigInt(intent.amount));
    // With the game's rate, the token first: the move to `creating` and the send follow at once.
    const ticket = engine.outbound ? await engine.outbound.reserve('payout') : null;
    const patch: IntentPatch = {
      ...claimTimeFromNow(engine, intent),
      meta: { ...intent.meta, approvedBy: by },
    };
    const approved = await engine.apply(intent, 'creating', patch, `approved by ${by}`);
    if (!approved) {
      if (ticket) engine.outbound?.release(ticket);
      throw await this.#movedMeanwhile('approve', id);
    }
    await this.#record({
      by,
      action: 'approve',
      intentId: id,
      playerId: intent.playerId,
      before: 'held',
      after: 'creating',
      note: '',
    });
    try {
      return await this.#send(approved, ticket);
    } catch (err) {
      // The approval stands (its line is written): what the send left is in the ledger.
      engine.logger.warn(
        `approved ${intent.kind} ${id} could not be sent: ${(err as Error).message}`,
      );
      return (await engine.ledger.get(id)) ?? approved;
    }
  }

  /**
   * Ends a held payout unpaid, never sent: held -> failed (`meta.rejectedBy`, the reason in its
   * error), the `settled` event as for any end, one line. A match's payout goes to the house
   * (`house:rejected`) and is not issued again; a reward's amount was never the player's.
   */
  async reject(id: string, by: string, why: string): Promise<Intent> {
    const engine = this.#engine;
    const intent = await this.#heldIntent('reject', id);
    const patch: IntentPatch = {
      meta: { ...intent.meta, rejectedBy: by },
      error: `rejected by operator ${by}: ${why}`,
    };
    const rejected = await engine.apply(intent, 'failed', patch, `rejected by ${by}: ${why}`);
    if (!rejected) throw await this.#movedMeanwhile('reject', id);
    await this.#record({
      by,
      action: 'reject',
      intentId: id,
      playerId: intent.playerId,
      before: 'held',
      after: 'failed',
      note: why,
    });
    return rejected;
  }

  async #heldIntent(action: 'approve' | 'reject', id: string): Promise<Intent> {
    const intent = await this.#engine.ledger.get(id);
    if (!intent) throw new OperatorRefusedError(action, 'id', 'names no intent in the ledger');
    if (intent.status !== 'held') {
      throw new OperatorRefusedError(
        action,
        'id',
        `names a ${intent.status} intent, not a held one`,
      );
    }
    return intent;
  }

  async #movedMeanwhile(action: string, id: string): Promise<OperatorRefusedError> {
    const now = await this.#engine.ledger.get(id);
    return new OperatorRefusedError(
      action,
      'id',
      `names an intent that became ${now?.status} meanwhile`,
    );
  }

  /** Calls the service for an approved payout, by its kind. */
  #send(approved: Intent, ticket: Ticket | null): Promise<Intent> {
    return sendRecordedPayout(this.#engine, approved, ticket);
  }

  /** Blocks a player's money helpers, in every process. */
  async block(playerId: string, by: string, why: string): Promise<OperatorAction> {
    const line = await this.#engine.ledger.recordBlock({
      by,
      action: 'block',
      intentId: null,
      playerId,
      before: 'unblocked',
      after: 'blocked',
      note: why,
    });
    if (!line) throw new OperatorRefusedError('block', 'playerId', 'the player is already blocked');
    this.#engine.logger.warn(`player ${playerId} blocked by ${by}: ${why}`);
    return line;
  }

  async unblock(playerId: string, by: string): Promise<OperatorAction> {
    const line = await this.#engine.ledger.recordBlock({
      by,
      action: 'unblock',
      intentId: null,
      playerId,
      before: 'blocked',
      after: 'unblocked',
      note: '',
    });
    if (!line) throw new OperatorRefusedError('unblock', 'playerId', 'the player is not blocked');
    this.#engine.logger.info(`player ${playerId} unblocked by ${by}`);
    return line;
  }

  async log(query: OperatorLogQuery): Promise<OperatorLogPage> {
    return this.#engine.ledger.operatorLog(query);
  }

  async #record(line: NewOperatorAction): Promise<OperatorAction> {
    return this.#engine.ledger.recordOperatorAction(line, this.#engine.now());
  }
}

function roleOf(intent: Intent): string {
  return intent.meta.matchRole === 'refund' ? 'refund' : 'payout';
}
