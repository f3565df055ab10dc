/**
 * The payout queue: payouts recorded `queued` (a settle with many winners, `rewardMany`) are
 * sent in their turn, by whichever process claims them, exactly once each.
 *
 * A queued payout is due at once, so the reconciler's leased claim (`claimDue`) hands it to one
 * process; its check comes here (checks.ts). The drain takes a token of the game's rate
 * as a payout, then reads what may stop it, after the token (which may take seconds): payouts
 * paused (the operator's pause in the ledger, this process's breaker: it stays queued, looked at
 * again later, its token given back) or, for a reward of the game's own, its player blocked (it
 * ends `failed`, never sent, with a line in the operator log; a match's payout is its pot's debt,
 * paid as when it is not queued). Then it moves `queued -> creating` by compare-and-set and
 * sends it through its kind's second half (kinds/payouts.ts), as an operator's approval does.
 * After `pause()` returns, no payout is sent but those already `creating`, in the pausing
 * process; another process may still move one whose read came in the round trip before the
 * pause was written. Of two processes that both got this far
 * (a lease that ran out while a token was awaited), the compare-and-set lets one send; the other
 * gives its token back. A process killed before its move leaves the payout queued: its lease
 * ends and another process sends it; one killed after it leaves a `creating` payout, which the
 * reconciler makes `unknown` after the grace period (never sent twice).
 *
 * The pace is the reconciler's: with `rateLimit`, each tick claims up to a second's worth of
 * the rate of queued payouts beside its re-reads (reconciler.ts), and the scheduler serves them
 * as payouts; without a rate, queued payouts count as the reconciler's checks (checksPerSecond).
 *
 * Footprint: nothing of its own; per payout two keyed reads (pause, and the block but for a
 * match's payout), one compare-and-set,
 * then the create.
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
 * Records rewards parsed where the call entered (`rewardManyInput`) for the queue, one after
 * the other in the list's order, each as `reward` would (a blocked player, the single-payout
 * cap, the budgets and open-intent limits in the ledger's atomic create): so an earlier reward
 * takes a budget first. One refused does not stop the others.
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
    // With the game's rate, the token first: it may take seconds, so what may stop the payout
    // (a pause here or in another process, the player's block) is read after it, just before the
    // move; a payout stopped then gives its token back to the next call.
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
    try {
      return await sendRecordedPayout(engine, taken, ticket);
    } catch (err) {
      // What the send left (failed, unknown) is in the ledger: the match or the game hears of it
      // by the move, as for any payout.
      engine.logger.warn(
        `queued ${intent.kind} ${intent.id} could not be sent: ${(err as Error).message}`,
      );
      return (await engine.ledger.get(intent.id)) ?? taken;
    }
  }

  /**
   * Whether the payout may not go now: payouts paused (an operator's pause in the ledger, which
   * this process then follows at once, or this process's breaker, wallet floor included), or its
   * player blocked (not read for a match's payout: its pot's debt is paid to a blocked player
   * as when it is not queued). Two keyed reads of the ledger at most; the breaker is asked last,
   * so a pause in this process while they ran stops it too.
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

  /**
   * Its player was blocked while it waited (a reward of the game's own): it ends `failed`, never
   * sent, as an operator's rejection of a held payout does (`meta.rejectedBy`), its amount back
   * to the game. One line in the operator log says so.
   */
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
