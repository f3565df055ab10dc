/**
 * What stands in front of every attempt a provider's transport sends, when the game set an
 * outbound rate: a gate that hands out one token per attempt, in order of priority, and that
 * hears the provider's "slow down" (a 429). The server's scheduler implements it over the
 * ledger's shared bucket (server/outbound.ts); a provider's transport asks it (api/outbound.ts
 * holds this service's table of which call is which priority).
 *
 * Priorities, first served first: a player's own action (an entry fee, a spend, a session,
 * the region check as they join), then payouts (a claim code, a payment, the checks a payout
 * makes first), then re-reads (a callback's or the reconciler's check).
 */

export type CallPriority = 'player' | 'payout' | 'read';

/** The order a gate serves waiting calls in. */
export const PRIORITY_ORDER: readonly CallPriority[] = ['player', 'payout', 'read'];

export interface OutboundGate {
  /** Resolves when one attempt of a call of this priority may be sent. */
  acquire(priority: CallPriority): Promise<void>;
  /**
   * The provider answered 429 and asked to wait `waitMs` (its Retry-After, or the backoff when
   * it said nothing). No attempt of any call goes before the wait ends, in this process or in
   * any that shares the store. Resolves once the hold is recorded.
   */
  limited(waitMs: number): Promise<void>;
}
