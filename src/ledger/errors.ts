/** The ledger's branch of the error tree: a subclass per way a call is refused, on every store. */
import { LightningError, type LightningErrorCode, type LightningErrorOptions } from '../errors.js';
import type { IntentStatus } from './intent.js';

/** The codes of the ledger's errors: the `LN_LEDGER_` part of `LightningErrorCode`. */
export type LedgerErrorCode = Extract<LightningErrorCode, `LN_LEDGER_${string}`>;

export class LedgerError extends LightningError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_ERROR';
  declare readonly code: LedgerErrorCode;
}

/** A move that TRANSITIONS does not allow; a programming error, never a lost race. */
export class IllegalTransitionError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_ILLEGAL_TRANSITION';
  readonly from: readonly IntentStatus[];
  readonly to: IntentStatus;

  constructor(from: readonly IntentStatus[], to: IntentStatus) {
    super(
      from.length === 0
        ? `illegal transition: no source status given for a move to '${to}'`
        : `illegal transition: ${from.map((s) => `'${s}'`).join(' | ')} -> '${to}' is not allowed`,
    );
    this.from = from;
    this.to = to;
  }
}

/** `create` was given an id, callback token, open key or seat that another intent holds. */
export class DuplicateIntentError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_DUPLICATE';
  readonly field: 'id' | 'callbackToken' | 'openKey' | 'seat';
  /** For `openKey` and `seat`: the id of the open intent that holds it. */
  readonly existingId: string | null;

  constructor(
    field: 'id' | 'callbackToken' | 'openKey' | 'seat',
    options?: LightningErrorOptions & { existingId?: string | null },
  ) {
    // The token is a bearer secret: name the field, never the value.
    super(
      field === 'openKey'
        ? 'an open intent with this openKey already exists'
        : field === 'seat'
          ? "the player already holds a seat in this intent's group"
          : `an intent with this ${field} already exists`,
      options,
    );
    this.field = field;
    this.existingId = options?.existingId ?? null;
  }
}

/** Arguments that do not describe a valid intent, patch or query. */
export class InvalidIntentError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_INVALID';
}

/** The store was closed; no call after `close()` reaches storage. */
export class LedgerClosedError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_CLOSED';
  constructor() {
    super('the ledger store is closed');
  }
}

/** Stored data of a layout this library cannot read: refusing beats misreading money. */
export class IncompatibleLedgerError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_INCOMPATIBLE';
}

/** Another process held the write lock longer than the store waits; nothing was written. */
export class LedgerBusyError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_BUSY';
  static override readonly retryable: boolean = true;
  constructor(options?: LightningErrorOptions) {
    super('the ledger store is busy: another writer held the lock too long', options);
  }
}

/** A PostgreSQL with fsync off cannot keep an acknowledged write: refusing beats forgetting money. */
export class LedgerNotDurableError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_NOT_DURABLE';
}

/**
 * The ledger's server could not be reached or went away mid-call; a write may or may not have
 * been recorded. Retryable (unlike AnswerNotRecordedError, once the service has answered).
 */
export class LedgerUnavailableError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_UNAVAILABLE';
  static override readonly retryable: boolean = true;
  constructor(options?: LightningErrorOptions) {
    super(
      `the ledger could not be reached (${(options?.cause as Error | undefined)?.message ?? 'connection lost'})`,
      options,
    );
  }
}
