/**
 * Alerts: the conditions an operator must hear about (alert-kinds.ts), each raised once and
 * cleared once, as an `alert` event and one log line, and listed while raised. Checked after
 * each audit run and every `alerts.intervalMs`; the state is this process's.
 *
 *   createLightning({ alerts: { coverBelowMsat: 50_000_000, unknownAfterMs: 600_000 } });
 *   lightning.on('alert', (a) => pager.send(`${a.state}: ${a.message}`));
 *
 * Cost per check: the oldest 1,000 unknowns, two balance reads (outside an audit run), no call
 * to the service; per service request, one comparison.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Clock } from '../clock.js';
import type { Intent } from '../ledger/intent.js';
import { REQUEST_CHANNEL, type RequestEvent } from '../port/requests.js';
import type { Alert, AlertCondition, AlertKind } from './alert-kinds.js';
import type { Balances } from './balances.js';
import type { AuditFinding } from './findings.js';
import type { LightningLogger } from './logger.js';
import type { GaugeReads } from './metrics.js';
import type { AlertSettings } from './options.js';

/** What an audit run hands the check: its findings and the balances it read. */
interface AuditSight {
  findings: readonly AuditFinding[];
  balances: Balances;
}

/** Unknowns read per check: the oldest are the ones that alert. */
const UNKNOWNS_READ = 1000;

export class Alerts {
  readonly #settings: AlertSettings;
  readonly #clock: Clock;
  readonly #logger: LightningLogger;
  readonly #reads: GaugeReads;
  readonly #emit: (alert: Alert) => void;
  readonly #active = new Map<string, Alert>();
  /** The current run of 5xx answers: its first and latest, and the latest status. */
  #failing: { since: number; latest: number; status: number } | null = null;
  #timer: NodeJS.Timeout | undefined;
  /** Checks run one after another, so that one condition is never raised twice by a race. */
  #queue: Promise<void> = Promise.resolve();
  readonly #onRequest = (message: unknown) => this.#sawRequest(message as RequestEvent);

  constructor(deps: {
    settings: AlertSettings;
    clock: Clock;
    logger: LightningLogger;
    reads: GaugeReads;
    emit(alert: Alert): void;
  }) {
    this.#settings = deps.settings;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#reads = deps.reads;
    this.#emit = deps.emit;
    subscribe(REQUEST_CHANNEL, this.#onRequest);
  }

  /** The alerts raised now, oldest first. */
  list(): Alert[] {
    return [...this.#active.values()].map((a) => ({ ...a }));
  }

  /** Checks every `alerts.intervalMs`, when set. */
  start(): void {
    const every = this.#settings.intervalMs;
    if (every === undefined || this.#timer) return;
    this.#timer = setInterval(() => void this.check(), every);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    unsubscribe(REQUEST_CHANNEL, this.#onRequest);
    await this.#queue;
  }

  /** Checks every condition now (with an audit run's findings); a failed read changes nothing. */
  check(audit?: AuditSight): Promise<void> {
    const run = this.#queue.then(() => this.#check(audit));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #check(audit: AuditSight | undefined): Promise<void> {
    const now = this.#clock.now();
    const { coverBelowMsat, unknownAfterMs } = this.#settings;
    this.#settle('payouts-paused', this.#paused());
    this.#settle('service-failing', this.#serviceFailing());
    if (audit) this.#settle('audit-finding', findingConditions(audit.findings));
    if (unknownAfterMs !== undefined) {
      this.#settle('unknown-old', await this.#guard('unknowns', () => this.#unknownOld(now)));
    }
    if (coverBelowMsat !== undefined) {
      const balances = audit?.balances ?? (await this.#guard('balances', this.#reads.balances));
      this.#settle('cover-low', balances && coverLow(balances, coverBelowMsat));
    }
  }

  async #guard<T>(what: string, read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err) {
      this.#logger.warn(`alerts: the ${what} could not be read: ${(err as Error).message}`);
      return undefined;
    }
  }

  /** Raises one kind's new alerts and clears those that no longer hold; `undefined`: unknown. */
  #settle(kind: AlertKind, holding: Map<string, AlertCondition> | undefined): void {
    if (holding === undefined) return;
    const now = this.#clock.now();
    for (const [key, alert] of this.#active) {
      if (alert.kind !== kind || holding.has(key)) continue;
      this.#active.delete(key);
      const cleared = { ...alert, state: 'cleared', at: now } as Alert;
      this.#logger.info(`alert cleared: ${alert.message}`);
      this.#emit(cleared);
    }
    for (const [key, condition] of holding) {
      if (this.#active.has(key)) continue;
      const raised = { ...condition, state: 'raised', key, raisedAt: now, at: now } as Alert;
      this.#active.set(key, raised);
      this.#logger.warn(`alert raised: ${condition.message}`);
      this.#emit({ ...raised });
    }
  }

  #paused(): Map<string, AlertCondition> {
    const pause = this.#reads.paused();
    if (pause === null) return new Map();
    return single('payouts-paused', {
      kind: 'payouts-paused',
      cause: pause.cause,
      reason: pause.reason,
      pausedAt: pause.at,
      message: `payouts are paused (${pause.cause}): ${pause.reason}; lightning.operator.resume(by) lifts it`,
    });
  }

  /** Every answer since the run's first has been a 5xx, and they span the window. */
  #serviceFailing(): Map<string, AlertCondition> {
    const run = this.#failing;
    if (run === null || run.latest - run.since < this.#settings.serviceFailingMs) return new Map();
    return single('service-failing', {
      kind: 'service-failing',
      failingSince: run.since,
      status: run.status,
      message: `the service has answered only 5xx (latest ${run.status}) since ${new Date(run.since).toISOString()}`,
    });
  }

  #sawRequest(event: RequestEvent): void {
    // No answer (a timeout, a refused connection) says nothing about what the service answers.
    if (event.status === undefined) return;
    if (event.status < 500) {
      this.#failing = null;
      return;
    }
    const now = this.#clock.now();
    this.#failing = { since: this.#failing?.since ?? now, latest: now, status: event.status };
  }

