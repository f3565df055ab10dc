/**
 * The model behind test/ledger/model.test.ts: a few intents as plain data (status, schedule,
 * lease, history) and one function, `expected`, that says what a LedgerStore call must answer
 * and how it changes them; `perform` makes the same call on a store. The fast-check commands
 * in ./model-commands.ts drive several instances of one store on one database (the
 * "writers") and this model side by side:
 *
 * - a call run alone must answer exactly what the model says;
 * - calls fired together from different writers (Promise.all) must answer, and leave the
 *   store, as the model does for SOME order of them: every store call is atomic;
 * - after every command each intent, read back through another writer, equals the model, and
 *   its history is a chain of moves that TRANSITIONS allows, one entry per applied move;
 * - every create, move and update carries the postings journal.ts computes from the model's
 *   view of its intent (`postingsFor`), and after every command the journal holds exactly the
 *   postings of the writes the model applied (a loser of a race, a refused write, or a write
 *   whose posting is already journaled adds none), each intent's entries chain its positions,
 *   each account's balance is the sum of its postings, and every unit's class balances sum to
 *   zero (checkJournal).
 *
 * Time is the model's logical clock, passed as `now` to every call, so leases expire exactly
 * when the model says. Costs one store call per operation, and per command one read of each
 * intent and of its journal entries, and two balance reads.
 */

import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import { InsufficientFundsError } from '../../src/errors.js';
import {
  type CreateGuards,
  canMove,
  DuplicateIntentError,
  IllegalTransitionError,
  type Intent,
  type IntentHistoryEntry,
  type IntentPatch,
  type IntentStatus,
  InvalidIntentError,
  isTerminal,
  type LedgerStore,
  OPEN_STATUSES,
  SETTLED_NOTE,
} from '../../src/ledger/index.js';
import {
  type AccountBalance,
  accountClass,
  accounts,
  afterWrite,
  type JournalEntry,
  type Posting,
  postingsFor,
} from '../../src/ledger/journal.js';
import { positionOf } from '../../src/server/kinds/index.js';
import { asCreated, newIntent } from './contract.js';

/** The model clock's start; times in messages are printed relative to it (t+1200). */
export const T0 = 1_700_000_000_000;
/** Store instances per run, all on one database. */
export const WRITERS = 3;
/** Few intents and few owners, so that writers and claimers keep colliding. */
export const MAX_INTENTS = 8;
export const OWNERS = ['alpha', 'beta', 'gamma'] as const;
/** Players, named within a sequence (Model.run), so that stores may share accounts' storage. */
export const PLAYERS = ['ann', 'bo', 'cy'] as const;
/**
 * What an intent is, so that its money sits in varied places: rewards and payments paid by the
 * house or from a match's pot (meta.payKey; a last attempt, meta.attempt 3, is owed by hand when
 * it fails), entry fees in and out of a match, spends in points, matches that take a rake.
 */
export const PROFILES = [
  { kind: 'reward', unit: 'msats', pot: false },
  { kind: 'reward', unit: 'msats', pot: true },
  { kind: 'reward', unit: 'msats', pot: true, attempt: 3 },
  { kind: 'payment', unit: 'msats', pot: false },
  { kind: 'payment', unit: 'msats', pot: true },
  { kind: 'entryFee', unit: 'msats', pot: true },
  { kind: 'entryFee', unit: 'msats', pot: false },
  { kind: 'spend', unit: 'USDZ', pot: false },
  { kind: 'match', unit: 'msats', pot: false },
  // A tab's credit, settled at its create; a withdrawal from the tab, guarded by its funds.
  { kind: 'credit', unit: 'msats', pot: false, guards: 'settled' },
  { kind: 'withdrawal', unit: 'msats', pot: false, guards: 'funds' },
] as const satisfies readonly {
  kind: Intent['kind'];
  unit: string;
  pot: boolean;
  attempt?: number;
  guards?: 'settled' | 'funds';
}[];
/** The profile of a withdrawal from a tab (the `sameTab` race draws with it). */
export const WITHDRAWAL = PROFILES.findIndex((p) => 'guards' in p && p.guards === 'funds');
/** Amounts around 2^59 too: eight of them still fit a balance, and none fits a double. */
export const AMOUNTS = ['1', '21000', String(2n ** 59n + 7n)] as const;
/** Accounts every sequence of a shared database moves: read before it starts (Model.baseline). */
export const SHARED_ACCOUNTS = [
  'wallet',
  'inflight',
  'house:rewards',
  'house:fees',
  'house:rake',
  'house:unclaimed',
  'house:points',
] as const;
/** What a patch does to meta (on top of what the intent's profile keeps there). */
export type MetaSpec = 'shown' | 'late' | 'settle' | 'none';

