/**
 * The soak's bad weather at the emulator: fault rules on the routes the game calls (creates,
 * re-reads, the fee's close, payments to Lightning addresses) and callback delivery that drops, duplicates, delays and
 * reorders. Faults are added a few at a time, each for one to three requests, so that they
 * land on whichever process calls next; the callback weather changes every `weatherMs`.
 * Every rule is kept, so that the figures can say how many requests each kind of fault hit.
 *
 * Cost: one timer; the emulator's fault check is one scan of the (few) active rules.
 */
import type { ActiveFault, Emulator, FaultRule } from '../src/emulator/index.js';
import type { Random } from './random.js';

/** The kinds of fault injected, as the figures name them. */
export const FAULT_KINDS = [
  '5xx',
  '429',
  'timeout (hang)',
  'process-then-destroy',
  'process-then-hang',
  'reset before processing',
  'latency',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

type Target = { name: string; method: string; path: string; kinds: readonly FaultKind[] };

const CREATE_KINDS = FAULT_KINDS;
const READ_KINDS: readonly FaultKind[] = ['5xx', '429', 'timeout (hang)', 'latency'];

const TARGETS: readonly Target[] = [
  {
    name: 'create reward',
    method: 'POST',
    path: '/v0/withdrawal-requests',
    kinds: CREATE_KINDS,
  },
  { name: 'create fee', method: 'POST', path: '/v0/static-charges', kinds: CREATE_KINDS },
  {
    name: 'deplete',
    method: 'POST',
    path: '/api/v1/widget/users/deplete',
    kinds: CREATE_KINDS,
  },
  {
    name: 're-read reward',
    method: 'GET',
    path: '/v0/withdrawal-requests/:id',
    kinds: READ_KINDS,
  },
  { name: 're-read fee', method: 'GET', path: '/v0/static-charges/:id', kinds: READ_KINDS },
  {
    name: 'pay address',
    method: 'POST',
    path: '/v0/ln-address/send-payment',
    kinds: CREATE_KINDS,
  },
  { name: 're-read payment', method: 'GET', path: '/v0/payments/:id', kinds: READ_KINDS },
  {
    name: 'close fee',
    method: 'PATCH',
    path: '/v0/static-charges/:id',
    kinds: ['5xx', 'process-then-destroy', 'process-then-hang', 'latency'],
  },
];

function rule(kind: FaultKind, target: Target, r: Random): FaultRule {
  const base = { method: target.method, path: target.path, times: r.int(1, 3) };
  switch (kind) {
    case '5xx':
      return { ...base, status: r.pick([500, 502, 503]) };
    case '429':
      return { ...base, status: 429, retryAfter: 1 };
    case 'timeout (hang)':
      return { ...base, mode: 'hang' };
    case 'process-then-destroy':
      return { ...base, mode: 'process-then-destroy' };
    case 'process-then-hang':
      return { ...base, mode: 'process-then-hang' };
    case 'reset before processing':
      return { ...base, mode: 'destroy-before-processing' };
    case 'latency':
      return { ...base, latencyMs: r.int(200, 2_500) };
  }
}

export interface ChaosOptions {
  /** Fault rules added per second (each hits one to three requests). */
  faultsPerSecond: number;
  /** At most this many rules wait for a request at once. */
  maxActive: number;
  /** How often the callback weather changes, ms. */
  weatherMs: number;
}

interface Added {
  kind: FaultKind;
  target: string;
  fault: ActiveFault;
}

export class Chaos {
  readonly #emulator: Emulator;
  readonly #random: Random;
  readonly #options: ChaosOptions;
  readonly #added: Added[] = [];
  readonly weathers: string[] = [];
  #faultTimer: NodeJS.Timeout | undefined;
  #weatherTimer: NodeJS.Timeout | undefined;

  constructor(emulator: Emulator, random: Random, options: ChaosOptions) {
    this.#emulator = emulator;
    this.#random = random;
    this.#options = options;
  }

  start(): void {
    const every = Math.max(10, Math.round(1_000 / this.#options.faultsPerSecond));
    this.#faultTimer = setInterval(() => this.#addFault(), every);
    this.#weatherTimer = setInterval(() => this.#changeWeather(), this.#options.weatherMs);
    this.#changeWeather();
  }

  /** No new faults, pending rules removed, faithful callbacks again. */
  stop(): void {
    clearInterval(this.#faultTimer);
    clearInterval(this.#weatherTimer);
    this.#emulator.control.faults.clear();
    this.#emulator.control.callbacks.reset();
  }

  /** Requests each kind of fault hit, and rules added. */
  hits(): { kind: FaultKind; rules: number; hits: number; targets: Record<string, number> }[] {
    return FAULT_KINDS.map((kind) => {
      const mine = this.#added.filter((a) => a.kind === kind);
      const targets: Record<string, number> = {};
      for (const a of mine) targets[a.target] = (targets[a.target] ?? 0) + a.fault.hits;
      return {
        kind,
        rules: mine.length,
        hits: mine.reduce((sum, a) => sum + a.fault.hits, 0),
        targets,
      };
    });
  }

  /** Kinds take turns, so that a short run meets every one; the route is drawn among theirs. */
  #addFault(): void {
    const control = this.#emulator.control;
    if (control.faults.list().length >= this.#options.maxActive) return;
    const kind = FAULT_KINDS[this.#added.length % FAULT_KINDS.length] as FaultKind;
    const target = this.#random.pick(TARGETS.filter((t) => t.kinds.includes(kind)));
    this.add(kind, target.name, rule(kind, target, this.#random));
  }

  /** Adds a rule of the runner's own (the slow creates around a kill), counted like the rest. */
  add(kind: FaultKind, target: string, faultRule: FaultRule): void {
    const fault = this.#emulator.control.faults.add(faultRule);
    this.#added.push({ kind, target, fault });
  }

  #changeWeather(): void {
    const r = this.#random;
    const weather = r.weighted({
      fair: 2,
      lossy: 2,
      duplicated: 2,
      delayed: 1,
      reordered: 1,
      storm: 2,
    });
    this.weathers.push(weather);
    const lossy = weather === 'lossy' || weather === 'storm';
    const p = weather === 'storm' ? 0.2 : 0.35;
    this.#emulator.control.callbacks.set({
      drop: lossy ? () => r.chance(p) : false,
      duplicate: weather === 'duplicated' || weather === 'storm' ? r.int(1, 2) : 0,
      delayMs: weather === 'delayed' || weather === 'storm' ? r.int(100, 600) : 0,
      reorder: weather === 'reordered' || weather === 'storm',
      reorderWindowMs: 150,
    });
  }
}
