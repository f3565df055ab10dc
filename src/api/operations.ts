/**
 * Every operation the client sends, in one table: its method and path, whether it is safe to
 * send again (retry-policy.ts), its priority at an outbound gate (port/gate.ts), and the schema
 * its answer must pass. The contract names some paths; the service's public docs and SDKs name
 * the rest (SERVICE-NOTES.md). Docs move, so each path can be replaced by its name through
 * `new PaymentsApi({ paths: { ... } })`; `{id}` is filled with the URL-encoded argument.
 */
import type { CallPriority } from '../port/gate.js';
import {
  btcUsdPrice,
  disclosureAcceptance,
  lnAddressValidation,
  payment,
  pointTransfer,
  prodIps,
  rampSession,
  regionSupport,
  staticCharge,
  wallet,
  widgetSession,
  widgetUser,
  withdrawalRequest,
} from './answers.js';
import type { RequestSafety } from './retry-policy.js';

export type { CallPriority, OutboundGate } from '../port/gate.js';

const op = <N extends string, S>(
  pathName: N,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  safety: RequestSafety,
  priority: CallPriority,
  data: S,
) => ({ pathName, method, path, safety, priority, data });

// The priority says what an operation is; a gate may know more about who waits on it (the
// server's serves a re-read a player waits on as that player's action).
// biome-ignore format: one operation a line, read as a table
export const OPERATIONS = {
  'wallet.get':                    op('wallet',                  'GET',   '/v0/wallet',                            'read',    'payout', wallet),
  'payments.send':                 op('paymentsSend',            'POST',  '/v0/payments',                          'unkeyed', 'payout', payment),
  'payments.get':                  op('paymentsGet',             'GET',   '/v0/payments/{id}',                     'read',    'read',   payment),
  'lnAddress.sendPayment':         op('lnAddressSendPayment',    'POST',  '/v0/ln-address/send-payment',           'unkeyed', 'payout', payment),
  'lnAddress.validate':            op('lnAddressValidate',       'GET',   '/v0/ln-address/validate/{id}',          'read',    'payout', lnAddressValidation),
  'withdrawalRequests.create':     op('withdrawalRequestsCreate','POST',  '/v0/withdrawal-requests',               'unkeyed', 'payout', withdrawalRequest),
  'withdrawalRequests.get':        op('withdrawalRequestsGet',   'GET',   '/v0/withdrawal-requests/{id}',          'read',    'read',   withdrawalRequest),
  'staticCharges.create':          op('staticChargesCreate',     'POST',  '/v0/static-charges',                    'unkeyed', 'player', staticCharge),
  'staticCharges.get':             op('staticChargesGet',        'GET',   '/v0/static-charges/{id}',               'read',    'read',   staticCharge),
  'staticCharges.update':          op('staticChargesUpdate',     'PATCH', '/v0/static-charges/{id}',               'unkeyed', 'player', staticCharge),
  'widgetUsers.create':            op('widgetUsersCreate',       'POST',  '/api/v1/widget/users',                  'unkeyed', 'player', widgetUser),
  'widgetUsers.deplete':           op('widgetUsersDeplete',      'POST',  '/api/v1/widget/users/deplete',          'keyed',   'player', pointTransfer),
  'widgetUsers.update':            op('widgetUsersUpdate',       'PATCH', '/api/v1/widget/users/{id}',             'unkeyed', 'player', widgetUser),
  'widgetUsers.acceptDisclosures': op('widgetUsersDisclosures',  'POST',  '/api/v1/widget/users/{id}/disclosures', 'unkeyed', 'player', disclosureAcceptance),
  'widgetSessions.create':         op('widgetSessionsCreate',    'POST',  '/api/v1/widget/users/session',          'unkeyed', 'player', widgetSession),
  'ramp.createSession':            op('rampSessionsCreate',      'POST',  '/api/v1/ramp-widget',                   'unkeyed', 'player', rampSession),
  'utility.prodIps':               op('prodIps',                 'GET',   '/v0/prod-ips',                          'read',    'read',   prodIps),
  'utility.isSupportedRegion':     op('isSupportedRegion',       'GET',   '/v0/is-supported-region/{id}',          'read',    'player', regionSupport),
  'utility.btcUsd':                op('btcUsd',                  'GET',   '/v0/btcusd',                            'read',    'read',   btcUsdPrice),
};

export type Operations = typeof OPERATIONS;
export type OperationName = keyof Operations;
export type PathName = Operations[OperationName]['pathName'];
export type PathTable = Record<PathName, string>;

/** Each path by its name, as `paths` overrides it. */
export const DEFAULT_PATHS: Readonly<PathTable> = Object.freeze(
  Object.fromEntries(Object.values(OPERATIONS).map((o) => [o.pathName, o.path])) as PathTable,
);

/** The production base URL (older SDKs used https://api.zebedee.io). */
export const DEFAULT_BASE_URL = 'https://api.zbdpay.com';