/** The part of an intent the model predicts; everything a call may change. */
export interface Modelled {
  id: string;
  status: IntentStatus;
  createdAt: number;
  updatedAt: number;
  nextCheckAt: number | null;
  checks: number;
  error: string | null;
  leaseOwner: string | null;
  leaseUntil: number | null;
  history: IntentHistoryEntry[];
  kind: Intent['kind'];
  playerId: string;
  groupId: string | null;
  amount: string;
  unit: string;
  meta: Record<string, unknown>;
}

/** A journal entry as the model predicts it: all but its seq. */
export type ModelEntry = Omit<JournalEntry, 'seq'>;

export interface Model {
  now: number;
  /** In creation order, which is the stores' insertion order (their last tie-breaker). */
  intents: Modelled[];
  /** Ids handed out so far, so that every fresh id is new. */
  ids: number;
  /** Names this sequence's ids, players and match, so that none is an earlier sequence's. */
  run: string;
  /** The entries of each intent, in the order their writes were applied. */
  journal: Record<string, ModelEntry[]>;
  /**
   * Intents a write of which carried postings computed from a state it did not write over (two
   * writes of one intent fired together, both applied): their entries need not chain.
   */
  stale: string[];
  /** Balances before the sequence: of SHARED_ACCOUNTS, and of every class (balances()). */
  baseline: { accounts: AccountBalance[]; classes: AccountBalance[] };
}

/** Several instances of one store on one database. */
export interface Writers {
  writers: LedgerStore[];
  close(): Promise<void>;
}

/** A patch as generated: `nextCheckAt` is relative to the model's clock. */
export interface PatchSpec {
  nextCheckAt?: number | null | undefined;
  checks?: number | undefined;
  error?: string | null | undefined;
  meta?: MetaSpec | undefined;
}

/** An operation as generated: intents are named by `pick` (modulo how many exist). */
export type Op =
  | {
      op: 'create';
      writer: number;
      due: number | null;
      reuse: number | null;
      /** Indexes of PROFILES, PLAYERS and AMOUNTS (modulo their length). */
      profile: number;
      player: number;
      amount: number;
      /** The player's whole tab (1 msat when it is empty), in place of AMOUNTS. */
      all?: boolean;
    }
  | {
      op: 'transition';
      writer: number;
      pick: number;
      /** Prefer an intent whose status is a listed source, so that most moves apply. */
      aim: boolean;
      from: IntentStatus[];
      to: IntentStatus;
      patch: PatchSpec;
    }
  | {
      op: 'update';
      writer: number;
      pick: number;
      status: IntentStatus | 'current';
      patch: PatchSpec;
    }
  | { op: 'claim'; writer: number; owner: string; limit: number; leaseMs: number }
  | { op: 'release'; writer: number; pick: number; owner: string | 'holder' };

/** An operation made concrete against the model: ids, statuses, times. */
export type Call =
  | {
      op: 'create';
      writer: number;
      now: number;
      id: string;
      nextCheckAt: number | null;
      intent: Pick<Modelled, 'kind' | 'playerId' | 'groupId' | 'amount' | 'unit' | 'meta'>;
      postings: Posting[];
      /** A tab's: a credit recorded settled, a withdrawal guarded by the tab's funds. */
      guards: CreateGuards;
    }
  | {
      op: 'transition';
      writer: number;
      now: number;
      id: string;
      from: IntentStatus[];
      to: IntentStatus;
      patch: IntentPatch;
      note: string;
      postings: Posting[];
      /** The intent as the model holds it, handed over as the engine hands its reading (`read`). */
      read?: Intent;
    }
  | {
      op: 'update';
      writer: number;
      now: number;
      id: string;
      status: IntentStatus;
      patch: IntentPatch;
      postings: Posting[];
    }
  | { op: 'claim'; writer: number; now: number; owner: string; limit: number; leaseMs: number }
  | { op: 'release'; writer: number; now: number; id: string; owner: string };

