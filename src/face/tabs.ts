/**
 * `lightning.tabs`: players' tabs from the server, outside a room (docs/MATCHES.md): small credits
 * that add up in the ledger and leave as one claim code. A room uses its plugin's `credit` and
 * `withdraw`, which also keep the player's balance in sync.
 */

import { idInput } from '../id-input.js';
import type { Intent } from '../ledger/intent.js';
import { parseInput } from '../parse.js';
import {
  type CreditInput,
  creditInput,
  type WithdrawInput,
  withdrawInput,
} from '../server/operations/inputs.js';
import type { MoneyOperations } from '../server/operations/money.js';
import type { Reach } from './reach.js';

export class LightningTabs {
  readonly #reach: Reach<{ money: MoneyOperations }>;

  /** Made by `createLightning`. */
  constructor(reach: Reach<{ money: MoneyOperations }>) {
    this.#reach = reach;
  }

  /**
   * Credits a player's tab: recorded at once, with no service call, in the ledger alone; under
   * a `key` already used for the player, the first credit is the answer.
   */
  async credit(input: CreditInput): Promise<Intent> {
    const args = parseInput(creditInput, input);
    return (await this.#reach.start()).money.credit(args);
  }

  /**
   * Turns `amountMsat` of a player's tab into one claim code only they see; resolves once
   * created (`pending`). More than the tab holds: InsufficientFundsError, nothing recorded. A
   * code that expires unclaimed returns its amount to the tab.
   */
  async withdraw(input: WithdrawInput): Promise<Intent> {
    const args = parseInput(withdrawInput, input);
    return (await this.#reach.start()).money.withdraw(args);
  }

  /** The msats in a player's tab now, as the journal holds them. */
  async balance(playerId: string): Promise<number> {
    const id = parseInput(idInput, playerId, 'playerId');
    return (await this.#reach.start()).money.tab(id);
  }
}
