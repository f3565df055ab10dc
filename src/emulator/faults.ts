/**
 * Injected failures, per route: a 5xx or 429 (with Retry-After), latency, a hang, or a
 * destroyed connection before or after processing ("process-then-destroy" really performs the
 * operation: the case a retry policy must survive without paying twice).
 */

export type FaultMode =
  | 'status'
  | 'process-then-destroy'
  | 'process-then-hang'
  | 'destroy-before-processing'
  | 'hang';

export interface FaultRule {
  /** Any method when omitted. */
  method?: string;
  /** Any path when omitted; `*` matches anything, `:name` or `{name}` one segment; or a RegExp. */
  path?: string | RegExp;
  /** Status for mode 'status': default 500. */
  status?: number;
  /** Seconds, sent as Retry-After (typically with 429 or 503). */
  retryAfter?: number;
  /** Wait this long first; alone (no status, no mode) it only slows the route down. */
  latencyMs?: number;
  /** Default: 'status' when `status` is set or no latency is given, else latency only. */
  mode?: FaultMode;
  /** How many matching requests the rule applies to; default: all of them. */
  times?: number;
}

export interface ActiveFault {
  readonly id: number;
  readonly rule: FaultRule;
  /** Requests it has applied to so far. */
  hits: number;
  remove(): void;
}

export interface FaultDecision {
  mode: FaultMode | 'latency';
  status: number;
  retryAfter?: number;
  latencyMs: number;
}

function compile(path: string | RegExp | undefined): (p: string) => boolean {
  if (path === undefined) return () => true;
  if (path instanceof RegExp) return (p) => path.test(p);
  if (!/[*:{]/.test(path)) return (p) => p === path;
  const source = path
    .split(/(\*|:[A-Za-z_]\w*|\{[^}]+\})/)
    .map((part) => {
      if (part === '*') return '.*';
      if (part.startsWith(':') || part.startsWith('{')) return '[^/]+';
      return part.replace(/[.+?^$()|[\]\\]/g, '\\$&');
    })
    .join('');
  const re = new RegExp(`^${source}$`);
  return (p) => re.test(p);
}

interface Entry {
  fault: ActiveFault;
  method: string | null;
  test: (p: string) => boolean;
}

export class FaultSet {
  #entries: Entry[] = [];
  #nextId = 1;

  constructor(rules: FaultRule[] = []) {
    for (const rule of rules) this.add(rule);
  }

  add(rule: FaultRule): ActiveFault {
    const fault: ActiveFault = {
      id: this.#nextId++,
      rule: { ...rule },
      hits: 0,
      remove: () => this.remove(fault),
    };
    this.#entries.push({
      fault,
      method: rule.method?.toUpperCase() ?? null,
      test: compile(rule.path),
    });
    return fault;
  }

  remove(fault: ActiveFault | number): void {
    const id = typeof fault === 'number' ? fault : fault.id;
    this.#entries = this.#entries.filter((e) => e.fault.id !== id);
  }

  clear(): void {
    this.#entries = [];
  }

  list(): ActiveFault[] {
    return this.#entries.map((e) => e.fault);
  }

  /** The first rule that matches, consumed once; undefined when none applies. */
  match(method: string, path: string): FaultDecision | undefined {
    const entry = this.#entries.find(
      (e) => (e.method === null || e.method === method) && e.test(path),
    );
    if (entry === undefined) return undefined;
    const { fault } = entry;
    const { rule } = fault;
    fault.hits++;
    if (fault.hits >= (rule.times ?? Number.POSITIVE_INFINITY)) this.remove(fault);
    const latencyOnly = rule.mode === undefined && rule.status === undefined && rule.latencyMs;
    return {
      mode: latencyOnly ? 'latency' : (rule.mode ?? 'status'),
      status: rule.status ?? 500,
      latencyMs: rule.latencyMs ?? 0,
      ...(rule.retryAfter === undefined ? {} : { retryAfter: rule.retryAfter }),
    };
  }
}