/** What a call answered, reduced to what the model predicts. */
export type Answer =
  | { intent: Modelled | null }
  | { intents: Modelled[] }
  | { done: true }
  | { error: string };

const REFUSALS = [
  DuplicateIntentError,
  IllegalTransitionError,
  InvalidIntentError,
  InsufficientFundsError,
] as const;

/** A player's tab as the model's journal has it (each sequence's players start at zero). */
export function tabOf(model: Model, playerId: string): bigint {
  const tab = accounts.tab(playerId);
  let balance = 0n;
  for (const entry of Object.values(model.journal).flat()) {
    if (entry.credit === tab) balance += BigInt(entry.amount);
    if (entry.debit === tab) balance -= BigInt(entry.amount);
  }
  return balance;
}

export function project(intent: Intent): Modelled {
  return {
    id: intent.id,
    status: intent.status,
    createdAt: intent.createdAt,
    updatedAt: intent.updatedAt,
    nextCheckAt: intent.nextCheckAt,
    checks: intent.checks,
    error: intent.error,
    leaseOwner: intent.leaseOwner,
    leaseUntil: intent.leaseUntil,
    history: intent.history,
    kind: intent.kind,
    playerId: intent.playerId,
    groupId: intent.groupId,
    amount: intent.amount,
    unit: intent.unit,
    meta: intent.meta,
  };
}

/** The model's view of an intent as a whole Intent, for journal.ts's rules. */
export function asIntent(m: Modelled): Intent {
  return {
    ...asCreated(
      {
        ...newIntent({ id: m.id, kind: m.kind, playerId: m.playerId, groupId: m.groupId }),
        id: m.id,
        amount: m.amount,
        unit: m.unit,
        meta: m.meta,
      },
      m.createdAt,
    ),
    ...m,
  };
}

const t = (ms: number): string => `t+${ms - T0}`;

function leaseRuns(m: Modelled, now: number): boolean {
  return m.leaseOwner !== null && m.leaseUntil !== null && now < m.leaseUntil;
}

function pickIntent(model: Model, pick: number, prefer?: (m: Modelled) => boolean): Modelled {
  const preferred = prefer ? model.intents.filter(prefer) : [];
  const pool = preferred.length > 0 ? preferred : model.intents;
  return pool[pick % pool.length] as Modelled;
}

/** Meta as a patch leaves it: what the profile keeps (payKey, attempt), and what `spec` adds. */
function metaOf(kept: Record<string, unknown>, spec: MetaSpec, now: number) {
  const { payKey, attempt } = kept;
  const meta: Record<string, unknown> = {
    ...(payKey === undefined ? {} : { payKey }),
    ...(attempt === undefined ? {} : { attempt }),
  };
  if (spec === 'shown') meta.shownAt = now;
  if (spec === 'late') meta.latePaymentReported = true;
  if (spec === 'settle') meta.decision = { kind: 'settle', rakeMsat: '500' };
  return meta;
}

function resolvePatch(spec: PatchSpec, now: number, target?: Modelled): IntentPatch {
  const patch: IntentPatch = {};
  if (spec.meta !== undefined && target) patch.meta = metaOf(target.meta, spec.meta, now);
  if (spec.nextCheckAt !== undefined) {
    patch.nextCheckAt = spec.nextCheckAt === null ? null : now + spec.nextCheckAt;
  }
  if (spec.checks !== undefined) patch.checks = spec.checks;
  if (spec.error !== undefined) patch.error = spec.error;
  return patch;
}

