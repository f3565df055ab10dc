/**
 * The money operations over one engine, for whoever starts them (a room, the face), each from
 * input parsed where it entered. Handed to a room once the server runs, so that a helper calls
 * down into the server, never back up into the face.
 */
import { ConfigurationError } from '../../errors.js';
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { Engine } from '../engine.js';
import { startCredit } from '../kinds/credit.js';
import { startEntryFee } from '../kinds/entry-fee.js';
import { startAddressPayment } from '../kinds/payment.js';
import { startReward } from '../kinds/reward.js';
import { startSpend } from '../kinds/spend.js';
import { startWithdrawal } from '../kinds/withdrawal.js';
import type { Refusals } from '../refusals.js';
import type {
  ParsedAddressPayment,
  ParsedCredit,
  ParsedEntryFee,
  ParsedReward,
  ParsedSpend,
  ParsedWithdrawal,
} from './inputs.js';

export class MoneyOperations {
  readonly #engine: Engine;
  readonly #refusals: Refusals;
  #closed = false;

  /** `refusals`: where a refused tab call is noted, for the operator. */
  constructor(engine: Engine, refusals: Refusals) {
    this.#engine = engine;
    this.#refusals = refusals;
  }

  /** Once the runtime closes: each operation rejects as the closed face does, nothing recorded. */
  close(): void {
    this.#closed = true;
  }

  async reward(args: ParsedReward): Promise<Intent> {
    return startReward(this.#open(), args);
  }

  async payAddress(args: ParsedAddressPayment): Promise<Intent> {
    return startAddressPayment(this.#open(), args);
  }

  async chargeEntryFee(args: ParsedEntryFee): Promise<Intent> {
    return startEntryFee(this.#open(), args);
  }

  async spendPoints(args: ParsedSpend): Promise<Intent> {
    return startSpend(this.#open(), args);
  }

  async credit(args: ParsedCredit): Promise<Intent> {
    const engine = this.#open();
    return this.#refusals.noted('tabs.credit', args, () => startCredit(engine, args));
  }

  async withdraw(args: ParsedWithdrawal): Promise<Intent> {
    const engine = this.#open();
    return this.#refusals.noted('tabs.withdraw', args, () => startWithdrawal(engine, args));
  }

  /** The msats in a player's tab now: the journal's balance of `tab:<player>`. */
  async tab(playerId: string): Promise<number> {
    const [row] = await this.#open().ledger.balances([accounts.tab(playerId)]);
    return row === undefined ? 0 : Number(row.balance);
  }

  #open(): Engine {
    if (this.#closed) throw new ConfigurationError('lightning', 'is closed');
    return this.#engine;
  }
}
