/**
 * Status callbacks as the service sends them: the bare resource POSTed as JSON to its
 * callbackUrl, once, unauthenticated, no retries; each failure is counted and logged. Tests
 * can drop, duplicate, delay (real timers: the network) or reorder them on purpose.
 */

import { request } from 'undici';

export type CallbackKind = 'withdrawalRequest' | 'staticCharge' | 'payment';

export interface CallbackOptions {
  /** Drop callbacks: always (true), with a probability (0..1), or when the function says so. */
  drop?: boolean | number | ((url: string, body: unknown) => boolean);
  /** Extra copies of every callback; default 0. */
  duplicate?: number;
  /** Wait before each delivery, in ms; default 0. */
  delayMs?: number;
  /** Hold callbacks and deliver them newest first after `reorderWindowMs` (50), or on `flush()`. */
  reorder?: boolean;
  reorderWindowMs?: number;
  /** Give up on a receiver after this many ms; default 10,000 (the service's own limit is unknown). */
  timeoutMs?: number;
}

export type CallbackOutcome = 'pending' | 'delivered' | 'failed' | 'dropped' | 'cancelled';

export interface CallbackRecord {
  seq: number;
  kind: CallbackKind;
  resourceId: string;
  /** The resource status the callback reports. */
  status: string;
  url: string;
  body: unknown;
  /** 0 for the original, 1.. for injected duplicates. */
  copy: number;
  queuedAt: number;
  sentAt: number | null;
  outcome: CallbackOutcome;
  httpStatus: number | null;
  error: string | null;
}

export class CallbackDispatcher {
  readonly log: CallbackRecord[] = [];
  failures = 0;
  #options: CallbackOptions;
  #seq = 0;
  readonly #inflight = new Set<Promise<void>>();
  /** Callbacks held for reordering, and the window that releases them (counted in flight). */
  #held: Array<{ record: CallbackRecord; text: string }> = [];
  #window: { timer: NodeJS.Timeout; end: () => void } | undefined;
  readonly #delayTimers = new Map<NodeJS.Timeout, () => void>();
  #closed = false;

  readonly #warn: (message: string) => void;

  constructor(options: CallbackOptions = {}, warn: (message: string) => void = () => {}) {
    this.#options = { ...options };
    this.#warn = warn;
  }

  set(options: CallbackOptions): void {
    this.#options = { ...this.#options, ...options };
  }

  get(): CallbackOptions {
    return { ...this.#options };
  }

  /** Back to faithful delivery. */
  resetOptions(): void {
    this.#options = {};
  }

  send(kind: CallbackKind, resourceId: string, status: string, url: string | null, body: unknown) {
    if (!url || this.#closed) return;
    const copies = 1 + Math.max(0, Math.floor(this.#options.duplicate ?? 0));
    const dropped = this.#shouldDrop(url, body);
    const text = JSON.stringify(body);
    for (let copy = 0; copy < copies; copy++) {
      const record: CallbackRecord = {
        seq: ++this.#seq,
        kind,
        resourceId,
        status,
        url,
        body: JSON.parse(text),
        copy,
        queuedAt: Date.now(),
        sentAt: null,
        outcome: dropped ? 'dropped' : 'pending',
        httpStatus: null,
        error: null,
      };
      this.log.push(record);
      if (!dropped) this.#track(this.#deliver(record, text));
    }
  }

  /** Resolves when nothing is delayed, held or in flight. */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** Releases held (reordered) callbacks now, then waits for every delivery. */
  async flush(): Promise<void> {
    this.#releaseHeld();
    await this.idle();
  }

  /** Records actually POSTed (delivered or failed), oldest first. */
  sent(): CallbackRecord[] {
    return this.log.filter((r) => r.outcome === 'delivered' || r.outcome === 'failed');
  }

  clearLog(): void {
    this.log.length = 0;
    this.failures = 0;
  }

  close(): void {
    this.#closed = true;
    for (const [timer, cancel] of this.#delayTimers) {
      clearTimeout(timer);
      cancel();
    }
    this.#delayTimers.clear();
    for (const { record } of this.#held) record.outcome = 'cancelled';
    this.#held = [];
    this.#endWindow();
  }

  #shouldDrop(url: string, body: unknown): boolean {
    const drop = this.#options.drop;
    if (typeof drop === 'function') return drop(url, body);
    if (typeof drop === 'number') return Math.random() < drop;
    return drop === true;
  }

  #track(promise: Promise<void>): void {
    this.#inflight.add(promise);
    void promise.finally(() => this.#inflight.delete(promise));
  }

  async #deliver(record: CallbackRecord, text: string): Promise<void> {
    const delayMs = this.#options.delayMs ?? 0;
    if (delayMs > 0 && !(await this.#wait(delayMs))) {
      record.outcome = 'cancelled';
      return;
    }
    if (!this.#options.reorder) return this.#post(record, text);
    this.#held.push({ record, text });
    if (this.#window) return;
    this.#track(
      new Promise<void>((end) => {
        const timer = setTimeout(() => this.#releaseHeld(), this.#options.reorderWindowMs ?? 50);
        this.#window = { timer, end };
      }),
    );
  }

  /** Resolves true after `ms`, or false if the dispatcher closes first. */
  #wait(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#delayTimers.delete(timer);
        resolve(true);
      }, ms);
      this.#delayTimers.set(timer, () => resolve(false));
    });
  }

  #releaseHeld(): void {
    const held = this.#held.reverse();
    this.#held = [];
    // One at a time, newest first, so that the receiver sees them in that order.
    this.#track(
      (async () => {
        for (const { record, text } of held) await this.#post(record, text);
      })(),
    );
    this.#endWindow();
  }

  #endWindow(): void {
    if (this.#window === undefined) return;
    clearTimeout(this.#window.timer);
    this.#window.end();
    this.#window = undefined;
  }

  async #post(record: CallbackRecord, text: string): Promise<void> {
    record.sentAt = Date.now();
    const timeout = this.#options.timeoutMs ?? 10_000;
    try {
      const res = await request(record.url, {
        method: 'POST',
        body: text,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'colyseus-lightning-emulator',
        },
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      await res.body.dump();
      record.httpStatus = res.statusCode;
      record.outcome = res.statusCode >= 200 && res.statusCode < 300 ? 'delivered' : 'failed';
    } catch (error) {
      record.outcome = 'failed';
      record.error = error instanceof Error ? error.message : String(error);
    }
    if (record.outcome === 'failed') {
      this.failures++;
      // The token in the URL authenticates the callback: the log shows where, not the token.
      const where = record.url.replace(/\/[^/]*$/, '/…');
      const why = record.error ?? `answered ${record.httpStatus}`;
      this.#warn(
        `callback not delivered: POST ${where} (${record.kind} ${record.resourceId} ${record.status}): ${why}. The game learns of it only when it re-reads it: is it listening there, with lightning.endpoints() mounted?`,
      );
    }
  }
}