/** Makes an operation concrete against the model as it is before the command runs. */
export function resolve(model: Model, op: Op, sharedId?: string): Call {
  const { writer } = op;
  const now = model.now;
  switch (op.op) {
    case 'create': {
      const id =
        op.reuse !== null
          ? pickIntent(model, op.reuse).id
          : (sharedId ?? `${model.run}i${model.ids++}`);
      const profile = PROFILES[op.profile % PROFILES.length] as (typeof PROFILES)[number];
      const match = `${model.run}m`;
      const playerId =
        profile.kind === 'match'
          ? `match:${id}`
          : `${model.run}${PLAYERS[op.player % PLAYERS.length]}`;
      const tab = op.all ? tabOf(model, playerId) : 0n;
      const intent = {
        kind: profile.kind,
        playerId,
        groupId: profile.kind === 'match' ? id : profile.pot ? match : null,
        amount: op.all
          ? String(tab > 0n ? tab : 1n)
          : (AMOUNTS[op.amount % AMOUNTS.length] as string),
        unit: profile.unit,
        meta: {
          ...(profile.pot && profile.kind !== 'entryFee' ? { payKey: `${match}:${id}` } : {}),
          ...('attempt' in profile ? { attempt: profile.attempt } : {}),
        },
      };
      const nextCheckAt = op.due === null ? null : now + op.due;
      const postings = postingsFor(
        null,
        asCreated({ ...newIntent({ id, ...intent }), id, nextCheckAt }, now),
        positionOf,
      );
      const guards: CreateGuards = !('guards' in profile)
        ? {}
        : profile.guards === 'settled'
          ? { settled: true }
          : { funds: { account: accounts.tab(playerId) } };
      return { op: 'create', writer, now, id, nextCheckAt, intent, postings, guards };
    }
    case 'transition': {
      const target = pickIntent(
        model,
        op.pick,
        op.aim ? (m) => op.from.includes(m.status) : undefined,
      );
      const patch = resolvePatch(op.patch, now, target);
      const before = asIntent(target);
      return {
        op: 'transition',
        writer,
        now,
        id: target.id,
        from: op.from,
        to: op.to,
        patch,
        note: `w${writer}`,
        postings: postingsFor(before, afterWrite(before, op.to, patch, now), positionOf),
        // Half the moves carry their reading: stale ones too, when writers race.
        ...(op.pick % 2 === 0 ? { read: before } : {}),
      };
    }
    case 'update': {
      const target = pickIntent(model, op.pick);
      const status = op.status === 'current' ? target.status : op.status;
      const patch = resolvePatch(op.patch, now, target);
      const before = asIntent(target);
      return {
        op: 'update',
        writer,
        now,
        id: target.id,
        status,
        patch,
        postings: postingsFor(before, afterWrite(before, before.status, patch, now), positionOf),
      };
    }
    case 'claim':
      return { op: 'claim', writer, now, owner: op.owner, limit: op.limit, leaseMs: op.leaseMs };
    case 'release': {
      const holder = op.owner === 'holder';
      const target = pickIntent(model, op.pick, holder ? (m) => m.leaseOwner !== null : undefined);
      const owner = holder ? (target.leaseOwner ?? OWNERS[0]) : op.owner;
      return { op: 'release', writer, now, id: target.id, owner };
    }
  }
}

function schedules(patch: IntentPatch): boolean {
  return patch.nextCheckAt !== undefined && patch.nextCheckAt !== null;
}

function applyPatch(m: Modelled, patch: IntentPatch, terminal: boolean): void {
  if (patch.meta !== undefined) m.meta = structuredClone(patch.meta);
  if (patch.nextCheckAt !== undefined) m.nextCheckAt = patch.nextCheckAt;
  if (patch.checks !== undefined) m.checks = patch.checks;
  if (patch.error !== undefined) m.error = patch.error;
  if (terminal) {
    m.nextCheckAt = null;
    m.leaseOwner = null;
    m.leaseUntil = null;
  }
}

/** Is any of a write's postings already journaled? Then the write is refused whole (null). */
function journaled(model: Model, id: string, postings: readonly Posting[]): boolean {
  const tags = new Set((model.journal[id] ?? []).map((e) => e.id));
  return postings.some((p) => tags.has(`${id}:${p.tag}`));
}

