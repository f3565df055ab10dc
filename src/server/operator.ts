/**
 * The operator's actions on the game's money (resolve an unknown, pause and resume payouts,
 * reissue an expired shown code, approve or reject a held payout, block a player): each a
 * compare-and-set, then one line in the ledger's append-only operator log, written by the one
 * caller whose compare-and-set won. An action that does not apply is refused
 * (OperatorRefusedError) and records nothing.
 *
 * Footprint: an action costs its move and one append.
 */
import { z } from 'zod';
import { OperatorRefusedError } from '../errors.js';
import { idInput } from '../id-input.js';
import type { Intent, IntentPatch, IntentStatus } from '../ledger/intent.js';
import { fromPot } from '../ledger/journal.js';
import type { NewOperatorAction, OperatorAction } from '../ledger/operator-log.js';
import type { Engine } from './engine.js';
import { isClaimCode } from './kinds/index.js';
import { reissuedByOperator, wasShown } from './kinds/payout-position.js';
import { claimTimeFromNow, sendRecordedPayout } from './kinds/payouts.js';
import type { Matches } from './match/matches.js';
import { pageFields } from './operations/inputs.js';

/** Who did it. */
export const operatorName = z
  .string({ error: 'must name the operator (a string)' })
  .trim()
  .min(1, 'must name the operator')
  .max(255);
/** Why: said in the operator's words. */
export const operatorNote = z.string().trim().min(1, 'must say why').max(500);
/** Checked before the store sees it: node:sqlite would bind an object as named parameters. */
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
const PAUSE_SYNC_MS = 1_000;

/** A line about the game as a whole, not one intent or player. */
const ON_GAME = { intentId: null, playerId: null };

/** Recorded as `by` when a resolve names no operator. */
const UNNAMED = 'unnamed operator';

export class Operator {
  readonly #engine: Engine;
  /** What a reissue needs of the matches: to issue a marked attempt again. */
  readonly #matches: Pick<Matches, 'reissue'>;
  #watch: ReturnType<typeof setInterval> | undefined;

  constructor(engine: Engine, matches: Pick<Matches, 'reissue'>) {
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
    const intent = await this.#intentIn('resolve', id, 'unknown');
    const said = by === undefined ? 'resolved by operator' : `resolved by operator ${by}`;
    const line = { action: 'resolve', by: by ?? UNNAMED, note } as const;
    return this.#move(intent, status, {}, `${said}: ${note}`, line);
  }

  /** Pauses the game's payouts: this process at once, the others at their next `syncPause`. */
  async pause(by: string, why: string): Promise<OperatorAction> {
    const line = await this.#engine.ledger.recordPause(
      { ...ON_GAME, by, action: 'pause', before: 'running', after: 'paused', note: why },
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

  /** Lifts the operator's pause (and this process's breaker), or else this process's breaker's. */
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
    const before = `paused (${local.cause})`;
    return this.#record({ ...ON_GAME, by, action: 'resume', before, after: 'running', note: '' });
  }

  /** `resume()` without a name: lifts an operator's pause in the ledger, if one holds. */
  async resumeUnnamed(): Promise<void> {
    await this.#liftGamePause(UNNAMED);
  }

