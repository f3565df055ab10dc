/**
 * Which requests reached the emulator: a count per method and path (kept for the whole
 * run, cheap) and the latest entries in order (capped, so a benchmark cannot grow it
 * without bound). Tests assert exactly-one-request semantics with `count`.
 */

export interface LoggedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  at: number;
  /** Answered 429 by the emulator's rate limit (`rateLimit`), never processed. */
  limited?: true;
}

export const REQUEST_LOG_CAP = 10_000;

export class RequestLog {
  readonly entries: LoggedRequest[] = [];
  readonly #counts = new Map<string, number>();
  total = 0;
  /** Requests the rate limit answered 429, over the whole run. */
  limited = 0;

  /** Logs a request as it arrives; the entry is the log's own (see `refused`). */
  record(method: string, path: string): LoggedRequest {
    this.total++;
    const key = `${method} ${path}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (this.entries.length >= REQUEST_LOG_CAP) this.entries.shift();
    const entry: LoggedRequest = { method, path, at: Date.now() };
    this.entries.push(entry);
    return entry;
  }

  /** The request of `entry` was answered 429 by the rate limit. */
  refused(entry: LoggedRequest): void {
    entry.limited = true;
    this.limited++;
  }

  /** Requests with this method (or any, with '*') whose path equals `path` or matches it. */
  count(method: string, path: string | RegExp): number {
    const wanted = method.toUpperCase();
    if (typeof path === 'string' && wanted !== '*')
      return this.#counts.get(`${wanted} ${path}`) ?? 0;
    let n = 0;
    for (const [key, value] of this.#counts) {
      const space = key.indexOf(' ');
      const m = key.slice(0, space);
      const p = key.slice(space + 1);
      if (wanted !== '*' && m !== wanted) continue;
      if (typeof path === 'string' ? p === path : path.test(p)) n += value;
    }
    return n;
  }

  clear(): void {
    this.entries.length = 0;
    this.#counts.clear();
    this.total = 0;
    this.limited = 0;
  }
}