/**
 * Journals a write the model applies. `before` is the intent as the write found it: postings
 * that are not the ones journal.ts computes from it were computed from another state (a write
 * fired together with this one, on the same intent, went first).
 */
function post(model: Model, m: Modelled, before: Intent | null, call: Call): void {
  if (call.op !== 'create' && call.op !== 'transition' && call.op !== 'update') return;
  const fresh = postingsFor(before, asIntent(m), positionOf);
  if (!isDeepStrictEqual(fresh, call.postings) && !model.stale.includes(m.id)) {
    model.stale.push(m.id);
  }
  const entries = model.journal[m.id] ?? [];
  model.journal[m.id] = entries;
  for (const p of call.postings) {
    entries.push({
      ...p,
      id: `${m.id}:${p.tag}`,
      intentId: m.id,
      playerId: m.playerId,
      matchId: m.groupId,
      at: call.now,
    });
  }
}

/** What `call` must answer, applied to `model` (which it changes): the specification. */
export function expected(model: Model, call: Call): Answer {
  const { now } = call;
  const find = (id: string) => model.intents.find((m) => m.id === id);
  switch (call.op) {
    case 'create': {
      if (find(call.id)) return { error: 'DuplicateIntentError' };
      const { funds, settled } = call.guards;
      if (funds && tabOf(model, call.intent.playerId) < BigInt(call.intent.amount)) {
        return { error: 'InsufficientFundsError' };
      }
      const m: Modelled = {
        id: call.id,
        status: 'creating',
        createdAt: now,
        updatedAt: now,
        nextCheckAt: call.nextCheckAt,
        checks: 0,
        error: null,
        leaseOwner: null,
        leaseUntil: null,
        history: [{ at: now, from: null, to: 'creating' }],
        ...structuredClone(call.intent),
      };
      if (settled) {
        // Ended at its create, in the same step: never due, with its postings as created.
        m.status = 'completed';
        m.nextCheckAt = null;
        m.history.push({ at: now, from: 'creating', to: 'completed', note: SETTLED_NOTE });
      }
      model.intents.push(m);
      post(model, m, null, call);
      return { intent: structuredClone(m) };
    }
    case 'transition': {
      if (!call.from.every((s) => canMove(s, call.to))) return { error: 'IllegalTransitionError' };
      if (isTerminal(call.to) && schedules(call.patch)) return { error: 'InvalidIntentError' };
      const m = find(call.id);
      if (!m || !call.from.includes(m.status)) return { intent: null };
      if (journaled(model, m.id, call.postings)) return { intent: null };
      const before = asIntent(m);
      m.history.push({ at: now, from: m.status, to: call.to, note: call.note });
      m.status = call.to;
      m.updatedAt = now;
      applyPatch(m, call.patch, isTerminal(call.to));
      post(model, m, before, call);
      return { intent: structuredClone(m) };
    }
    case 'update': {
      if (isTerminal(call.status) && schedules(call.patch)) return { error: 'InvalidIntentError' };
      const m = find(call.id);
      if (!m || m.status !== call.status) return { intent: null };
      if (journaled(model, m.id, call.postings)) return { intent: null };
      const before = asIntent(m);
      m.updatedAt = now;
      applyPatch(m, call.patch, isTerminal(call.status));
      post(model, m, before, call);
      return { intent: structuredClone(m) };
    }
    case 'claim': {
      const due = model.intents
        .map((m, seq) => ({ m, seq }))
        .filter(
          ({ m }) =>
            OPEN_STATUSES.includes(m.status) &&
            m.nextCheckAt !== null &&
            m.nextCheckAt <= now &&
            !leaseRuns(m, now),
        )
        .sort(
          (a, b) =>
            (a.m.nextCheckAt ?? 0) - (b.m.nextCheckAt ?? 0) ||
            a.m.createdAt - b.m.createdAt ||
            a.seq - b.seq,
        )
        .slice(0, call.limit);
      for (const { m } of due) {
        m.leaseOwner = call.owner;
        m.leaseUntil = now + call.leaseMs;
      }
      return { intents: due.map(({ m }) => structuredClone(m)) };
    }
    case 'release': {
      const m = find(call.id);
      if (m && m.leaseOwner === call.owner) {
        m.leaseOwner = null;
        m.leaseUntil = null;
      }
      return { done: true };
    }
  }
}

