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
import type { Intent } from '../ledger/intent.js';
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

/** What the gauges read, once per collection. */
interface GaugeReads {
  /** Balances with the last wallet reading (no call to the service). */
  balances(): Promise<Balances>;
  unknowns(limit: number): Promise<Intent[]>;
  held(limit: number): Promise<Intent[]>;
  /** The game's open intents, matches aside (the number `limits.maxOpenPerGame` guards). */
  openCount(): Promise<number>;
  paused(): PayoutPause | null;
}

type GaugeName = 'open' | 'unknown' | 'held' | 'escrow' | 'owed' | 'inFlight' | 'cover' | 'paused';

/** A route's answer to a callback, as the counter names it. */
function callbackOutcome(status: number): 'verified' | 'refused' | 'failed' {
  if (status === 200) return 'verified';
  return status >= 500 ? 'failed' : 'refused';
}

export class LightningMetrics {
  readonly #moves: Counter;
  readonly #moneyIn: Counter;
  readonly #moneyOut: Counter;
  readonly #points: Counter;
  readonly #callbacks: Counter;
  readonly #checks: Counter;
  readonly #callbackDuration: Histogram;
  readonly #serviceDuration: Histogram;
  readonly #meter: Meter;
  /** False for the API's no-op meter (no SDK installed). */
  readonly #live: boolean;
  readonly #gauges: Record<GaugeName, ObservableGauge>;
  readonly #reads: GaugeReads;
  readonly #observe = (result: BatchObservableResult) => this.#collect(result);
  readonly #onRequest = (message: unknown) => this.#request(message as RequestEvent);

  constructor(provider: MeterProvider, moves: Moves, reads: GaugeReads) {
    this.#reads = reads;
    const meter = provider.getMeter(METER_NAME, VERSION);
    this.#meter = meter;
    // The no-op provider hands out createNoopMeter's one meter; another object only costs work.
    this.#live = meter !== createNoopMeter();
    this.#moves = meter.createCounter('lightning.intent.moves', {
      description: 'Intents moved, by kind and the status they moved to',
      unit: '{move}',
    });
    this.#moneyIn = meter.createCounter('lightning.money.in', {
      description: 'Money that came into the wallet: paid entry fees',
      unit: 'msat',
    });
    this.#moneyOut = meter.createCounter('lightning.money.out', {
      description: 'Money that left the wallet: claimed codes, completed address payments',
      unit: 'msat',
    });
    this.#points = meter.createCounter('lightning.points.spent', {
      description: "Players' points spent, by currency (minor units)",
      unit: '{point}',
    });
    this.#callbacks = meter.createCounter('lightning.callbacks', {
      description: 'Status callbacks received, by what the route answered',
      unit: '{callback}',
    });
    this.#checks = meter.createCounter('lightning.reconciler.checks', {
      description: "The reconciler's re-reads of due intents",
      unit: '{check}',
    });
    this.#callbackDuration = meter.createHistogram('lightning.callback.duration', {
      description: "From a callback's arrival to the move it proved",
      unit: 's',
    });
    this.#serviceDuration = meter.createHistogram('lightning.service.request.duration', {
      description: 'Requests to the payments service, each attempt, by operation',
      unit: 's',
    });
    this.#gauges = gaugesOf(meter);
    if (!this.#live) return;
    // A subscriber makes the transport build a message per request: only for a real meter.
    subscribe(REQUEST_CHANNEL, this.#onRequest);
    moves.subscribe((move) => this.#moved(move));
    meter.addBatchObservableCallback(this.#observe, Object.values(this.#gauges) as Observable[]);
  }

  /** Whether an SDK is behind the meter (else every figure is dropped by the API anyway). */
  get live(): boolean {
    return this.#live;
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
      if (intent.unit === 'msats') this.#moneyIn.add(Number(intent.amount), { kind, late: true });
      return;
    }
    this.#moves.add(1, { kind, status });
    if (status !== 'completed') return;
    const counts = KINDS[kind].counts;
    if (counts === 'points') {
      this.#points.add(Number(intent.amount), { currency: intent.unit });
    } else if (counts === 'moneyIn') {
      this.#moneyIn.add(Number(intent.amount), { kind, late: false });
    } else if (counts === 'moneyOut') {
      this.#moneyOut.add(Number(intent.amount), { kind });
    }
  }

  /** A callback the route answered with `status` (not the set-up probe). */
  callback(status: number): void {
    this.#callbacks.add(1, {
      outcome: callbackOutcome(status),
      'http.response.status_code': status,
    });
  }

  /** A callback moved its intent, `ms` after it arrived. */
  callbackMoved(intent: Intent, ms: number): void {
    if (!this.#live) return;
    this.#callbackDuration.record(ms / 1000, { kind: intent.kind, status: intent.status });
  }

  /** The reconciler re-read a due intent (`ok` false: the check threw). */
  checked(ok: boolean): void {
    this.#checks.add(1, { outcome: ok ? 'ok' : 'failed' });
  }

  #request(event: RequestEvent): void {
    this.#serviceDuration.record(event.durationMs / 1000, {
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
      reads.unknowns(UNKNOWNS_READ),
      reads.held(UNKNOWNS_READ),
      reads.openCount(),
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

/** The gauges, read together once per collection. */
function gaugesOf(meter: Meter): Record<GaugeName, ObservableGauge> {
  return {
    unknown: meter.createObservableGauge('lightning.intents.unknown', {
      description: 'Intents whose outcome is unknown (counted up to 1,000)',
      unit: '{intent}',
    }),
    open: meter.createObservableGauge('lightning.intents.open', {
      description: 'Open intents of the game, matches aside (what limits.maxOpenPerGame guards)',
      unit: '{intent}',
    }),
    held: meter.createObservableGauge('lightning.payouts.held', {
      description: 'Payouts held for an operator (approvals), counted up to 1,000',
      unit: '{payout}',
    }),
    escrow: meter.createObservableGauge('lightning.money.escrow', {
      description: "Matches' pots: paid fees not yet paid out, refunded or raked",
      unit: 'msat',
    }),
    owed: meter.createObservableGauge('lightning.money.owed', {
      description: 'Owed to players: unclaimed codes and payouts to pay by hand',
      unit: 'msat',
    }),
    inFlight: meter.createObservableGauge('lightning.money.in_flight', {
      description: 'Sent or being sent, not settled',
      unit: 'msat',
    }),
    cover: meter.createObservableGauge('lightning.money.cover', {
      description:
        'The last wallet reading minus owed, escrow and in flight (none before a reading)',
      unit: 'msat',
    }),
    paused: meter.createObservableGauge('lightning.payouts.paused', {
      description: 'Payouts paused by the breaker: 1 paused, 0 running',
      // Not '1' (a ratio, to Prometheus): a state.
      unit: '{state}',
    }),
  };
}
