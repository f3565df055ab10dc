/**
 * The gate in front of every attempt a provider's transport sends when the game set an outbound
 * rate: one token per attempt, by priority; it hears the provider's 429. server/outbound.ts
 * implements it over the ledger's shared bucket.
 */

export type CallPriority = 'player' | 'payout' | 'read';

/** The order a gate serves waiting calls in. */
export const PRIORITY_ORDER: readonly CallPriority[] = ['player', 'payout', 'read'];

export interface OutboundGate {
  /** Resolves when one attempt of a call of this priority may be sent. */
  acquire(priority: CallPriority): Promise<void>;
  /**
   * The provider answered 429 and asked to wait `waitMs` (its Retry-After, or the backoff): no
   * attempt goes before the wait ends, in any process sharing the store. Resolves once recorded.
   */
  limited(waitMs: number): Promise<void>;
}
