/**
 * The caller's side of the SQLite ledger's worker thread (sqlite-worker.ts): posts each call
 * and resolves it with the worker's answer, errors turned back into their classes. The event
 * loop only posts and receives: one structured clone each way, tens of microseconds, whatever
 * the SQL, the commit and its fsync cost.
 *
 * The thread does not keep the process alive while it is idle (a game may exit without
 * closing its ledger), only while a call waits for its answer. A thread that dies rejects
 * what it had with LedgerUnavailableError: a write may or may not have been committed, as with
 * a networked store that went away.
 */
import { Worker } from 'node:worker_threads';
import { LedgerClosedError, LedgerUnavailableError } from './errors.js';
import { ledgerFile } from './files.js';
import {
  type Answer,
  type Call,
  type CoreMethod,
  decodeError,
  type Hello,
  type WorkerInit,
} from './sqlite-wire.js';
import { workerStart } from './worker-start.js';

const workerUrl = ledgerFile('./sqlite-worker.js');

interface Waiter {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class SqliteThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 0;
  /** Why no call can be answered any more: the thread failed to open, died, or was closed. */
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;

  constructor(init: WorkerInit) {
    const { script, options } = workerStart(workerUrl);
    this.worker = new Worker(script, { ...options, workerData: init });
    this.worker.unref();
    this.worker.on('message', (message: Answer | Hello) => {
      if ('ready' in message) {
        if (!message.ready) this.fail(decodeError(message.error));
        return;
      }
      const waiter = this.waiting.get(message.id);
      if (waiter === undefined) return;
      this.settled(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(decodeError(message.error));
    });
    this.worker.on('error', (err) => this.fail(new LedgerUnavailableError({ cause: err })));
    this.worker.on('exit', () =>
      this.fail(new LedgerUnavailableError({ cause: new Error('the ledger thread exited') })),
    );
  }

  call<T>(method: CoreMethod, args: unknown[]): Promise<T> {
    return this.post({ id: this.nextId++, method, args }) as Promise<T>;
  }

  /** Runs the pending calls, closes the connection, and ends the thread. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (this.failure === undefined) await this.post({ id: this.nextId++, close: true });
      } finally {
        this.fail(new LedgerClosedError());
        await this.worker.terminate();
      }
    })();
    return this.closing;
  }

  private post(call: Call): Promise<unknown> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      // Referenced while an answer is awaited: the process waits for it, as for a socket.
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(call.id, { resolve, reject });
      try {
        this.worker.postMessage(call);
      } catch (err) {
        this.settled(call.id);
        reject(err);
      }
    });
  }

  private settled(id: number): void {
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker.unref();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const [id, waiter] of this.waiting) {
      this.settled(id);
      waiter.reject(this.failure);
    }
  }
}
