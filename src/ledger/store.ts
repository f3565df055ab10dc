/**
 * The one interface every ledger store implements (SQLite today, Redis for clusters).
 * Every method is async so that a networked store fits; every status change is an atomic
 * compare-and-set, so two processes or two callbacks can never both apply one.
 */
import type { Intent, IntentPatch, IntentStatus, NewIntent } from './intent.js';

export interface TransitionOptions {
  /** Fields written in the same atomic step as the status. */
  patch?: IntentPatch;
  /** A short note kept in the intent's history (never a secret). */
  note?: string;
  /** epoch ms; defaults to Date.now(). */
  now?: number;
}

export interface LedgerStore {
  /** Records a new intent in status `creating`. Rejects a duplicate id or callback token. */
  create(intent: NewIntent, now?: number): Promise<Intent>;

  get(id: string): Promise<Intent | null>;
  byCallbackToken(token: string): Promise<Intent | null>;
  byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null>;
  /** Open intents (creating, pending, unknown) of a room, oldest first. */
  openByRoom(roomId: string): Promise<Intent[]>;
  /** Open intents of a player, oldest first. */
  openByPlayer(playerId: string): Promise<Intent[]>;

  /**
   * Moves `id` from one of `from` to `to` atomically. Returns the updated intent, or null
   * when the intent's status was not in `from` (another writer won, or it was already
   * there). Throws when the move itself is not allowed by TRANSITIONS.
   */
  transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null>;

  /**
   * Writes non-status fields while the status is still `status`. Returns the updated intent,
   * or null when the status had changed.
   */
  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now?: number,
  ): Promise<Intent | null>;

  /**
   * Atomically takes up to `limit` open intents whose `nextCheckAt` is due (<= now) and whose
   * lease is free or expired, ordered by `nextCheckAt`, and leases them to `owner` until
   * now + leaseMs. No two callers get the same intent while its lease runs.
   */
  claimDue(now: number, limit: number, owner: string, leaseMs: number): Promise<Intent[]>;

  /** Releases a lease held by `owner` (no-op if it is not held by them). */
  release(id: string, owner: string): Promise<void>;

  close(): Promise<void>;
}
