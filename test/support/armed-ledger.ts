/**
 * Ledgers that do something the instant an armed intent's move (to `completed`, unless
 * `armedTo` says another status) is in them, before the caller hears of the move: close
 * themselves (a process that stops there) or kill their process (a crash there). For the tests
 * of what a stop between a move and its follow-up leaves. ArmedLedger is SQLite's,
 * ArmedPostgresLedger PostgreSQL's.
 */
import type { Intent, IntentStatus } from '../../src/ledger/intent.js';
import { PostgresLedger, type PostgresLedgerOptions } from '../../src/ledger/postgres.js';
import { SqliteLedger, type SqliteLedgerOptions } from '../../src/ledger/sqlite.js';
import type { TransitionOptions } from '../../src/ledger/store.js';

interface Armed {
  armed: string | null;
  armedTo: IntentStatus;
}

/** Runs `then` once if `moved` is the armed intent's armed move. */
function fire<T extends Armed>(ledger: T, moved: Intent | null, then: (ledger: T) => void): void {
  if (moved !== null && moved.id === ledger.armed && moved.status === ledger.armedTo) {
    ledger.armed = null;
    then(ledger);
  }
}

export class ArmedLedger extends SqliteLedger implements Armed {
  armed: string | null = null;
  armedTo: IntentStatus = 'completed';
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
    fire(this, moved, this.#then);
    return moved;
  }
}

export class ArmedPostgresLedger extends PostgresLedger implements Armed {
  armed: string | null = null;
  armedTo: IntentStatus = 'completed';
  readonly #then: (ledger: ArmedPostgresLedger) => void;

  constructor(
    url: string,
    options: PostgresLedgerOptions,
    then: (ledger: ArmedPostgresLedger) => void,
  ) {
    super(url, options);
    this.#then = then;
  }

  override async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null> {
    const moved = await super.transition(id, from, to, options);
    fire(this, moved, this.#then);
    return moved;
  }
}
