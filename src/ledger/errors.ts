/**
 * The ledger's error tree: one base class with a stable `code` that callers switch on, and
 * one subclass per way a ledger call can be refused. Shared by every store, so that code
 * above the ledger never depends on which store it runs on. Costs nothing until thrown.
 */
import type { IntentStatus } from './intent.js';

export type LedgerErrorCode =
  | 'LEDGER_ILLEGAL_TRANSITION'
  | 'LEDGER_DUPLICATE'
  | 'LEDGER_INVALID'
  | 'LEDGER_CLOSED'
  | 'LEDGER_INCOMPATIBLE'
  | 'LEDGER_BUSY';

export class LedgerError extends Error {
  readonly code: LedgerErrorCode;

  constructor(code: LedgerErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A move that TRANSITIONS does not allow; a programming error, never a lost race. */
export class IllegalTransitionError extends LedgerError {
  readonly from: readonly IntentStatus[];
  readonly to: IntentStatus;

  constructor(from: readonly IntentStatus[], to: IntentStatus) {
    super(
      'LEDGER_ILLEGAL_TRANSITION',
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
  readonly field: 'id' | 'callbackToken';

  constructor(field: 'id' | 'callbackToken', options?: ErrorOptions) {
    // The token is a bearer secret: name the field, never the value.
    super('LEDGER_DUPLICATE', `an intent with this ${field} already exists`, options);
    this.field = field;
  }
}

/** Arguments that do not describe a valid intent or patch (e.g. an amount that is not a decimal string). */
export class InvalidIntentError extends LedgerError {
  constructor(message: string, options?: ErrorOptions) {
    super('LEDGER_INVALID', message, options);
  }
}

/** The store was closed; no call after `close()` reaches storage. */
export class LedgerClosedError extends LedgerError {
  constructor() {
    super('LEDGER_CLOSED', 'the ledger store is closed');
  }
}

/** The stored data was written by a newer version of this library; refusing beats misreading money. */
export class IncompatibleLedgerError extends LedgerError {
  constructor(message: string) {
    super('LEDGER_INCOMPATIBLE', message);
  }
}

/**
 * Another process held the store's write lock for longer than the store waits. Nothing was
 * written, so the call is safe to retry.
 */
export class LedgerBusyError extends LedgerError {
  constructor(options?: ErrorOptions) {
    super(
      'LEDGER_BUSY',
      'the ledger store is busy: another writer held the lock too long',
      options,
    );
  }
}
