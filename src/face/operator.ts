/**
 * `lightning.operator`: what a person running the game does (docs/OPERATING.md). Each action
 * parses its input, goes through the engine (a compare-and-set, its events, its journal
 * entries) and appends one line naming `by` to the append-only operator log; the reads are what
 * needs a person (unknowns, held payouts, the pause, the alerts). The console
 * (`operator.console`) is a page over these same calls.
 */
import type { Intent } from '../ledger/intent.js';
import type { OperatorAction, OperatorLogPage, OperatorLogQuery } from '../ledger/operator-log.js';
import type { LedgerStore } from '../ledger/store.js';
import type { ConsoleHost } from '../operator/reads.js';
import { parseInput } from '../parse.js';
import type { Alert, Alerts } from '../server/alerts.js';
import type { Engine } from '../server/engine.js';
import type { PayoutPause, SettledStatus } from '../server/events.js';
import {
  heldLimit,
  intentIdInput,
  type Operator,
  operatorLogQuery,
  operatorName,
  operatorNote,
  playerIdInput,
  resolveStatus,
} from '../server/operator.js';
import type { Settings } from '../server/options.js';
import type { Reconciler } from '../server/reconciler.js';
import { OperatorConsole } from './console.js';
import type { Reach } from './reach.js';

/** What the operator's calls use, of what the server runs on. */
export interface OperatorParts {
  engine: Pick<Engine, 'breaker'>;
  ledger: Pick<LedgerStore, 'unknowns'>;
  /** The operator's actions, each a line in the ledger's operator log. */
  operator: Operator;
  /** Null unless `alerts` is set. */
  alerts: Pick<Alerts, 'list'> | null;
  reconciler: Pick<Reconciler, 'start' | 'stop' | 'runOnce'>;
}

/** Run, pause or step the reconciler (it runs by itself unless `reconciler.enabled` is false). */
export interface ReconcilerControl {
  start(): void;
  stop(): Promise<void>;
  /** One pass over the due intents now; resolves with how many were checked. */
  runOnce(): Promise<number>;
}

/** The reconciler's controls, each starting the server first if need be. */
class Reconcilers implements ReconcilerControl {
  readonly #reach: Reach<OperatorParts>;
  readonly #settings: Settings;

  constructor(reach: Reach<OperatorParts>, settings: Settings) {
    this.#reach = reach;
    this.#settings = settings;
  }

  async #running(): Promise<OperatorParts['reconciler']> {
    return (await this.#reach.start()).reconciler;
  }

