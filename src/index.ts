/**
 * colyseus-lightning: Lightning payments for Colyseus rooms. This list is the package's
 * promise: docs/REFERENCE.md names every entry and test/exports.test.ts holds the two together.
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
  CreditTooLargeError,
  EarningCapError,
  InsufficientFundsError,
  LightningError,
  type LightningErrorCode,
  LimitExceededError,
  type LnAddressRefusal,
  LnAddressRefusedError,
  type MatchClosedDecision,
  MatchClosedError,
  MatchSeatError,
  NotSignedInError,
  OperatorRefusedError,
  PayoutsPausedError,
  PlayerBlockedError,
  RegionRefusedError,
  TimeInRoomError,
  WithdrawalCapError,
  WithdrawalTooSmallError,
} from './errors.js';
// The server-level object, its groups and its events.
export type { Claim, LightningBooks } from './face/books.js';
export type { OperatorConsole } from './face/console.js';
export type { LightningMatches } from './face/matches.js';
export type { LightningOperator, ReconcilerControl } from './face/operator.js';
export type { LightningService } from './face/service.js';
export {
  DuplicateIntentError,
  IllegalTransitionError,
  IncompatibleLedgerError,
  InvalidIntentError,
  LedgerBusyError,
  LedgerClosedError,
  LedgerError,
  LedgerNotDurableError,
  LedgerUnavailableError,
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
export type {
  AccountBalance,
  JournalEntry,
  JournalPage,
  JournalQuery,
  Posting,
} from './ledger/journal.js';
export type {
  NewOperatorAction,
  OperatorAction,
  OperatorActionName,
  OperatorLogPage,
  OperatorLogQuery,
} from './ledger/operator-log.js';
export {
  type PostgresConnection,
  PostgresLedger,
  type PostgresLedgerOptions,
} from './ledger/postgres.js';
export { SqliteLedger, type SqliteLedgerOptions } from './ledger/sqlite.js';
export type {
  BudgetWindow,
  CreateGuards,
  LedgerStore,
  LedgerView,
  TransitionOptions,
} from './ledger/store.js';
export { createLightning, Lightning } from './lightning.js';
// The operator's console: what `lightning.operator.console.endpoints()` and `.attach()` take.
export type { ConsoleAuthorization, ConsoleOptions } from './operator/console.js';
// What the room's widget helpers answer: named here, so that a game's own declarations can name them.
export type { DisclosureAcceptance, WidgetUser } from './port/port.js';
// The room plugin and the state rooms sync.
export type { RoomEventName, RoomListener } from './room/hooks.js';
export type {
  EntryFeeArgs,
  MatchArgs,
  PayAddressArgs,
  PurchaseArgs,
  RewardArgs,
  SpendArgs,
  TabCreditArgs,
  WidgetArgs,
  WithdrawArgs,
} from './room/inputs.js';
export { type MatchEntryOptions, RoomMatch } from './room/match.js';
export type { LightningPluginOptions } from './room/options.js';
export type { PlayerRef } from './room/players.js';
export { LightningPlugin } from './room/plugin.js';
export {
  AddressPayment,
  type ChargedEntryFee,
  type Entry,
  EntryFee,
  type EntryPurpose,
  LightningState,
  Match,
  PointSpend,
  Price,
  Reward,
  Tab,
} from './room/state.js';
export type { PurchaseSession, WidgetSession } from './room/widget-access.js';
export type { Alert, AlertCondition, AlertKind } from './server/alert-kinds.js';
export type { AuditReport } from './server/audit.js';
export type { Balances, WalletReading } from './server/balances.js';
export type {
  LightningEventName,
  LightningEvents,
  PayoutPause,
  SettledStatus,
  WebhookEvent,
} from './server/events.js';
export type { AuditFinding } from './server/findings.js';
export type { LightningLogger } from './server/logger.js';
export type { EnterInput, OpenMatchInput, Shares } from './server/match/terms.js';
export type { MatchMoney, MatchPlayer, MatchStatus, MatchView } from './server/match/view.js';
export { AnswerNotRecordedError, IntentLostError } from './server/operations/errors.js';
export type {
  AddressPaymentInput,
  CreditInput,
  EntryFeeInput,
  RewardInput,
  RewardManyInput,
  SpendInput,
  WithdrawInput,
} from './server/operations/inputs.js';
export type {
  AlertsOptions,
  AuditOptions,
  BreakerOptions,
  BudgetsOptions,
  ClientAddressOptions,
  FiatOptions,
  LightningOptions,
  LimitsOptions,
  ReconcilerOptions,
  TabsOptions,
} from './server/options.js';
export type { RewardManyResult } from './server/queue.js';

export { VERSION } from './version.js';