/** Runs `call` on its writer; a refusal the model can predict becomes an answer. */
export async function perform(writers: Writers, call: Call): Promise<Answer> {
  const store = writers.writers[call.writer] as LedgerStore;
  const { now } = call;
  try {
    switch (call.op) {
      case 'create': {
        const intent = await store.create(
          newIntent({ id: call.id, nextCheckAt: call.nextCheckAt, ...call.intent }),
          now,
          call.guards,
          call.postings,
        );
        return { intent: project(intent) };
      }
      case 'transition': {
        const moved = await store.transition(call.id, call.from, call.to, {
          patch: call.patch,
          note: call.note,
          now,
          postings: call.postings,
          ...(call.read === undefined ? {} : { read: call.read }),
        });
        return { intent: moved && project(moved) };
      }
      case 'update': {
        const updated = await store.update(call.id, call.status, call.patch, now, call.postings);
        return { intent: updated && project(updated) };
      }
      case 'claim': {
        const claimed = await store.claimDue(now, call.limit, call.owner, call.leaseMs);
        return { intents: claimed.map(project) };
      }
      case 'release':
        await store.release(call.id, call.owner);
        return { done: true };
    }
  } catch (err) {
    const refusal = REFUSALS.find((type) => err instanceof type);
    if (refusal) return { error: refusal.name };
    throw err;
  }
}

/** A write's postings, short: `[created house:rewards->inflight 21000 msats]`. */
function describePostings(postings: readonly Posting[]): string {
  const each = postings.map((p) => `${p.tag} ${p.debit}->${p.credit} ${p.amount} ${p.unit}`);
  return each.length === 0 ? '' : ` [${each.join(', ')}]`;
}

export function describeCall(call: Call): string {
  const w = `w${call.writer}`;
  switch (call.op) {
    case 'create':
      return `${w}.create(${call.id}, ${call.intent.kind} ${call.intent.amount} of ${call.intent.playerId}${call.intent.groupId ? ` in ${call.intent.groupId}` : ''}, ${JSON.stringify(call.intent.meta)}, next ${call.nextCheckAt === null ? 'none' : t(call.nextCheckAt)}, ${t(call.now)})${describePostings(call.postings)}`;
    case 'transition':
      return `${w}.transition(${call.id}, [${call.from}] -> ${call.to}, ${JSON.stringify(call.patch)}, ${t(call.now)}${call.read ? `, read in ${call.read.status}` : ''})${describePostings(call.postings)}`;
    case 'update':
      return `${w}.update(${call.id}, ${call.status}, ${JSON.stringify(call.patch)}, ${t(call.now)})${describePostings(call.postings)}`;
    case 'claim':
      return `${w}.claimDue(${t(call.now)}, ${call.limit}, ${call.owner}, ${call.leaseMs}ms)`;
    case 'release':
      return `${w}.release(${call.id}, ${call.owner})`;
  }
}

export function describeOp(op: Op): string {
  const w = `w${op.writer}`;
  const patch = (p: PatchSpec) => JSON.stringify(p);
  switch (op.op) {
    case 'create':
      return `${w}.create(${op.reuse === null ? 'new' : `#${op.reuse}`}, due ${op.due ?? 'none'}, profile ${op.profile % PROFILES.length}, player ${op.player % PLAYERS.length}, amount ${op.all ? 'all' : op.amount % AMOUNTS.length})`;
    case 'transition':
      return `${w}.transition(#${op.pick}${op.aim ? '*' : ''}, [${op.from}] -> ${op.to}, ${patch(op.patch)})`;
    case 'update':
      return `${w}.update(#${op.pick}, ${op.status}, ${patch(op.patch)})`;
    case 'claim':
      return `${w}.claimDue(${op.limit}, ${op.owner}, ${op.leaseMs}ms)`;
    case 'release':
      return `${w}.release(#${op.pick}, ${op.owner})`;
  }
}

