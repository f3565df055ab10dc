/**
 * A SQLite ledger that does something the instant an armed intent's move to `completed` is in
 * it, before the caller hears of the move: closes itself (a process that stops there) or kills
 * its process (a crash there). For the tests of what a stop between a move and its follow-up
 * leaves.
 */
import type { Intent, IntentStatus } from '../../src/ledger/intent.js';
import { SqliteLedger, type SqliteLedgerOptions } from '../../src/ledger/sqlite.js';
import type { TransitionOptions } from '../../src/ledger/store.js';

export class ArmedLedger extends SqliteLedger {
  armed: string | null = null;
  readonly #then: (ledger: ArmedLedger) => void;

  constructor(options: SqliteLedgerOptions, then: (ledger: ArmedLedger) => void) {
    super(options);
    this.#then = then;
  }

  override async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null> {
    const moved = await super.transition(id, from, to, options);
    if (moved !== null && id === this.armed && to === 'completed') {
      this.armed = null;
      this.#then(this);
    }
    return moved;
  }
}
