/**
 * What crosses between SqliteLedger and its worker thread: a call (an SqliteCore method and its
 * arguments, already validated), its answer, and errors as plain data that the caller's side
 * turns back into the same classes (a structured clone keeps an Error's message, not its class
 * or fields). Costs one small object per call.
 */
import {
  BudgetExceededError,
  type BudgetScope,
  LimitExceededError,
  type OpenLimit,
} from '../errors.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  InvalidIntentError,
  LedgerBusyError,
  LedgerClosedError,
} from './errors.js';
import type { SqliteCore } from './sqlite-core.js';

/** The core's methods a caller may run on the worker (close is its own message). */
export type CoreMethod = Exclude<keyof SqliteCore, 'db' | 'batch' | 'close'>;

export interface MethodCall {
  id: number;
  method: CoreMethod;
  args: unknown[];
}
export type Call = MethodCall | { id: number; close: true };

export type WireError =
  | { type: 'duplicate'; field: DuplicateIntentError['field']; existingId: string | null }
  | { type: 'limit'; limit: OpenLimit; max: number; playerId: string }
  | { type: 'budget'; scope: BudgetScope; limit: string; reserved: string; windowMs: number | null }
  | { type: 'busy' }
  | { type: 'closed' }
  | { type: 'incompatible'; message: string }
  | { type: 'invalid'; message: string }
  | { type: 'other'; message: string; code?: unknown; errcode?: unknown };

export type Answer =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError };

/** The worker's first message: ready, or why the connection could not be opened. */
export type Hello = { ready: true } | { ready: false; error: WireError };

export interface WorkerInit {
  path: string;
  busyTimeoutMs: number;
}

export function encodeError(err: unknown): WireError {
  if (err instanceof DuplicateIntentError) {
    return { type: 'duplicate', field: err.field, existingId: err.existingId };
  }
  if (err instanceof LimitExceededError) {
    return { type: 'limit', limit: err.limit, max: err.max, playerId: err.playerId };
  }
  if (err instanceof BudgetExceededError) {
    return {
      type: 'budget',
      scope: err.scope,
      limit: err.limitMsat,
      reserved: err.reservedMsat,
      windowMs: err.windowMs,
    };
  }
  if (err instanceof LedgerBusyError) return { type: 'busy' };
  if (err instanceof LedgerClosedError) return { type: 'closed' };
  if (err instanceof IncompatibleLedgerError) return { type: 'incompatible', message: err.message };
  if (err instanceof InvalidIntentError) return { type: 'invalid', message: err.message };
  const fields = (err ?? {}) as { code?: unknown; errcode?: unknown };
  return {
    type: 'other',
    message: err instanceof Error ? err.message : String(err),
    code: fields.code,
    errcode: fields.errcode,
  };
}

export function decodeError(wire: WireError): Error {
  switch (wire.type) {
    case 'duplicate':
      return new DuplicateIntentError(wire.field, { existingId: wire.existingId });
    case 'limit':
      return new LimitExceededError(wire.limit, wire.max, wire.playerId);
    case 'budget':
      return new BudgetExceededError(wire.scope, wire.limit, wire.reserved, wire.windowMs);
    case 'busy':
      return new LedgerBusyError();
    case 'closed':
      return new LedgerClosedError();
    case 'incompatible':
      return new IncompatibleLedgerError(wire.message);
    case 'invalid':
      return new InvalidIntentError(wire.message);
    case 'other':
      // SQLite's own errors (a full disk, a corrupt file): message and codes, as node:sqlite gave them.
      return Object.assign(new Error(wire.message), { code: wire.code, errcode: wire.errcode });
  }
}