  /** Lifts the operator's pause in the ledger, with its line; null if none. */
  #liftGamePause(by: string): Promise<OperatorAction | null> {
    return this.#engine.ledger.recordPause(
      { ...ON_GAME, by, action: 'resume', before: 'paused (operator)', after: 'running', note: '' },
      this.#engine.now(),
    );
  }

  /** This process's payouts follow the operator's pause in the ledger (a breaker's own stays). */
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
   * Issues a match's latest payout or refund, a code that expired unclaimed after it was shown,
   * again, once: its amount goes from `house:unclaimed` back to the pot (journaled once by
   * `meta.reissuedBy`) and out with the new attempt.
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
    // A mark of an earlier call whose new attempt could not be created is taken as it is.
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

  /** Sends a held payout (refused, nothing moved, while payouts are paused). */
  async approve(id: string, by: string): Promise<Intent> {
    const engine = this.#engine;
    const intent = await this.#intentIn('approve', id, 'held');
    await engine.breaker.admit(BigInt(intent.amount));
    // The token first: the move to `creating` and the send follow at once.
    const ticket = engine.outbound ? await engine.outbound.reserve('payout') : null;
    const patch = { ...claimTimeFromNow(engine, intent), meta: { ...intent.meta, approvedBy: by } };
    const line = { action: 'approve', by, note: '' } as const;
    const approved = await this.#move(intent, 'creating', patch, `approved by ${by}`, line).catch(
      (err: unknown) => {
        if (ticket) engine.outbound?.release(ticket);
        throw err;
      },
    );
    // The approval stands (its line is written) whatever the send does.
    return sendRecordedPayout(engine, approved, ticket, 'approved');
  }

  /** Ends a held payout unsent: failed; a match's payout goes to the house, not issued again. */
  async reject(id: string, by: string, why: string): Promise<Intent> {
    const intent = await this.#intentIn('reject', id, 'held');
    const patch = {
      meta: { ...intent.meta, rejectedBy: by },
      error: `rejected by operator ${by}: ${why}`,
    };
    const line = { action: 'reject', by, note: why } as const;
    return this.#move(intent, 'failed', patch, `rejected by ${by}: ${why}`, line);
  }

  /** Moves an intent an action found as it wanted, then writes the action's line. */
  async #move(
    intent: Intent,
    to: IntentStatus,
    patch: IntentPatch,
    history: string,
    line: Pick<NewOperatorAction, 'action' | 'by' | 'note'>,
  ): Promise<Intent> {
    const moved = await this.#engine.apply(intent, to, patch, history);
    if (!moved) {
      const now = await this.#engine.ledger.get(intent.id);
      throw new OperatorRefusedError(
        line.action,
        'id',
        `names an intent that became ${now?.status} meanwhile`,
      );
    }
    const { id: intentId, playerId, status: before } = intent;
    await this.#record({ ...line, intentId, playerId, before, after: to });
    return moved;
  }

  async #intentIn(action: string, id: string, status: 'held' | 'unknown'): Promise<Intent> {
    const intent = await this.#engine.ledger.get(id);
    if (!intent) throw new OperatorRefusedError(action, 'id', 'names no intent in the ledger');
    if (intent.status !== status) {
      const wanted = status === 'held' ? 'a held' : 'an unknown';
      throw new OperatorRefusedError(
        action,
        'id',
        `names a ${intent.status} intent, not ${wanted} one`,
      );
    }
    return intent;
  }

  /** Blocks a player's money helpers, in every process. */
  async block(playerId: string, by: string, why: string): Promise<OperatorAction> {
    const line = await this.#recordBlock({ playerId, by, action: 'block', note: why });
    this.#engine.logger.warn(`player ${playerId} blocked by ${by}: ${why}`);
    return line;
  }

  async unblock(playerId: string, by: string): Promise<OperatorAction> {
    const line = await this.#recordBlock({ playerId, by, action: 'unblock', note: '' });
    this.#engine.logger.info(`player ${playerId} unblocked by ${by}`);
    return line;
  }

  /** A block or an unblock with its line, once; refused when the player is so already. */
  async #recordBlock(
    line: Pick<NewOperatorAction, 'playerId' | 'by' | 'note'> & { action: 'block' | 'unblock' },
  ): Promise<OperatorAction> {
    const blocking = line.action === 'block';
    const [before, after] = blocking ? ['unblocked', 'blocked'] : ['blocked', 'unblocked'];
    const done = await this.#engine.ledger.recordBlock({ ...line, intentId: null, before, after });
    if (done) return done;
    const problem = blocking ? 'the player is already blocked' : 'the player is not blocked';
    throw new OperatorRefusedError(line.action, 'playerId', problem);
  }

  async #record(line: NewOperatorAction): Promise<OperatorAction> {
    return this.#engine.ledger.recordOperatorAction(line, this.#engine.now());
  }
}

function roleOf(intent: Intent): string {
  return intent.meta.matchRole === 'refund' ? 'refund' : 'payout';
}
