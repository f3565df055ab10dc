/**
 * The payout queue: payouts recorded `queued` (a settle with many winners, `rewardMany`) are
 * sent in their turn, by whichever process claims them, exactly once each. A queued payout is due
 * at once, so the reconciler's leased claim hands it to one process (checks.ts sends it here).
 * The drain takes its token first, then reads what may stop it (a pause, its player blocked),
 * then moves it `queued -> creating` by compare-and-set and sends it through its kind's second
 * half: of two processes that got this far, one sends. A process killed before the move leaves
 * it queued for another; one killed after leaves it `creating`, made `unknown` by the grace.
 *
 * Footprint: per payout two keyed reads (pause, block), one compare-and-set, then the create.
 */
import { PayoutsPausedError } from '../errors.js';
import type { Intent } from '../ledger/intent.js';
import { fromPot } from '../ledger/journal.js';
import type { Engine } from './engine.js';
import { claimTimeFromNow, sendRecordedPayout } from './kinds/payouts.js';
import { startReward } from './kinds/reward.js';
import type { ParsedReward } from './operations/inputs.js';

/** What `rewardMany` did with each reward of its list. */
export interface RewardManyResult {
  /** The rewards recorded, in the list's order: `queued` (or `held`, when the approvals hold one). */
  intents: Intent[];
  /** The rewards refused, each with its place in the list and why: nothing recorded or sent for them. */
  refused: { index: number; playerId: string; error: Error }[];
}

/**
 * Records rewards for the queue in the list's order, each as `reward` would (so an earlier one
 * takes a budget first); one refused does not stop the others.
 */
export async function queueRewards(
  engine: Engine,
  list: readonly ParsedReward[],
): Promise<RewardManyResult> {
  const result: RewardManyResult = { intents: [], refused: [] };
  for (const [index, args] of list.entries()) {
    try {
      result.intents.push(await startReward(engine, args, { queue: true }));
    } catch (err) {
      result.refused.push({ index, playerId: args.playerId, error: err as Error });
    }
  }
  return result;
}

/** How soon a queued payout is looked at again while payouts are paused. */
const PAUSED_RETRY_MS = 15_000;

/** Who the operator log names for a queued payout refused because its player is blocked. */
const QUEUE = 'payout queue';

export class PayoutQueue {
  readonly #engine: Engine;

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  /** A queued payout's turn has come (its check): sent now, kept for later, or refused. */
  async drain(intent: Intent): Promise<Intent> {
    const engine = this.#engine;
    // Paused here already: no token is spent on it.
    if (engine.breaker.paused) return this.#later(intent);
    // The token first: it may take seconds, so what may stop the payout is read after it; a
    // payout stopped then gives its token back.
    const ticket = engine.outbound ? await engine.outbound.reserve('payout') : null;
    const stop = await this.#stopped(intent);
    if (stop !== null) {
      if (ticket) engine.outbound?.release(ticket);
      return stop === 'paused' ? this.#later(intent) : this.#refuseBlocked(intent);
    }
    const taken = await engine.apply(
      intent,
      'creating',
      claimTimeFromNow(engine, intent),
      'its turn in the queue',
    );
    if (!taken) {
      if (ticket) engine.outbound?.release(ticket);
      return (await engine.ledger.get(intent.id)) ?? intent;
    }
    return sendRecordedPayout(engine, taken, ticket, 'queued');
  }

  /**
   * Whether the payout may not go now: payouts paused (the operator's pause in the ledger, then
   * followed here, or this process's breaker), or its player blocked (a match's payout is its
   * pot's debt: paid to a blocked player too). The breaker is asked last, so a pause here while
   * the reads ran stops it too.
   */
  async #stopped(intent: Intent): Promise<'paused' | 'blocked' | null> {
    const { breaker, ledger } = this.#engine;
    const potDebt = fromPot(intent);
    const [pause, blocked] = await Promise.all([
      ledger.payoutPause(),
      potDebt ? false : ledger.isBlocked(intent.playerId),
    ]);
    if (pause !== null && breaker.paused === null) breaker.pauseByOperator(pause.by, pause.note);
    try {
      await breaker.admit(BigInt(intent.amount));
    } catch (err) {
      if (!(err instanceof PayoutsPausedError)) throw err;
      return 'paused';
    }
    return blocked ? 'blocked' : null;
  }

  /** Paused: it keeps its place, and goes when payouts resume. */
  async #later(intent: Intent): Promise<Intent> {
    const engine = this.#engine;
    const later = await engine.ledger.update(intent.id, 'queued', {
      nextCheckAt: engine.now() + PAUSED_RETRY_MS,
    });
    return later ?? intent;
  }

  /** Its player was blocked while it waited: `failed` unsent, as an operator's reject. */
  async #refuseBlocked(intent: Intent): Promise<Intent> {
    const engine = this.#engine;
    const why = `player ${intent.playerId} is blocked`;
    const refused = await engine.apply(
      intent,
      'failed',
      { meta: { ...intent.meta, rejectedBy: QUEUE }, error: `${why}: never sent` },
      why,
    );
    if (!refused) return (await engine.ledger.get(intent.id)) ?? intent;
    await engine.ledger.recordOperatorAction(
      {
        by: QUEUE,
        action: 'reject',
        intentId: intent.id,
        playerId: intent.playerId,
        before: 'queued',
        after: 'failed',
        note: `${why}: never sent`,
      },
      engine.now(),
    );
    engine.logger.warn(`queued ${intent.kind} ${intent.id} not sent: ${why}`);
    return refused;
  }
}