export function needsIntent(op: Op): boolean {
  return op.op === 'create' ? op.reuse !== null : op.op !== 'claim';
}

/** What no store may ever hold, whatever the model says: checked on every read. */
export function assertSound(intent: Intent): void {
  const where = `intent ${intent.id}`;
  const [first, ...moves] = intent.history;
  expect(first, `${where}: history starts at creating`).to.deep.include({
    from: null,
    to: 'creating',
  });
  let status: IntentStatus = 'creating';
  for (const [k, entry] of moves.entries()) {
    expect(entry.from, `${where}: each move starts where the last ended`).to.equal(status);
    // A settled record (a tab's credit) is completed by its create, at once, with its note.
    const settled = k === 0 && entry.note === SETTLED_NOTE && entry.at === first?.at;
    expect(
      settled || canMove(status, entry.to),
      `${where}: ${status} -> ${entry.to} is not in TRANSITIONS`,
    ).to.equal(true);
    status = entry.to;
  }
  expect(intent.status, `${where}: status is where its history ends`).to.equal(status);
  if (isTerminal(intent.status)) {
    expect(
      [intent.nextCheckAt, intent.leaseOwner, intent.leaseUntil],
      `${where}: a ${intent.status} intent is neither scheduled nor leased`,
    ).to.deep.equal([null, null, null]);
  }
  expect(intent.leaseOwner === null, `${where}: lease owner and end come together`).to.equal(
    intent.leaseUntil === null,
  );
}

/** Every intent of the model, as `reader` sees it. */
export async function readAll(writers: Writers, model: Model, reader: number): Promise<Modelled[]> {
  const store = writers.writers[reader] as LedgerStore;
  const stored = await Promise.all(model.intents.map((m) => store.get(m.id)));
  return stored.map((intent, i) => {
    expect(intent, `${model.intents[i]?.id} read by w${reader}`).to.not.equal(null);
    assertSound(intent as Intent);
    return project(intent as Intent);
  });
}

/** The store, read through `reader`, holds what the model holds, its journal included (readJournal). */
export async function verify(
  writers: Writers,
  model: Model,
  reader: number,
  perIntent = false,
): Promise<void> {
  const stored = await readAll(writers, model, reader);
  expect(stored, `every intent as w${reader} reads it at ${t(model.now)}`).to.deep.equal(
    model.intents,
  );
  const journal = await readJournal(writers, model, reader, perIntent);
  expect(journal, `every intent's entries as w${reader} reads them`).to.deep.equal(
    modelJournal(model),
  );
  await checkJournal(writers, model, reader);
}

/** The explicit form of "never two owners": no claim returns an intent whose lease runs. */
export function assertNoLeaseTaken(before: Model, call: Call, answer: Answer): void {
  if (call.op !== 'claim' || !('intents' in answer)) return;
  for (const got of answer.intents) {
    const held = before.intents.find((m) => m.id === got.id);
    if (held && leaseRuns(held, call.now)) {
      expect.fail(
        `${describeCall(call)} leased ${got.id} to ${call.owner} while ${held.leaseOwner} holds it until ${t(held.leaseUntil ?? 0)}`,
      );
    }
  }
}

/** Every unit's sum over `rows`, as bigint. */
function sums(rows: readonly AccountBalance[], key: (row: AccountBalance) => string) {
  const out = new Map<string, bigint>();
  for (const row of rows) out.set(key(row), (out.get(key(row)) ?? 0n) + BigInt(row.balance));
  return out;
}

/** Balances as `account unit` -> amount, zeros left out (a store answers those or not). */
function nonZero(map: Map<string, bigint>): Record<string, string> {
  return Object.fromEntries(
    [...map]
      .filter(([, v]) => v !== 0n)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, String(v)]),
  );
}

/**
 * Each intent's journal entries as `reader` sees them (seq checked, then left out): the whole
 * journal paged through (every sequence has a database of its own), and with `perIntent` each
 * intent's own page too, which must hold the same entries.
 */