  async #unknownOld(now: number): Promise<Map<string, AlertCondition>> {
    const after = this.#settings.unknownAfterMs ?? 0;
    const old = (await this.#reads.ledger.unknowns(UNKNOWNS_READ))
      .map((intent) => ({ intent, since: unknownSince(intent) }))
      .filter((u) => now - u.since >= after)
      .sort((a, b) => a.since - b.since);
    const oldest = old[0];
    if (oldest === undefined) return new Map();
    const { intent, since } = oldest;
    return single('unknown-old', {
      kind: 'unknown-old',
      intentId: intent.id,
      intentKind: intent.kind,
      unknownSince: since,
      count: old.length,
      message: `${old.length} intent(s) unknown for over ${Math.round(after / 1000)} s, the oldest ${intent.kind} ${intent.id} since ${new Date(since).toISOString()}: see lightning.operator.unknowns()`,
    });
  }
}

function single(key: string, condition: AlertCondition): Map<string, AlertCondition> {
  return new Map([[key, condition]]);
}

/** When an intent last became unknown (its history says), else when it was last written. */
function unknownSince(intent: Intent): number {
  const move = intent.history.findLast((h) => h.to === 'unknown');
  return move?.at ?? intent.updatedAt;
}

function coverLow(balances: Balances, threshold: number): Map<string, AlertCondition> | undefined {
  // Without a wallet reading there is no cover to compare: leave the alert as it is.
  if (balances.coverMsat === null) return undefined;
  if (BigInt(balances.coverMsat) >= BigInt(threshold)) return new Map();
  return single('cover-low', {
    kind: 'cover-low',
    coverMsat: balances.coverMsat,
    thresholdMsat: String(threshold),
    message: `cover is ${balances.coverMsat} msats, below ${threshold}: the wallet barely covers what is owed, escrowed and in flight`,
  });
}

function findingConditions(findings: readonly AuditFinding[]): Map<string, AlertCondition> {
  const holding = new Map<string, AlertCondition>();
  for (const finding of findings) {
    holding.set(`audit-finding:${findingSubject(finding)}`, {
      kind: 'audit-finding',
      finding,
      message: `audit: ${finding.message}`,
    });
  }
  return holding;
}

/** What a finding is about, so that the same broken rule is one alert however its figures move. */
function findingSubject(finding: AuditFinding): string {
  switch (finding.type) {
    case 'journal-unbalanced':
      return `${finding.type}:${finding.unit}`;
    case 'escrow-left':
      return `${finding.type}:${finding.matchId}`;
    case 'winner-unpaid':
      return `${finding.type}:${finding.matchId}:${finding.playerId}`;
    case 'unknown-overdue':
      return `${finding.type}:${finding.intentId}`;
    case 'tab-negative':
      return `${finding.type}:${finding.playerId}`;
    case 'wallet-mismatch':
    case 'cover-short':
      return finding.type;
  }
}
