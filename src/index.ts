/**
 * colyseus-lightning: Lightning payments for Colyseus rooms. This list is the package's
 * promise: docs/EXPORTS.md names every entry and test/exports.test.ts holds the two together.
 * The API client and the emulator have their own entry points (`/api`, `/emulator`).
 */

// First: on an older Node, fail here with the version needed, not deep in a dependency.
import './require-node.js';

// The one error tree.
export {
  AmbiguousResultError,
  AuthenticationError,
  ConnectionError,
  InsufficientPointsError,
  InvalidArgumentError,
  InvalidRequestError,
  NotFoundError,
  PaymentsApiError,
  PermissionError,
  RateLimitError,
  ServiceError,
  TimeoutError,
  UnexpectedResponseError,
} from './api/errors.js';
// Time, for tests that drive it.
export type { Clock } from './clock.js';
export {
  BudgetExceededError,
  type BudgetScope,
  ConfigurationError,
  LightningError,
  type LightningErrorCode,
  LimitExceededError,
  PayoutsPausedError,
} from './errors.js';
export {
  DuplicateIntentError,
  IllegalTransitionError,
  IncompatibleLedgerError,
  IntentLostError,
  InvalidIntentError,
  LedgerBusyError,
  LedgerClosedError,
  LedgerError,
  LedgerNotDurableError,
} from './ledger/errors.js';
// The ledger: the record of every money movement, and the stores that keep it.
export type {
  Intent,
  IntentHistoryEntry,
  IntentKind,
  IntentPatch,
  IntentStatus,
  NewIntent,
} from './ledger/intent.js';
export {
  type RedisClientLike,
  type RedisConnection,
  RedisLedger,
  type RedisLedgerOptions,
} from './ledger/redis.js';
export { SqliteLedger, type SqliteLedgerOptions } from './ledger/sqlite.js';
export type {
  BudgetWindow,
  CreateGuards,
  LedgerStore,
  TransitionOptions,
} from './ledger/store.js';
// The server-level object and its events.
export {
  createLightning,
  Lightning,
  type ReconcilerControl,
} from './lightning.js';
// The room plugin and the state rooms sync.
export type { RoomEventName, RoomListener } from './room/hooks.js';
export type {
  EntryFeeArgs,
  PurchaseArgs,
  RewardArgs,
  SpendArgs,
  WidgetArgs,
} from './room/inputs.js';
export type { LightningPluginOptions } from './room/options.js';
export type { PlayerRef } from './room/players.js';
export { type ChargedEntryFee, LightningPlugin } from './room/plugin.js';
export { type Entry, EntryFee, LightningState, PointSpend, Reward } from './room/state.js';
export type { PurchaseSession, WidgetSession } from './room/widget-access.js';
export type {
  LightningEventName,
  LightningEvents,
  PayoutPause,
  SettledStatus,
  WebhookEvent,
} from './server/events.js';
export type { LightningLogger } from './server/logger.js';
export type { EntryFeeInput, RewardInput, SpendInput } from './server/operations/inputs.js';
export type {
  BreakerOptions,
  BudgetsOptions,
  LightningOptions,
  LimitsOptions,
  ReconcilerOptions,
} from './server/options.js';

export { VERSION } from './version.js';
