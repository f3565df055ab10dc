/** `colyseus-lightning/api`: the typed client of the payments service, usable on its own. */

export { type Clock, ManualClock, systemClock } from '../clock.js';
export * from './answers.js';
export { PaymentsApi, type PaymentsApiOptions } from './client.js';
export { REQUEST_CHANNEL, type RequestEvent } from './diagnostics.js';
export * from './errors.js';
export {
  type DepleteInput,
  DISCLOSURE_TYPES,
  MAX_MSAT,
  type MsatInput,
  type PaymentInput,
  type RampSessionInput,
  type StaticChargeInput,
  type StaticChargeUpdateInput,
  type WidgetSessionInput,
  type WidgetUserInput,
  type WithdrawalRequestInput,
} from './inputs.js';
export type { DepleteResult } from './namespaces/widget-users.js';
export { DEFAULT_BASE_URL, DEFAULT_PATHS, type PathName, type PathTable } from './paths.js';
export { DEFAULT_BACKOFF } from './retry-policy.js';
