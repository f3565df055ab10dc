/**
 * What stands in front of every attempt the transport sends, when the game set an outbound
 * rate: a gate that hands out one token per attempt, in order of priority, and that hears the
 * service's 429s. The server's scheduler implements it over the ledger's shared bucket
 * (server/outbound.ts); here are only its shape and the one table of priorities.
 *
 * Priorities, first served first: a player's own action (an entry fee, a spend, a session,
 * the region check as they join), then payouts (a reward's withdrawal request, a payment, the
 * checks a payout makes first), then re-reads (a callback's or the reconciler's check). The
 * table says what an operation is; a gate may know more about who waits on it (the server's
 * serves a re-read a player waits on as that player's action, and shares between players).
 */

export type CallPriority = 'player' | 'payout' | 'read';

/** The order a gate serves waiting calls in. */
export const PRIORITY_ORDER: readonly CallPriority[] = ['player', 'payout', 'read'];

export interface OutboundGate {
  /** Resolves when one attempt of a call of this priority may be sent. */
  acquire(priority: CallPriority): Promise<void>;
  /**
   * The service answered 429 and asked to wait `waitMs` (its Retry-After, or the backoff when it
   * said nothing). No attempt of any call goes before the wait ends, in this process or in any
   * that shares the store. Resolves once the hold is recorded.
   */
  limited(waitMs: number): Promise<void>;
}

// biome-ignore format: one operation a line, read as a table
const PRIORITIES: Readonly<Record<string, CallPriority>> = {
  'staticCharges.create':         'player',
  'staticCharges.update':         'player',
  'widgetUsers.create':           'player',
  'widgetUsers.update':           'player',
  'widgetUsers.acceptDisclosures':'player',
  'widgetUsers.deplete':          'player',
  'widgetSessions.create':        'player',
  'ramp.createSession':           'player',
  'utility.isSupportedRegion':    'player',
  'withdrawalRequests.create':    'payout',
  'payments.send':                'payout',
  'lnAddress.sendPayment':        'payout',
  'lnAddress.validate':           'payout',
  'wallet.get':                   'payout',
  'withdrawalRequests.get':       'read',
  'staticCharges.get':            'read',
  'payments.get':                 'read',
  'utility.prodIps':              'read',
};

/** The priority of a client operation (`withdrawalRequests.create`); unknown ones are reads. */
export function priorityOf(operation: string): CallPriority {
  return PRIORITIES[operation] ?? 'read';
}
