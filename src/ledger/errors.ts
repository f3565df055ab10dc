/**
 * The ledger's branch of the error tree (errors.ts at the package root): one `LedgerError` and a
 * subclass per way a ledger call can be refused, each with its own code, alike on every store.
 */
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

/** `create` was given an id or a callback token that another intent already has. */
export class DuplicateIntentError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_DUPLICATE';
  readonly field: 'id' | 'callbackToken' | 'openKey' | 'seat';
  /** For `openKey`: the id of the open intent that holds the key; for `seat`, of the seat's holder. */
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

/** Arguments that do not describe a valid intent or patch (e.g. an amount that is not a decimal string). */
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

/**
 * The stored data has a layout this library cannot read (a newer library's, a pre-release's, or
 * not a ledger's at all); refusing beats misreading money.
 */
export class IncompatibleLedgerError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_INCOMPATIBLE';
}

/**
 * Another process held the store's write lock for longer than the store waits. Nothing was
 * written, so the call is safe to retry.
 */
export class LedgerBusyError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_BUSY';
  static override readonly retryable: boolean = true;
  constructor(options?: LightningErrorOptions) {
    super('the ledger store is busy: another writer held the lock too long', options);
  }
}

/**
 * The store cannot keep its promise that an acknowledged write survives: a PostgreSQL with
 * fsync off. Refusing beats forgetting money.
 */
export class LedgerNotDurableError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_NOT_DURABLE';
}

/**
 * The ledger's server could not be reached or went away mid-call (a restart, a failover). A
 * write may or may not have been recorded (a create that was becomes `unknown` after its grace
 * period and ends by the usual rules). Retryable: a helper that reaches the service first and
 * then cannot record its answer throws AnswerNotRecordedError instead, which is not.
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

/**
 * An intent this process recorded moments ago is no longer in the ledger: the store lost
 * acknowledged writes (a database restored from backup, storage that lost what it had synced).
 * The service may have acted: `remoteId` names what it answered, when it answered.
 */
export class IntentLostError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_LOST';
  readonly intentId: string;
  readonly remoteId: string | null;

  constructor(intentId: string, remoteId: string | null, options?: LightningErrorOptions) {
    super(
      `the ledger lost intent ${intentId} after recording it${remoteId ? ` (the service created ${remoteId})` : ''}: is the ledger durable?`,
      options,
    );
    this.intentId = intentId;
    this.remoteId = remoteId;
  }
}

/**
 * The service answered a create (`remoteId` names what it made: a live claim code, a charge, a
 * payment) and the ledger could not record the answer (its server down for a moment). The
 * answer is kept by the process and recorded as soon as the ledger answers again; a callback
 * or the reconciler finds it too. Not retryable: the same call again would be a second request.
 */
export class AnswerNotRecordedError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_UNRECORDED';
  readonly intentId: string;
  readonly remoteId: string | null;

  constructor(intentId: string, remoteId: string | null, options?: LightningErrorOptions) {
    super(
      `the service answered intent ${intentId}${remoteId ? ` (it created ${remoteId})` : ''}, but the ledger could not record it (${(options?.cause as Error | undefined)?.message ?? 'unavailable'}); the answer is kept and recorded once the ledger answers: do not retry`,
      options,
    );
    this.intentId = intentId;
    this.remoteId = remoteId;
  }
}
