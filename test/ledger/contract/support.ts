/** What the contract's suites share: inputs, assertions, and a walk to any status. */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  INTENT_STATUSES,
  type Intent,
  type IntentStatus,
  type LedgerStore,
  type NewIntent,
} from '../../../src/ledger/index.js';

import type { NewOperatorAction } from '../../../src/ledger/operator-log.js';

/** An operator log line for the contract: a resolve by `alice` unless overridden. */
export function operatorLine(overrides: Partial<NewOperatorAction> = {}): NewOperatorAction {
  return {
    by: 'alice',
    action: 'resolve',
    intentId: `intent-${randomUUID()}`,
    playerId: `player-${randomUUID()}`,
    before: 'unknown',
    after: 'failed',
    note: 'dashboard: never claimed',
    ...overrides,
  };
}

export type LedgerFactory = () => Promise<{ store: LedgerStore; cleanup(): Promise<void> }>;

/**
 * A fresh store from `factory` for each test of the enclosing describe, handed to `use` before
 * the test and cleaned up after it.
 */
export function eachStore(factory: LedgerFactory, use: (store: LedgerStore) => void): void {
  let cleanup: () => Promise<void> = async () => {};
  beforeEach(async () => {
    const made = await factory();
    use(made.store);
    cleanup = made.cleanup;
  });
  afterEach(() => cleanup());
}

/** A base64url token of 128 bits, as the server layer makes them. */
export function token(): string {
  return randomBytes(16).toString('base64url');
}

/** A valid new intent with unique room and player ids, so stores may share a keyspace. */
export function newIntent(overrides: Partial<NewIntent> = {}): NewIntent {
  return {
    kind: 'reward',
    roomId: `room-${randomUUID()}`,
    playerId: `player-${randomUUID()}`,
    amount: '21000',
    unit: 'msats',
    description: 'Level 3 cleared',
    callbackToken: token(),
    ...overrides,
  };
}

/**
 * The intent a create of `input` records, as the store will fill it in: for computing the
 * create's postings (journal.ts `postingsFor(null, ..., positionOf)`) before the intent exists.
 */
export function asCreated(input: NewIntent & { id: string }, now: number): Intent {
  return {
    remoteId: null,
    code: null,
    uri: null,
    callbackToken: null,
    idempotencyKey: null,
    openKey: null,
    groupId: null,
    expiresAt: null,
    nextCheckAt: null,
    meta: {},
    ...input,
    status: 'creating',
    createdAt: now,
    updatedAt: now,
    checks: 0,
    leaseOwner: null,
    leaseUntil: null,
    error: null,
    history: [{ at: now, from: null, to: 'creating' }],
  };
}

/** Awaits a promise that must reject with `type`, and returns the error. */
export async function rejection<E extends Error>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof type, `expected a ${type.name}, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected a ${type.name}, but the call succeeded`);
}

/** Asserts that `actual` has every property of `expected` with a deeply equal value. */
export function assertIncludes(actual: unknown, expected: Record<string, unknown>): void {
  assert.ok(
    actual !== null && typeof actual === 'object',
    `expected an object, got ${typeof actual}`,
  );
  const picked = Object.fromEntries(
    Object.keys(expected).map((k) => [k, (actual as Record<string, unknown>)[k]]),
  );
  assert.deepEqual(picked, expected);
}

/** Asserts that every one of `expected` is in `actual`. */
export function assertMembers(actual: readonly unknown[], expected: readonly unknown[]): void {
  for (const item of expected) assert.ok(actual.includes(item), `missing ${String(item)}`);
}

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ALL_PAIRS = INTENT_STATUSES.flatMap((from) =>
  INTENT_STATUSES.map((to) => [from, to] as const),
);

/** Creates an intent on `store` and walks it to `status` along allowed moves. */
export async function walkTo(
  store: LedgerStore,
  status: IntentStatus,
  overrides: Partial<NewIntent> = {},
): Promise<Intent> {
  const first =
    status === 'held' ? { hold: { aboveMsat: 0 } } : status === 'queued' ? { queue: true } : {};
  const created = await store.create(newIntent(overrides), undefined, first);
  const path: Record<IntentStatus, IntentStatus[]> = {
    held: [],
    queued: [],
    creating: [],
    pending: ['pending'],
    unknown: ['unknown'],
    completed: ['pending', 'completed'],
    expired: ['pending', 'expired'],
    failed: ['failed'],
  };
  let current = created;
  for (const to of path[status]) {
    const moved = await store.transition(current.id, current.status, to);
    if (!moved) assert.fail(`could not move ${current.status} -> ${to}`);
    current = moved;
  }
  assert.equal(current.status, status);
  return current;
}