export async function readJournal(
  writers: Writers,
  model: Model,
  reader: number,
  perIntent = false,
): Promise<Record<string, ModelEntry[]>> {
  const store = writers.writers[reader] as LedgerStore;
  const journal: Record<string, ModelEntry[]> = {};
  const last = new Map<string, number>();
  let after: string | undefined;
  do {
    const page = await store.journal({ after, limit: 1000 });
    for (const { seq, ...entry } of page.entries) {
      const before = last.get(entry.intentId);
      if (before !== undefined) expect(seq, `${entry.intentId}: seq increases`).to.be.above(before);
      last.set(entry.intentId, seq);
      journal[entry.intentId] ??= [];
      journal[entry.intentId]?.push(entry);
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  if (perIntent) {
    const pages = await Promise.all(model.intents.map((m) => store.journal({ intentId: m.id })));
    for (const [i, page] of pages.entries()) {
      const m = model.intents[i] as Modelled;
      expect(page.next, `${m.id}: its entries fit one page`).to.equal(null);
      const entries = page.entries.map(({ seq: _, ...rest }) => rest);
      expect(entries, `${m.id}'s own page`).to.deep.equal(journal[m.id] ?? []);
    }
  }
  return journal;
}

/** The model's journal, without intents that have no entries (as readJournal leaves it). */
export function modelJournal(model: Model): Record<string, ModelEntry[]> {
  return Object.fromEntries(Object.entries(model.journal).filter(([, e]) => e.length > 0));
}

/**
 * The journal's promises, read through `reader` (readJournal has matched the entries to the
 * model's): each intent's entries chain its positions (from its source, each from where the
 * last left it, to where it sits now) unless it is stale; each account's balance is its
 * postings' sum; every unit's class balances sum to zero, and move by the model's postings.
 */
export async function checkJournal(writers: Writers, model: Model, reader: number): Promise<void> {
  const store = writers.writers[reader] as LedgerStore;
  for (const m of model.intents) {
    if (model.stale.includes(m.id)) continue;
    const position = positionOf(asIntent(m));
    let at = position.source;
    for (const entry of model.journal[m.id] ?? []) {
      expect(entry.debit, `${entry.id} leaves where ${m.id}'s money was`).to.equal(at);
      at = entry.credit;
    }
    if (position.amount !== '0') {
      expect(at, `${m.id}'s entries end where its money is`).to.equal(position.account);
    }
  }
  const moved = new Map<string, bigint>();
  const byClass = new Map<string, bigint>();
  for (const entry of Object.values(model.journal).flat()) {
    const amount = BigInt(entry.amount);
    for (const [account, delta] of [
      [entry.credit, amount],
      [entry.debit, -amount],
    ] as const) {
      const key = `${account} ${entry.unit}`;
      moved.set(key, (moved.get(key) ?? 0n) + delta);
      const cls = `${accountClass(account)} ${entry.unit}`;
      byClass.set(cls, (byClass.get(cls) ?? 0n) + delta);
    }
  }
  const base = sums(model.baseline.accounts, (r) => `${r.account} ${r.unit}`);
  const names = [...new Set([...moved.keys()].map((k) => k.split(' ')[0] as string))];
  const read = await store.balances([...new Set([...names, ...SHARED_ACCOUNTS])]);
  const now = sums(read, (r) => `${r.account} ${r.unit}`);
  const delta = new Map([...now].map(([k, v]) => [k, v - (base.get(k) ?? 0n)]));
  expect(nonZero(delta), 'every account moved by the sum of its postings').to.deep.equal(
    nonZero(moved),
  );
  const classes = await store.balances();
  for (const [unit, sum] of sums(classes, (r) => r.unit)) {
    expect(sum, `the class balances of ${unit} sum to zero`).to.equal(0n);
  }
  const baseClasses = sums(model.baseline.classes, (r) => `${r.account} ${r.unit}`);
  const classDelta = new Map(
    [...sums(classes, (r) => `${r.account} ${r.unit}`)].map(([k, v]) => [
      k,
      v - (baseClasses.get(k) ?? 0n),
    ]),
  );
  expect(nonZero(classDelta), 'every class moved by the sum of its postings').to.deep.equal(
    nonZero(byClass),
  );
}
