/**
 * Every path the client calls, in one table. The contract names some; the service's public
 * docs and SDKs name the rest (SERVICE-NOTES.md). Docs move, so each entry can be replaced
 * through `new PaymentsApi({ paths: { ... } })`. `{id}`-style placeholders are filled with
 * the URL-encoded argument.
 */

export const DEFAULT_PATHS = {
  wallet: '/v0/wallet',
  paymentsSend: '/v0/payments',
  paymentsGet: '/v0/payments/{id}',
  lnAddressSendPayment: '/v0/ln-address/send-payment',
  lnAddressValidate: '/v0/ln-address/validate/{id}',
  withdrawalRequestsCreate: '/v0/withdrawal-requests',
  withdrawalRequestsGet: '/v0/withdrawal-requests/{id}',
  staticChargesCreate: '/v0/static-charges',
  staticChargesGet: '/v0/static-charges/{id}',
  staticChargesUpdate: '/v0/static-charges/{id}',
  widgetUsersCreate: '/api/v1/widget/users',
  widgetUsersDeplete: '/api/v1/widget/users/deplete',
  widgetUsersUpdate: '/api/v1/widget/users/{id}',
  widgetUsersDisclosures: '/api/v1/widget/users/{id}/disclosures',
  widgetSessionsCreate: '/api/v1/widget/users/session',
  rampSessionsCreate: '/api/v1/ramp-widget',
  prodIps: '/v0/prod-ips',
  isSupportedRegion: '/v0/is-supported-region/{id}',
  btcUsd: '/v0/btcusd',
} as const;

export type PathName = keyof typeof DEFAULT_PATHS;
export type PathTable = Record<PathName, string>;

/** The production base URL (older SDKs used https://api.zebedee.io). */
export const DEFAULT_BASE_URL = 'https://api.zbdpay.com';

export function resolvePaths(overrides: Partial<PathTable> = {}): PathTable {
  const table: PathTable = { ...DEFAULT_PATHS };
  for (const name of Object.keys(DEFAULT_PATHS) as PathName[]) {
    const path = overrides[name];
    if (path !== undefined) table[name] = path;
  }
  return table;
}

export function fillPath(template: string, id?: string): string {
  if (id === undefined) return template;
  return template.replace('{id}', encodeURIComponent(id));
}
