/**
 * The money operations over one engine, for whoever starts them (a room, the face), each from
 * input parsed where it entered. Handed to a room once the server runs, so that a helper calls
 * down into the server, never back up into the face.
 */
import { ConfigurationError } from '../../errors.js';
import type { Intent, IntentKind } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import { credit, startCredit } from '../kinds/credit.js';
import { entryFee, startEntryFee } from '../kinds/entry-fee.js';
import { payment, startAddressPayment } from '../kinds/payment.js';
import { reward, startReward } from '../kinds/reward.js';
import { spend, startSpend } from '../kinds/spend.js';
import { startWithdrawal, tabBalance, withdrawal } from '../kinds/withdrawal.js';
import type { Refusal, Refusals } from '../refusals.js';
import type {
  ParsedAddressPayment,
  ParsedCredit,
  ParsedEntryFee,
  ParsedReward,
  ParsedSpend,
  ParsedWithdrawal,
} from './inputs.js';

/** Told of each operation that threw, with its kind (the metrics count rules' refusals). */
export type OnRefused = (kind: IntentKind, err: unknown) => void;

export class MoneyOperations {
  readonly #engine: Engine;
  readonly #refusals: Refusals;
  readonly #refused: OnRefused;
  #closed = false;

  /** `refusals`: where a refused tab call is noted, for the operator; `refused`: the metrics. */
  constructor(engine: Engine, refusals: Refusals, refused: OnRefused = () => {}) {
    this.#engine = engine;
    this.#refusals = refusals;
    this.#refused = refused;
  }

  /** Once the runtime closes: each operation rejects as the closed face does, nothing recorded. */
  close(): void {
    this.#closed = true;
  }

  async reward(args: ParsedReward): Promise<Intent> {
    return this.#told(reward.kind, startReward(this.#open(), args));
  }

  async payAddress(args: ParsedAddressPayment): Promise<Intent> {
    return this.#told(payment.kind, startAddressPayment(this.#open(), args));
  }

  async chargeEntryFee(args: ParsedEntryFee): Promise<Intent> {
    return this.#told(entryFee.kind, startEntryFee(this.#open(), args));
  }

  async spendPoints(args: ParsedSpend): Promise<Intent> {
    return this.#told(spend.kind, startSpend(this.#open(), args));
  }

  /** `admit`: a rule of the caller's (a room's time in the room), refused and counted as ours. */
  async credit(args: ParsedCredit, admit: () => void = () => {}): Promise<Intent> {
    const engine = this.#open();
    const started = async () => {
      admit();
      return startCredit(engine, args);
    };
    return this.#told(credit.kind, started(), { call: 'tabs.credit', who: args });
  }

  /** A withdrawal of `amountMsat` from the tab, or of all of it (docs/MATCHES.md). */
  async withdraw(args: ParsedWithdrawal): Promise<Intent> {
    const who = { playerId: args.playerId, amountMsat: args.amountMsat ?? null };
    const started = startWithdrawal(this.#open(), args);
    return this.#told(withdrawal.kind, started, { call: 'tabs.withdraw', who });
  }

  /**
   * What `started` ends with; a rejection is told first (as `kind`'s), and a tab call's
   * (`noted`) is also noted for the operator.
   */
  async #told(
    kind: IntentKind,
    started: Promise<Intent>,
    noted?: { call: string; who: Pick<Refusal, 'playerId' | 'amountMsat'> },
  ): Promise<Intent> {
    try {
      return await started;
    } catch (err) {
      this.#refused(kind, err);
      if (noted) this.#refusals.note(noted.call, noted.who, err);
      throw err;
    }
  }

  /** The msats in a player's tab now: the journal's balance of `tab:<player>`. */
  async tab(playerId: string): Promise<number> {
    return Number(await tabBalance(this.#open(), playerId));
  }

  #open(): Engine {
    if (this.#closed) throw new ConfigurationError('lightning', 'is closed');
    return this.#engine;
  }
}
