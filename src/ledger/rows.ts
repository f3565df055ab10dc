/**
 * An intent as PostgresLedger keeps it: one row, snake_case columns, meta and history as JSON
 * text (PostgreSQL hands 64-bit integers over as text: they become numbers). A journal entry
 * is one row too (`rowToEntry`).
 */
import type { Intent, IntentHistoryEntry, IntentStatus } from './intent.js';
import type { JournalEntry } from './journal.js';

type Int = number | string;

export interface IntentRow {
  seq: Int;
  id: string;
  kind: Intent['kind'];
  status: IntentStatus;
  room_id: string | null;
  player_id: string;
  amount: string;
  unit: string;
  description: string;
  remote_id: string | null;
  code: string | null;
  uri: string | null;
  callback_token: string | null;
  idempotency_key: string | null;
  open_key: string | null;
  group_id: string | null;
  expires_at: Int | null;
  created_at: Int;
  updated_at: Int;
  next_check_at: Int | null;
  checks: Int;
  lease_owner: string | null;
  lease_until: Int | null;
  error: string | null;
  meta: string;
  history: string;
}

const num = (value: Int | null): number | null => (value === null ? null : Number(value));

export function rowToIntent(value: unknown): Intent {
  const row = value as IntentRow;
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    roomId: row.room_id,
    playerId: row.player_id,
    amount: row.amount,
    unit: row.unit,
    description: row.description,
    remoteId: row.remote_id,
    code: row.code,
    uri: row.uri,
    callbackToken: row.callback_token,
    idempotencyKey: row.idempotency_key,
    openKey: row.open_key,
    groupId: row.group_id,
    expiresAt: num(row.expires_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    nextCheckAt: num(row.next_check_at),
    checks: Number(row.checks),
    leaseOwner: row.lease_owner,
    leaseUntil: num(row.lease_until),
    error: row.error,
    meta: JSON.parse(row.meta) as Record<string, unknown>,
    history: JSON.parse(row.history) as IntentHistoryEntry[],
  };
}

export interface EntryRow {
  seq: Int;
  id: string;
  intent_id: string;
  player_id: string;
  match_id: string | null;
  debit: string;
  credit: string;
  amount: string;
  unit: string;
  why: string;
  at: Int;
}

export function rowToEntry(value: unknown): JournalEntry {
  const row = value as EntryRow;
  return {
    id: row.id,
    seq: Number(row.seq),
    intentId: row.intent_id,
    playerId: row.player_id,
    matchId: row.match_id,
    tag: row.id.slice(row.intent_id.length + 1),
    debit: row.debit,
    credit: row.credit,
    amount: row.amount,
    unit: row.unit,
    why: row.why,
    at: Number(row.at),
  };
}
