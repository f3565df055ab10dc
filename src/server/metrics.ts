/**
 * OpenTelemetry metrics through `@opentelemetry/api` alone (names in docs/OPERATING.md). Each
 * figure is counted once, in the process that saw it: moves from the engine's stream, callbacks
 * from the routes, service calls from the transport's diagnostics channel, gauges from the
 * ledger once per collection.
 *
 * Cost: one counter add per move, callback or re-read; one histogram record per service request;
 * per collection two balance reads, the open count and the oldest 1,000 unknowns and held.
 * Without an SDK nothing is subscribed or read.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  type BatchObservableResult,
  type Counter,
  createNoopMeter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type Observable,
  type ObservableGauge,
} from '@opentelemetry/api';
import { isRefusal } from '../errors.js';
import type { Intent, IntentKind } from '../ledger/intent.js';
import type { LedgerStore } from '../ledger/store.js';
import { REQUEST_CHANNEL, type RequestEvent } from '../port/requests.js';
import { VERSION } from '../version.js';
import type { Balances } from './balances.js';
import type { PayoutPause } from './events.js';
import { KINDS } from './kinds/index.js';
import type { Move, Moves } from './moves.js';

/** The meter's (instrumentation scope's) name. */
const METER_NAME = 'colyseus-lightning';

/** Unknowns read per collection; the gauge says "at least" beyond it. */
const UNKNOWNS_READ = 1000;

/** What the gauges read, once per collection (and the alerts, some of it). */
export interface GaugeReads {
  /** Balances with the last wallet reading (no call to the service). */
  balances(): Promise<Balances>;
  paused(): PayoutPause | null;
  /** The unknowns and the held payouts (oldest first), and the open count the limits guard. */
  ledger: Pick<LedgerStore, 'unknowns' | 'held' | 'openCount'>;
}

/** Each instrument in one line: its name, its unit, its description. */
const COUNTERS = {
  moves: 'lightning.intent.moves {move} Intents moved, by kind and the status they moved to',
  moneyIn: 'lightning.money.in msat Money that came into the wallet: paid entry fees',
  moneyOut:
    'lightning.money.out msat Money that left the wallet: claimed codes, completed address payments',
  points: "lightning.points.spent {point} Players' points spent, by currency (minor units)",
  callbacks: 'lightning.callbacks {callback} Status callbacks received, by what the route answered',
  checks: "lightning.reconciler.checks {check} The reconciler's re-reads of due intents",
  refused:
    'lightning.refused {refusal} Money operations refused by a rule before anything was recorded or sent, by kind and reason (the error code)',
} satisfies Record<string, string>;

const HISTOGRAMS = {
  callback: "lightning.callback.duration s From a callback's arrival to the move it proved",
  service:
    'lightning.service.request.duration s Requests to the payments service, each attempt, by operation',
} satisfies Record<string, string>;

/** The gauges, read together once per collection. */
const GAUGES = {
  unknown:
    'lightning.intents.unknown {intent} Intents whose outcome is unknown (counted up to 1,000)',
  open: 'lightning.intents.open {intent} Open intents of the game, matches aside (what limits.maxOpenPerGame guards)',
  held: 'lightning.payouts.held {payout} Payouts held for an operator (approvals), counted up to 1,000',
  escrow:
    "lightning.money.escrow msat Matches' pots: paid fees not yet paid out, refunded or raked",
  owed: 'lightning.money.owed msat Owed to players: unclaimed codes and payouts to pay by hand',
  inFlight: 'lightning.money.in_flight msat Sent or being sent, not settled',
  cover:
    'lightning.money.cover msat The last wallet reading minus owed, escrow and in flight (none before a reading)',
  // Not '1' (a ratio, to Prometheus): a state.
  paused: 'lightning.payouts.paused {state} Payouts paused by the breaker: 1 paused, 0 running',
} satisfies Record<string, string>;

function create<K extends string, T>(
  specs: Record<K, string>,
  make: (name: string, options: { unit: string; description: string }) => T,
): Record<K, T> {
  const made = {} as Record<K, T>;
  for (const key of Object.keys(specs) as K[]) {
    const [name = '', unit = '', ...words] = specs[key].split(' ');
    made[key] = make(name, { unit, description: words.join(' ') });
  }
  return made;
}

/** A route's answer to a callback, as the counter names it. */
function callbackOutcome(status: number): 'verified' | 'refused' | 'failed' {
  if (status === 200) return 'verified';
  return status >= 500 ? 'failed' : 'refused';
}

