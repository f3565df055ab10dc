/**
 * What an intent's kind means, as one object per kind: how it is re-read, what a lost answer
 * leaves, where it sits in a room and in the journal, what its metrics count. The engine applies
 * these rules and names no kind; index.ts registers them. Nothing here imports the engine.
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
  /** Fields learned on the way (the remote id and code of an `unknown`). */
  patch: IntentPatch;
  /** The service's own status word, for the history. */
  note: string;
}

/** What a kind may use of the engine when it looks at an ended intent again. */
export interface KindHost {
  readonly port: PaymentsPort;
  readonly logger: LightningLogger;
  now(): number;
  /** Writes non-status fields with their postings; null when the status moved or it is written. */
  update(intent: Intent, patch: IntentPatch): Promise<Intent | null>;
  /** The callback URL an intent's resource carries (what proves a hinted resource ours). */
  callbackUrl(token: string): string;
}

/** With `proof` (a hinted intent's callback URL, '' without a token): the resource is not ours. */
export function notProvenBy(proof: string | undefined, callbackUrl: string | null | undefined) {
  return proof !== undefined && (proof === '' || callbackUrl !== proof);
}

/** A field its kind always records before the send: a record that lost it is never sent. */
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

/** A kind's rules; a group's own record (a match) moves no money: its moves are its events. */
export type KindRules = RulesOfAnyKind &
  ({ readonly movesMoney: true; readonly kind: MoneyKind } | { readonly movesMoney: false });

interface RulesOfAnyKind {
  readonly kind: IntentKind;
  /**
   * How it is re-read: `resource` by the service's id (a callback may name it first), `key` by
   * sending the keyed call again, `own` by the layer that owns it (server/checks.ts).
   */
  readonly reads: 'resource' | 'key' | 'own';
  /** Reads the service and says what the intent should become; null: not ours (`proof`). */
  observe?(
    port: PaymentsPort,
    intent: Intent,
    remoteId: string,
    now: number,
    proof?: string,
  ): Promise<Observation | null>;
  /**
   * What an `unknown` whose create answer was lost waits for: `deadline` (nobody has its code:
   * expired past it), `proof` (money may have left: a proven callback or an operator), `resend`.
   */
  readonly lostAnswer: 'deadline' | 'proof' | 'resend';
  /** Whether its pending state shows the player a code (recorded as `meta.shownAt`). */
  readonly showsCode: boolean;
  /**
   * One more look after it ended (a fee paid late is still money in); `hint` is a callback's, to
   * be proven. Resolves with the intent marked when money came in late, else null.
   */
  afterEnd?(host: KindHost, intent: Intent, hint?: string): Promise<Intent | null>;
  /** Moves that make its group's record due at once, in the move's atomic step (`dueAlso`). */
  readonly groupDue?: { readonly on: readonly IntentStatus[]; readonly while: IntentStatus };
  /** May it be issued again having ended unpaid? (payout-position.ts's `mayReissue` for payouts) */
  mayReissue(intent: Intent): boolean;
  /** The room map its entry appears in; null: it never appears in a room. */
  readonly room: RoomMap | null;
  /** What its completion counts in the metrics. */
  readonly counts: 'moneyIn' | 'moneyOut' | 'points' | null;
  /** Where its money sits in its current state (the journal's rule for it). */
  position(intent: Intent): Position;
  /** The Lightning address it pays, if it pays one (the breaker holds one that fails). */
  address?(intent: Intent): string | null;
}

/** The rules of every kind, by kind: built once (kinds/index.ts) and handed to the engine. */
export type KindTable = Readonly<Record<IntentKind, KindRules>>;
