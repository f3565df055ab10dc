/**
 * `lightning.operator`: what a person running the game does (docs/OPERATING.md). Each action
 * goes through the engine and appends one line naming `by` to the operator log; a refusal is
 * an OperatorRefusedError, nothing recorded. The console is a page over these same calls.
 */
import type { Intent } from '../ledger/intent.js';
import type { OperatorAction, OperatorLogPage, OperatorLogQuery } from '../ledger/operator-log.js';
import type { ConsoleHost } from '../operator/reads.js';
import { parseInput } from '../parse.js';
import type { Alert } from '../server/alert-kinds.js';
import type { PayoutPause, SettledStatus } from '../server/events.js';
import {
  heldLimit,
  intentIdInput,
  operatorLogQuery,
  operatorName,
  operatorNote,
  playerIdInput,
  resolveStatus,
} from '../server/operator.js';
import type { Settings } from '../server/options.js';
import type { Refusal, RefusalCount } from '../server/refusals.js';
import type { Runtime } from '../server/runtime.js';
import { OperatorConsole } from './console.js';
import type { Reach } from './reach.js';

/** Run, pause or step the reconciler (it runs by itself unless `reconciler.enabled` is false). */
export interface ReconcilerControl {
  start(): void;
  stop(): Promise<void>;
  /** One pass over the due intents now; resolves with how many were checked. */
  runOnce(): Promise<number>;
}

type OperatorParts = Pick<
  Runtime,
  'engine' | 'ledger' | 'operator' | 'alerts' | 'reconciler' | 'refusals'
>;

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
    // Each control starts the server first if need be.
    const running = async () => (await reach.start()).reconciler;
    this.reconciler = {
      start: () =>
        void running().then(
          (r) => r.start(),
          (err: Error) => settings.logger.error(`reconciler not started: ${err.message}`),
        ),
      stop: async () => (await running()).stop(),
      runOnce: async () => (await running()).runOnce(),
    };
  }

  /** Intents whose outcome is unknown and that nothing will resolve by itself, oldest first. */
  async unknowns(limit?: number): Promise<Intent[]> {
    const max = parseInput(heldLimit, limit, 'limit');
    return (await this.#reach.start()).ledger.unknowns(max);
  }

  /** Records an operator's decision about an `unknown` intent: it moves to `status`. */
  async resolve(id: string, status: SettledStatus, note: string, by?: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const to = parseInput(resolveStatus, status, 'status');
    const why = parseInput(operatorNote, note, 'note');
    const who = by === undefined ? undefined : parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.resolve(intent, to, why, who);
  }

  /** Pauses the game's payouts in every process until `resume(by)`; resolves with the log line. */
  async pause(by: string, why: string): Promise<OperatorAction> {
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#reach.start()).operator.pause(who, reason);
  }

  /**
   * Ends the pause, an operator's and the breaker's. Without `by`, this process resumes at once
   * and the ledger's pause is lifted after, its line naming `unnamed operator`.
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

  /** Why payouts are paused (`reason`, `cause`, whose payouts failed); null while they run. */
  get paused(): PayoutPause | null {
    return this.#reach.now()?.engine.breaker.paused ?? null;
  }

  /** Issues a shown, expired match payout or refund once more, as a new claim code, once. */
  async reissue(id: string, by: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.reissue(intent, who);
  }

  /** Payouts the approvals held, oldest first (`limit` 1 to 1,000, default 100); none sent. */
  async held(limit?: number): Promise<Intent[]> {
    const max = parseInput(heldLimit, limit, 'limit');
    return (await this.#reach.start()).ledger.held(max);
  }

  /** Approves a held payout: it is sent now (PayoutsPausedError while payouts are paused). */
  async approve(id: string, by: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#reach.start()).operator.approve(intent, who);
  }

  /** Rejects a held payout: it ends `failed`, never sent (a match's goes to `house:rejected`). */
  async reject(id: string, by: string, why: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#reach.start()).operator.reject(intent, who, reason);
  }

  /** Blocks a player's money helpers (PlayerBlockedError) in every process until `unblock`. */
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

  /** The append-only operator log, oldest first, a page at a time (pass `next` as `after`). */
  async log(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    const parsed = parseInput(operatorLogQuery, query, 'query');
    return (await this.#reach.start()).ledger.operatorLog(parsed as OperatorLogQuery);
  }

  /**
   * The tab calls this process refused lately (credits and withdrawals: past the balance, a
   * budget, a block, an earning rule), newest first (`limit` 1 to 1,000, default 100), and how
   * many per call and code since it started. Per process, as the alerts are.
   */
  async refusals(limit?: number): Promise<{ recent: Refusal[]; counts: RefusalCount[] }> {
    const max = parseInput(heldLimit, limit, 'limit');
    const refusals = this.#reach.now()?.refusals;
    return { recent: refusals?.recent(max) ?? [], counts: refusals?.counts() ?? [] };
  }

  /** The alerts raised now in this process (with `alerts` set), oldest first. */
  alerts(): Alert[] {
    return this.#reach.now()?.alerts?.list() ?? [];
  }
}
