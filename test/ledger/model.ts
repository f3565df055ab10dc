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
 *   its history is a chain of moves that TRANSITIONS allows, one entry per applied move.
 *
 * Time is the model's logical clock, passed as `now` to every call, so leases expire exactly
 * when the model says. Costs one store call per operation plus one read per intent per command.
 */

import { expect } from 'chai';
import {
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
} from '../../src/ledger/index.js';
import { newIntent } from './contract.js';

/** The model clock's start; times in messages are printed relative to it (t+1200). */
export const T0 = 1_700_000_000_000;
/** Store instances per run, all on one database. */
export const WRITERS = 3;
/** Few intents and few owners, so that writers and claimers keep colliding. */
export const MAX_INTENTS = 8;
export const OWNERS = ['alpha', 'beta', 'gamma'] as const;

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
}

export interface Model {
  now: number;
  /** In creation order, which is the stores' insertion order (their last tie-breaker). */
  intents: Modelled[];
  /** Ids handed out so far, so that every fresh id is new. */
  ids: number;
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
}

/** An operation as generated: intents are named by `pick` (modulo how many exist). */
export type Op =
  | { op: 'create'; writer: number; due: number | null; reuse: number | null }
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
  | { op: 'create'; writer: number; now: number; id: string; nextCheckAt: number | null }
  | {
      op: 'transition';
      writer: number;
      now: number;
      id: string;
      from: IntentStatus[];
      to: IntentStatus;
      patch: IntentPatch;
      note: string;
    }
  | {
      op: 'update';
      writer: number;
      now: number;
      id: string;
      status: IntentStatus;
      patch: IntentPatch;
    }
  | { op: 'claim'; writer: number; now: number; owner: string; limit: number; leaseMs: number }
  | { op: 'release'; writer: number; now: number; id: string; owner: string };

/** What a call answered, reduced to what the model predicts. */
export type Answer =
  | { intent: Modelled | null }
  | { intents: Modelled[] }
  | { done: true }
  | { error: string };

const REFUSALS = [DuplicateIntentError, IllegalTransitionError, InvalidIntentError] as const;

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

function resolvePatch(spec: PatchSpec, now: number): IntentPatch {
  const patch: IntentPatch = {};
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
        op.reuse !== null ? pickIntent(model, op.reuse).id : (sharedId ?? `i${model.ids++}`);
      return { op: 'create', writer, now, id, nextCheckAt: op.due === null ? null : now + op.due };
    }
    case 'transition': {
      const target = pickIntent(
        model,
        op.pick,
        op.aim ? (m) => op.from.includes(m.status) : undefined,
      );
      const patch = resolvePatch(op.patch, now);
      return {
        op: 'transition',
        writer,
        now,
        id: target.id,
        from: op.from,
        to: op.to,
        patch,
        note: `w${writer}`,
      };
    }
    case 'update': {
      const target = pickIntent(model, op.pick);
      const status = op.status === 'current' ? target.status : op.status;
      return {
        op: 'update',
        writer,
        now,
        id: target.id,
        status,
        patch: resolvePatch(op.patch, now),
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
  if (patch.nextCheckAt !== undefined) m.nextCheckAt = patch.nextCheckAt;
  if (patch.checks !== undefined) m.checks = patch.checks;
  if (patch.error !== undefined) m.error = patch.error;
  if (terminal) {
    m.nextCheckAt = null;
    m.leaseOwner = null;
    m.leaseUntil = null;
  }
}

/** What `call` must answer, applied to `model` (which it changes): the specification. */
export function expected(model: Model, call: Call): Answer {
  const { now } = call;
  const find = (id: string) => model.intents.find((m) => m.id === id);
  switch (call.op) {
    case 'create': {
      if (find(call.id)) return { error: 'DuplicateIntentError' };
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
      };
      model.intents.push(m);
      return { intent: structuredClone(m) };
    }
    case 'transition': {
      if (!call.from.every((s) => canMove(s, call.to))) return { error: 'IllegalTransitionError' };
      if (isTerminal(call.to) && schedules(call.patch)) return { error: 'InvalidIntentError' };
      const m = find(call.id);
      if (!m || !call.from.includes(m.status)) return { intent: null };
      m.history.push({ at: now, from: m.status, to: call.to, note: call.note });
      m.status = call.to;
      m.updatedAt = now;
      applyPatch(m, call.patch, isTerminal(call.to));
      return { intent: structuredClone(m) };
    }
    case 'update': {
      if (isTerminal(call.status) && schedules(call.patch)) return { error: 'InvalidIntentError' };
      const m = find(call.id);
      if (!m || m.status !== call.status) return { intent: null };
      m.updatedAt = now;
      applyPatch(m, call.patch, isTerminal(call.status));
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
          newIntent({ id: call.id, nextCheckAt: call.nextCheckAt }),
          now,
        );
        return { intent: project(intent) };
      }
      case 'transition': {
        const moved = await store.transition(call.id, call.from, call.to, {
          patch: call.patch,
          note: call.note,
          now,
        });
        return { intent: moved && project(moved) };
      }
      case 'update': {
        const updated = await store.update(call.id, call.status, call.patch, now);
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

export function describeCall(call: Call): string {
  const w = `w${call.writer}`;
  switch (call.op) {
    case 'create':
      return `${w}.create(${call.id}, next ${call.nextCheckAt === null ? 'none' : t(call.nextCheckAt)}, ${t(call.now)})`;
    case 'transition':
      return `${w}.transition(${call.id}, [${call.from}] -> ${call.to}, ${JSON.stringify(call.patch)}, ${t(call.now)})`;
    case 'update':
      return `${w}.update(${call.id}, ${call.status}, ${JSON.stringify(call.patch)}, ${t(call.now)})`;
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
      return `${w}.create(${op.reuse === null ? 'new' : `#${op.reuse}`}, due ${op.due ?? 'none'})`;
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
  for (const entry of moves) {
    expect(entry.from, `${where}: each move starts where the last ended`).to.equal(status);
    expect(
      canMove(status, entry.to),
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

/** The store, read through `reader`, holds what the model holds. */
export async function verify(writers: Writers, model: Model, reader: number): Promise<void> {
  const stored = await readAll(writers, model, reader);
  expect(stored, `every intent as w${reader} reads it at ${t(model.now)}`).to.deep.equal(
    model.intents,
  );
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
