/**
 * This service's table of priorities: which of its operations is a player's action, a payout
 * or a re-read, for the gate in front of every attempt (port/gate.ts, its shape). The table
 * says what an operation is; a gate may know more about who waits on it (the server's serves a
 * re-read a player waits on as that player's action, and shares between players).
 */
import type { CallPriority } from '../port/gate.js';

export { type CallPriority, type OutboundGate, PRIORITY_ORDER } from '../port/gate.js';

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
