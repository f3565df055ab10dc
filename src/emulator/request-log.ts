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
}

export const REQUEST_LOG_CAP = 10_000;

export class RequestLog {
  readonly entries: LoggedRequest[] = [];
  readonly #counts = new Map<string, number>();
  total = 0;

  record(method: string, path: string): void {
    this.total++;
    const key = `${method} ${path}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (this.entries.length >= REQUEST_LOG_CAP) this.entries.shift();
    this.entries.push({ method, path, at: Date.now() });
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
  }
}
