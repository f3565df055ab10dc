/**
 * `colyseus-lightning/api`: the typed client of the payments service, usable on its own, in
 * the service's words. An explicit list, held to docs/REFERENCE.md by test/exports.test.ts.
 */

// First: on an older Node, fail here with the version needed, not deep in a dependency.
import '../require-node.js';

export { type Clock, ManualClock } from '../clock.js';
export {
  InvalidArgumentError,
  LightningError,
  type LightningErrorCode,
} from '../errors.js';
export type {
  BtcUsdPrice,
  DisclosureAcceptance,
  LnAddressValidation,
  Payment,
  PointTransfer,
  ProdIps,
  RampSessionAnswer,
  RegionSupport,
  StaticCharge,
  Wallet,
  WidgetSessionAnswer,
  WidgetUser,
  WithdrawalRequest,
} from './answers.js';
export type { DepleteResult } from './calls.js';
export { PaymentsApi, type PaymentsApiOptions } from './client.js';
export { REQUEST_CHANNEL, type RequestEvent } from './diagnostics.js';
export {
  AmbiguousResultError,
  AuthenticationError,
  ConnectionError,
  InsufficientPointsError,
  InvalidRequestError,
  NotFoundError,
  PaymentsApiError,
  PermissionError,
  RateLimitError,
  ServiceError,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.js';
export {
  type CallLimits,
  type DepleteInput,
  DISCLOSURE_TYPES,
  type LnAddressPaymentInput,
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
export { DEFAULT_BASE_URL, DEFAULT_PATHS, type PathName, type PathTable } from './operations.js';
export { DEFAULT_BACKOFF } from './retry-policy.js';
