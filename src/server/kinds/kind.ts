/**
 * What an intent's kind means, as one object per kind (reward.ts, entry-fee.ts, spend.ts,
 * payment.ts, match.ts): how the engine re-reads one, what the service's answer means for it,
 * what a lost create answer leaves, what it still does once ended, whether it may be issued
 * again, where it appears in a room, where its money sits in each state (the journal's
 * positions: ledger/journal.ts writes the postings from them) and what its metrics count. The
 * engine applies these rules and names no kind; index.ts registers them.
 *
 * Nothing here may import the engine: the engine imports this file's types.
 */
import { InvalidIntentError } from '../../ledger/errors.js';
import type { Intent, IntentKind, IntentPatch, IntentStatus } from '../../ledger/intent.js';
import type { Position } from '../../ledger/journal.js';
import type { PaymentsPort } from '../../port/port.js';
import type { LightningLogger } from '../logger.js';

/** What a re-read of the service's resource says the intent should become. */
export interface Observation {
  /** The status the intent should move to, or null: still open, look again later. */
  to: IntentStatus | null;
  /** Fields learned on the way (the remote id and code of an intent that was `unknown`). */
  patch: IntentPatch;
  /** The service's own status word, for the history. */
  note: string;
}

/** What a kind may use of the engine when it looks at an ended intent again. */
export interface KindHost {
  readonly port: PaymentsPort;
  readonly logger: LightningLogger;
  now(): number;
  /**
   * Writes non-status fields of `intent` with the journal postings the change makes, in one
   * step; null when its status changed meanwhile, or when the journal already holds the step
   * (another process wrote it first).
   */
  update(intent: Intent, patch: IntentPatch): Promise<Intent | null>;
  /** The callback URL an intent's resource carries (what proves a hinted resource ours). */
  callbackUrl(token: string): string;
}

/**
 * With `proof` (the callback URL of an intent that learned its resource's id from a callback's
 * body), true when the resource read is someone else's: its callback URL is not `proof`, or the
 * intent had no token to prove it with (`proof` is '').
 */
export function notProvenBy(proof: string | undefined, callbackUrl: string | null | undefined) {
  return proof !== undefined && (proof === '' || callbackUrl !== proof);
}

/**
 * A field its kind always records before the intent is sent (a callback token, a payment's
 * address): read back for the send. A record that lost it is refused, never sent.
 */
export function recorded<T>(intent: Intent, field: string, value: T | null | undefined): T {
  if (value === null || value === undefined) {
    throw new InvalidIntentError(`${intent.kind} ${intent.id} was recorded without its ${field}`);
  }
  return value;
}

/** The map of a room's LightningState an intent's entry lives in. */
export type RoomMap = 'rewards' | 'entryFees' | 'pointSpends' | 'payments';

/** The kinds that move money: every kind but a group's own record (a match). */
export type MoneyKind = Exclude<IntentKind, 'match'>;

/**
 * A kind's rules. Whether it moves money: a group's own record (a match) does not; its moves
 * say what the group did (its own events), not that money settled (the `settled` events).
 */
export type KindRules = RulesOfAnyKind &
  ({ readonly movesMoney: true; readonly kind: MoneyKind } | { readonly movesMoney: false });

interface RulesOfAnyKind {
  readonly kind: IntentKind;
  /**
   * How the engine re-reads one:
   * - `resource`: by the service's id; a callback's body may name it before the create answered
   *   (it is then proven by the resource's callback URL before anything is written);
   * - `key`: the same keyed call is sent again (the service applies it once);
   * - `own`: a record of ours with nothing to read at the service; the layer that owns it checks
   *   it (server/checks.ts).
   */
  readonly reads: 'resource' | 'key' | 'own';
  /**
   * Reads the service (by `remoteId`; for `key` kinds, sends the keyed call again) and says what
   * the intent should become. With `proof`, a resource whose callback URL is not `proof` is
   * someone else's: the answer is null, and nothing was written at the service.
   */
  observe?(
    port: PaymentsPort,
    intent: Intent,
    remoteId: string,
    now: number,
    proof?: string,
  ): Promise<Observation | null>;
  /**
   * What an `unknown` whose create answer was lost waits for:
   * - `deadline`: its code was only in that answer, so nobody has it; once its deadline has
   *   passed it can never be claimed or paid, and it ends expired by reasoning;
   * - `proof`: its money may have left with no code to show for it: only a proven callback or an
   *   operator ends it;
   * - `resend`: keyed, so it is sent again (`resendMs` after the loss).
   */
  readonly lostAnswer: 'deadline' | 'proof' | 'resend';
  /** Whether its pending state shows the player a code (recorded as `meta.shownAt`). */
  readonly showsCode: boolean;
  /**
   * After it ended, one more look (a fee paid after its deadline is still money in). `hint`:
   * the resource a callback's body named, for an intent that ended without knowing its own (a
   * lost create answer); to be proven by the resource's callback URL before it is believed.
   * Resolves with the intent as marked when money came in late (the engine publishes it as a
   * late payment), else null.
   */
  afterEnd?(host: KindHost, intent: Intent, hint?: string): Promise<Intent | null>;
  /**
   * Which of its moves make its group's record (the intent whose id is its `groupId`) due at once,
   * and while that record is in which status: written in the move's own atomic step
   * (TransitionOptions.dueAlso), so the record's check follows the move in whichever process
   * looks next, whatever becomes of the one that moved it. None: its moves leave the group alone.
   */
  readonly groupDue?: { readonly on: readonly IntentStatus[]; readonly while: IntentStatus };
  /** May it be issued again having ended unpaid? (payout-position.ts's `mayReissue` for payouts) */
  mayReissue(intent: Intent): boolean;
  /** The room map its entry appears in; null: it never appears in a room. */
  readonly room: RoomMap | null;
  /** What its completion counts in the metrics: money in, money out, points spent, nothing. */
  readonly counts: 'moneyIn' | 'moneyOut' | 'points' | null;
  /** Where its money sits in its current state (the journal's rule for it). */
  position(intent: Intent): Position;
  /** The Lightning address it pays, if it pays one (the breaker holds one that fails). */
  address?(intent: Intent): string | null;
}

/** The rules of every kind, by kind: built once (kinds/index.ts) and handed to the engine. */
export type KindTable = Readonly<Record<IntentKind, KindRules>>;
