/**
 * The payout queue: payouts recorded `queued` (a settle with many winners, `rewardMany`) are
 * sent in their turn, by whichever process claims them, exactly once each.
 *
 * A queued payout is due at once, so the reconciler's leased claim (`claimDue`) hands it to one
 * process; its check comes here (Engine.drainWith). The drain asks the breaker (payouts paused:
 * it stays queued, looked at again later), takes a token of the game's rate as a payout, then
 * moves it `queued -> creating` by compare-and-set and sends it through its kind's second half
 * (kinds/payouts.ts), as an operator's approval does. Of two processes that both got this far
 * (a lease that ran out while a token was awaited), the compare-and-set lets one send; the other
 * gives its token back. A process killed before its move leaves the payout queued: its lease
 * ends and another process sends it; one killed after it leaves a `creating` payout, which the
 * reconciler makes `unknown` after the grace period (never sent twice).
 *
 * The pace is the reconciler's: with `rateLimit`, each tick claims up to a second's worth of
 * the rate of queued payouts beside its re-reads (reconciler.ts), and the scheduler serves them
 * as payouts; without a rate, queued payouts count as the reconciler's checks (checksPerSecond).
 *
 * Footprint: nothing of its own; per payout one compare-and-set, then the create.
 */
import { PayoutsPausedError } from '../errors.js';
import type { Intent } from '../ledger/intent.js';
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

export class PayoutQueue {
  readonly #engine: Engine;

  constructor(engine: Engine) {
    this.#engine = engine;
    engine.drainWith((intent) => this.#drain(intent));
  }

  async #drain(intent: Intent): Promise<Intent> {
    const engine = this.#engine;
    try {
      await engine.breaker.admit(BigInt(intent.amount));
    } catch (err) {
      if (!(err instanceof PayoutsPausedError)) throw err;
      // Paused: it keeps its place, and goes when payouts resume.
      const later = await engine.ledger.update(intent.id, 'queued', {
        nextCheckAt: engine.now() + PAUSED_RETRY_MS,
      });
      return later ?? intent;
    }
    // With the game's rate, the token first: the move and the send follow at once.
    const ticket = engine.outbound ? await engine.outbound.reserve('payout') : null;
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
}