export class LightningMetrics {
  readonly #count: Record<keyof typeof COUNTERS, Counter>;
  readonly #time: Record<keyof typeof HISTOGRAMS, Histogram>;
  readonly #meter: Meter;
  /** False for the API's no-op meter (no SDK installed). */
  readonly #live: boolean;
  readonly #gauges: Record<keyof typeof GAUGES, ObservableGauge>;
  readonly #reads: GaugeReads;
  readonly #observe = (result: BatchObservableResult) => this.#collect(result);
  readonly #onRequest = (message: unknown) => this.#request(message as RequestEvent);

  constructor(provider: MeterProvider, moves: Moves, reads: GaugeReads) {
    this.#reads = reads;
    const meter = provider.getMeter(METER_NAME, VERSION);
    this.#meter = meter;
    // The no-op provider hands out createNoopMeter's one meter; another object only costs work.
    this.#live = meter !== createNoopMeter();
    this.#count = create(COUNTERS, (name, o) => meter.createCounter(name, o));
    this.#time = create(HISTOGRAMS, (name, o) => meter.createHistogram(name, o));
    this.#gauges = create(GAUGES, (name, o) => meter.createObservableGauge(name, o));
    if (!this.#live) return;
    // A subscriber makes the transport build a message per request: only for a real meter.
    subscribe(REQUEST_CHANNEL, this.#onRequest);
    moves.subscribe((move) => this.#moved(move));
    meter.addBatchObservableCallback(this.#observe, Object.values(this.#gauges) as Observable[]);
  }

  close(): void {
    if (!this.#live) return;
    unsubscribe(REQUEST_CHANNEL, this.#onRequest);
    this.#meter.removeBatchObservableCallback(
      this.#observe,
      Object.values(this.#gauges) as Observable[],
    );
  }

  #moved({ what, intent }: Move): void {
    if (what !== 'moved' && what !== 'latePayment') return;
    const { kind, status } = intent;
    if (what === 'latePayment') {
      if (intent.unit === 'msats')
        this.#count.moneyIn.add(Number(intent.amount), { kind, late: true });
      return;
    }
    this.#count.moves.add(1, { kind, status });
    if (status !== 'completed') return;
    const counts = KINDS[kind].counts;
    if (counts === 'points') {
      this.#count.points.add(Number(intent.amount), { currency: intent.unit });
    } else if (counts === 'moneyIn') {
      this.#count.moneyIn.add(Number(intent.amount), { kind, late: false });
    } else if (counts === 'moneyOut') {
      this.#count.moneyOut.add(Number(intent.amount), { kind });
    }
  }

  /** A callback the route answered with `status` (not the set-up probe). */
  callback(status: number): void {
    this.#count.callbacks.add(1, {
      outcome: callbackOutcome(status),
      'http.response.status_code': status,
    });
  }

  /** A callback moved its intent, `ms` after it arrived. */
  callbackMoved(intent: Intent, ms: number): void {
    if (!this.#live) return;
    this.#time.callback.record(ms / 1000, { kind: intent.kind, status: intent.status });
  }

  /** A money operation of `kind` threw `err`: counted when it is a rule's refusal. */
  refused(kind: IntentKind, err: unknown): void {
    if (!isRefusal(err)) return;
    this.#count.refused.add(1, { kind, reason: err.code });
  }

  /** The reconciler re-read a due intent (`ok` false: the check threw). */
  checked(ok: boolean): void {
    this.#count.checks.add(1, { outcome: ok ? 'ok' : 'failed' });
  }

  #request(event: RequestEvent): void {
    this.#time.service.record(event.durationMs / 1000, {
      operation: event.operation,
      outcome: event.outcome,
      ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
    });
  }

  async #collect(result: BatchObservableResult): Promise<void> {
    const reads = this.#reads;
    const g = this.#gauges;
    const paused = reads.paused();
    result.observe(g.paused, paused === null ? 0 : 1);
    const [balances, unknowns, held, open] = await Promise.all([
      reads.balances(),
      reads.ledger.unknowns(UNKNOWNS_READ),
      reads.ledger.held(UNKNOWNS_READ),
      reads.ledger.openCount(),
    ]);
    result.observe(g.open, open);
    result.observe(g.unknown, unknowns.length);
    result.observe(g.held, held.length);
    result.observe(g.escrow, Number(balances.escrowMsat));
    result.observe(g.owed, Number(balances.owedToPlayersMsat));
    result.observe(g.inFlight, Number(balances.inFlightMsat));
    if (balances.coverMsat !== null) result.observe(g.cover, Number(balances.coverMsat));
  }
}
