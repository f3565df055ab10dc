/**
 * The caller's side of the SQLite ledger's worker thread (sqlite-worker.ts): each call posted,
 * resolved with its answer; errors cross as data and are rebuilt as their classes (a structured
 * clone keeps an Error's message, not its class). The thread keeps the process alive only while
 * a call waits; one that dies rejects what it had with LedgerUnavailableError.
 */
import { Worker } from 'node:worker_threads';
import {
  BudgetExceededError,
  EarningCapError,
  InsufficientFundsError,
  LightningError,
  LimitExceededError,
  WithdrawalCapError,
} from '../errors.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  InvalidIntentError,
  LedgerBusyError,
  LedgerClosedError,
  LedgerUnavailableError,
} from './errors.js';
import { ledgerFile } from './files.js';
import type { SqliteCore } from './sqlite-core.js';
import { workerStart } from './worker-start.js';

/** The core's methods a caller may run on the worker (close is its own message). */
export type CoreMethod = Exclude<keyof SqliteCore, 'db' | 'batch' | 'close'>;
export type Call =
  | { id: number; method: CoreMethod; args: unknown[] }
  | { id: number; close: true };
/** An error as data: its own fields (a class's code among them) and its message. */
type WireError = Record<string, unknown> & { message: string };
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
  if (!(err instanceof Error)) return { message: String(err) };
  return { ...Object.fromEntries(Object.entries(err)), message: err.message };
}

/** The classes a core call may throw, rebuilt by code. */
const CLASSES = [
  DuplicateIntentError,
  LimitExceededError,
  BudgetExceededError,
  InsufficientFundsError,
  EarningCapError,
  WithdrawalCapError,
  LedgerBusyError,
  LedgerClosedError,
  IncompatibleLedgerError,
  InvalidIntentError,
];

function decodeError(wire: WireError): Error {
  const { message, ...fields } = wire;
  const ledger = CLASSES.find((c) => c.code === fields.code);
  // Its class's brand and name without its constructor (whose arguments differ); its fields as sent.
  if (ledger) return Object.assign(Reflect.construct(LightningError, [message], ledger), fields);
  // SQLite's own errors (a full disk, a corrupt file): message and codes, as node:sqlite gave them.
  return Object.assign(new Error(message), { code: fields.code, errcode: fields.errcode });
}

const workerUrl = ledgerFile('./sqlite-worker.js');

export class SqliteThread {
  private readonly worker: Worker;
  readonly #waiting = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  #nextId = 0;
  /** Why no call can be answered any more. */
  #failure: Error | undefined;
  #closing: Promise<void> | undefined;

  constructor(init: WorkerInit) {
    const { script, options } = workerStart(workerUrl);
    this.worker = new Worker(script, { ...options, workerData: init });
    this.worker.unref();
    this.worker.on('message', (message: Answer | Hello) => {
      if ('ready' in message) {
        if (!message.ready) this.#fail(decodeError(message.error));
        return;
      }
      const waiter = this.#waiting.get(message.id);
      if (waiter === undefined) return;
      this.#settled(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(decodeError(message.error));
    });
    this.worker.on('error', (err) => this.#fail(new LedgerUnavailableError({ cause: err })));
    this.worker.on('exit', () =>
      this.#fail(new LedgerUnavailableError({ cause: new Error('the ledger thread exited') })),
    );
  }

  call<T>(method: CoreMethod, args: unknown[]): Promise<T> {
    return this.#post({ id: this.#nextId++, method, args }) as Promise<T>;
  }

  /** Runs the pending calls, closes the connection, and ends the thread. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        if (this.#failure === undefined) await this.#post({ id: this.#nextId++, close: true });
      } finally {
        this.#fail(new LedgerClosedError());
        await this.worker.terminate();
      }
    })();
    return this.#closing;
  }

  #post(call: Call): Promise<unknown> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) this.worker.ref();
      this.#waiting.set(call.id, { resolve, reject });
      try {
        this.worker.postMessage(call);
      } catch (err) {
        this.#settled(call.id);
        reject(err);
      }
    });
  }

  #settled(id: number): void {
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.worker.unref();
  }

  #fail(err: Error): void {
    this.#failure ??= err;
    for (const [id, waiter] of this.#waiting) {
      this.#settled(id);
      waiter.reject(this.#failure);
    }
  }
}
