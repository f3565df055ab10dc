/** Who looks at a due intent: the engine, the payout queue (a queued payout) or the matches. */
import type { Intent } from '../ledger/intent.js';
import type { Engine } from './engine.js';
import type { PayoutQueue } from './queue.js';

/** Whoever looks at intents the service holds nothing of. */
export interface Looker {
  check(intent: Intent): Promise<Intent>;
}

export class Checks {
  readonly #engine: Engine;
  readonly #queue: Pick<PayoutQueue, 'drain'>;
  readonly #own: Looker;

  constructor(engine: Engine, queue: Pick<PayoutQueue, 'drain'>, own: Looker) {
    this.#engine = engine;
    this.#queue = queue;
    this.#own = own;
  }

  /** Looks at `intent` now, whoever's it is to look at; resolves with what the look left. */
  check(intent: Intent): Promise<Intent> {
    if (this.#engine.rulesOf(intent.kind).reads === 'own') return this.#own.check(intent);
    if (intent.status === 'queued') return this.#queue.drain(intent);
    return this.#engine.check(intent);
  }
}
