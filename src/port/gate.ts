/**
 * The gate in front of every attempt a provider's transport sends when the game set an outbound
 * rate: one token per attempt, by priority, and it hears the provider's 429. The server's
 * scheduler implements it over the ledger's shared bucket (server/outbound.ts). Priorities: a
 * player's own action, then payouts, then re-reads.
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