  start(): void {
    void this.#running().then(
      (r) => r.start(),
      (err: Error) => this.#settings.logger.error(`reconciler not started: ${err.message}`),
    );
  }

  async stop(): Promise<void> {
    return (await this.#running()).stop();
  }

  async runOnce(): Promise<number> {
    return (await this.#running()).runOnce();
  }
}

export class LightningOperator {
  readonly #reach: Reach<OperatorParts>;
  readonly #settings: Settings;

  /** The reconciler's controls. */
  readonly reconciler: ReconcilerControl;

  /** The operator's console, a page over these calls: mount it to use it. */
  readonly console: OperatorConsole;

  /** Made by `createLightning`; `host` is the face the console calls. */
  constructor(reach: Reach<OperatorParts>, settings: Settings, host: ConsoleHost) {
    this.#reach = reach;
    this.#settings = settings;
    this.console = new OperatorConsole(settings, host);
    this.reconciler = new Reconcilers(reach, settings);
  }

  /**
   * Intents whose outcome is unknown and that nothing will resolve by itself (oldest first, at
   * most `limit`: 1 to 1,000, default 100). Rewards and entry fees whose create answer was lost resolve
   * themselves once their deadline has passed, and spends by re-sending their key; they are
   * listed while they wait. A payment to a Lightning address whose answer was lost stays here
   * until a callback proves it or you resolve it. For an operator's page or a script.
   */
  async unknowns(limit?: number): Promise<Intent[]> {
    const max = parseInput(heldLimit, limit, 'limit');
    return (await this.#reach.start()).ledger.unknowns(max);
  }

  /**
   * Records an operator's decision about an `unknown` intent (after looking at the service's
   * dashboard, say): it moves to `status`, the note is kept in its history, `settled` fires, and
   * a line goes to the operator log naming `by` (the operator; omitted, the line says `unnamed
   * operator`). Rejects with OperatorRefusedError (an InvalidArgumentError) when the intent does
   * not exist or is not unknown, recording nothing.
   */
  async resolve(id: string, status: SettledStatus, note: string, by?: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const to = parseInput(resolveStatus, status, 'status');
    const why = parseInput(operatorNote, note, 'note');
    const who = by === undefined ? undefined : parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.resolve(intent, to, why, who);
  }

  /**
   * Pauses the game's payouts, as the breaker does (`paused` says so, its cause `operator`
   * and `by`; the `paused` event fires), until `resume(by)`: this process at once, every other
   * process sharing the ledger within a second (each looks at the ledger's pause every second,
   * and a process that starts while it holds starts paused; docs/OPERATING.md). Resolves with
   * the operator log's line; rejects with OperatorRefusedError when an operator's pause already
   * holds.
   */
  async pause(by: string, why: string): Promise<OperatorAction> {
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#reach.start()).operator.pause(who, reason);
  }

  /**
   * Ends the pause of the payouts: an operator's (in every process, see `pause`) and this
   * process's breaker's; the breaker counts afresh. With `by`, one line in the operator log,
   * and OperatorRefusedError when payouts are not paused. Without it (the call before the log),
   * this process's pause is lifted at once, and an operator's pause in the ledger after it, its
   * line naming `unnamed operator` (a failure to reach the ledger is logged).
   */
  resume(): void;
  resume(by: string): Promise<OperatorAction>;
  resume(by?: string): undefined | Promise<OperatorAction> {
    if (by === undefined) {
      const running = this.#reach.now();
      if (!running) return;
      running.engine.breaker.resume();
      void running.operator
        .resumeUnnamed()
        .catch((err: unknown) =>
          this.#settings.logger.warn(`lifting the operator's pause: ${(err as Error).message}`),
        );
      return;
    }
    return (async () => {
      const who = parseInput(operatorName, by, 'by');
      return (await this.#reach.start()).operator.resume(who);
    })();
  }

  /**
   * Why payouts are paused (the circuit breaker tripped, or an operator's `pause`): its
   * `reason`, its `cause` (`payouts` failing for several players, the service failing `reads`,
   * the `wallet` floor, `operator`) and whose payouts failed; null while they run.
   */
  get paused(): PayoutPause | null {
    return this.#reach.now()?.engine.breaker.paused ?? null;
  }

  /**
   * Issues a match's payout or refund once more as a new claim code: one that expired unclaimed
   * after its code was shown (the match never issues those by itself: the player may have held
   * the code). Once per payout; the money goes from `house:unclaimed` back out. Resolves with the
   * new attempt (its entry appears in the room); rejects with OperatorRefusedError for a claimed,
   * open or never-shown code, or a second reissue.
   */
  async reissue(id: string, by: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.reissue(intent, who);
  }

  /**
   * Payouts the approvals held (`approvals` option), oldest first, at most `limit` (1 to 1,000,
   * default 100): each waits for `approve` or `reject`, and nothing of it has been sent.
   */
  async held(limit?: number): Promise<Intent[]> {
    const max = parseInput(heldLimit, limit, 'limit');
    return (await this.#reach.start()).operator.held(max);
  }

  /**
   * Approves a held payout: it is sent now, as any payout (a reward gets its claim code, with
   * as long to claim it from now as it was given; a payment goes to its address), and a line
   * naming `by` goes to the operator log. Resolves with the payout as the send left it
   * (`pending`, or `failed`/`unknown` with its error when the service refused or did not
   * answer). Rejects with OperatorRefusedError when the intent is not held, and with
   * PayoutsPausedError while payouts are paused, moving nothing.
   */
  async approve(id: string, by: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.approve(intent, who);
  }

  /**
   * Rejects a held payout: it ends `failed` without ever being sent (`settled` fires), its
   * error names `by` and `why`, and a line goes to the operator log. A match's payout goes to
   * the house (`house:rejected`) and the match ends settled; it is never issued again. Rejects
   * with OperatorRefusedError when the intent is not held.
   */
  async reject(id: string, by: string, why: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#reach.start()).operator.reject(intent, who, reason);
  }

  /**
   * Blocks a player: every money helper of theirs (reward, chargeEntryFee, spendPoints,
   * payAddress, a match's enter, the room plugin's) rejects with PlayerBlockedError, in every
   * process, before anything is recorded or sent, until `unblock`. Codes they hold stay valid,
   * and a match still pays them what it owes. Rejects with OperatorRefusedError when the player
   * is blocked already.
   */
  async block(playerId: string, by: string, why: string): Promise<OperatorAction> {
    const player = parseInput(playerIdInput, playerId, 'playerId');
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#reach.start()).operator.block(player, who, reason);
  }

  /** Lifts a block; OperatorRefusedError when the player is not blocked. */
  async unblock(playerId: string, by: string): Promise<OperatorAction> {
    const player = parseInput(playerIdInput, playerId, 'playerId');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.unblock(player, who);
  }

  /**
   * The operator log: every action an operator took (who, when, what, on which intent or
   * player, before -> after, why), oldest first, filtered by intent, player or time, a page at a
   * time (`limit` 1 to 1,000, default 100; pass the answer's `next` as `after`). Append-only.
   */
  async log(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    const parsed = parseInput(operatorLogQuery, query, 'query');
    return (await this.#reach.start()).operator.log(parsed as OperatorLogQuery);
  }

  /**
   * The alerts raised now in this process (with `alerts` set; see the `alert` event), oldest
   * first, for a console: cover low, an old unknown, payouts paused, an audit finding, the
   * service failing. Empty before the server starts.
   */
  alerts(): Alert[] {
    return this.#reach.now()?.alerts?.list() ?? [];
  }
}
