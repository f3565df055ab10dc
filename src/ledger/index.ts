/**
 * The ledger's public surface: the intent model, the store interface, the stores, and the
 * errors callers switch on. Importing it loads `node:sqlite` and zod, nothing else: the
 * PostgreSQL store loads `pg` only when it opens its own pool.
 */
export * from './errors.js';
export * from './intent.js';
export {
  type PostgresConnection,
  PostgresLedger,
  type PostgresLedgerOptions,
} from './postgres.js';
export { SqliteLedger, type SqliteLedgerOptions } from './sqlite.js';
export type {
  BudgetWindow,
  CreateGuards,
  IntentStore,
  LeaseStore,
  LedgerStore,
  OnceStore,
  OperatorLogStore,
  TransitionOptions,
} from './store.js';
export { AMOUNT_PATTERN, CALLBACK_TOKEN_PATTERN } from './validate.js';
