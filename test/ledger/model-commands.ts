/**
 * The fast-check side of test/ledger/model.test.ts: commands (one call from one writer; calls
 * from several writers at once; the clock moving on), the arbitraries that generate them, and
 * `checkModel`, which runs random sequences of them on fresh writers against ./model.ts.
 * Concurrent calls pass when some order of them, applied to the model, gives every answer and
 * the state read back afterwards, journal included (at most 3! orders, one read of every intent
 * and of its entries each).
 */

import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import fc from 'fast-check';
import {
  canMove,
  INTENT_STATUSES,
  type IntentStatus,
  OPEN_STATUSES,
  TRANSITIONS,
} from '../../src/ledger/index.js';
import {
  AMOUNTS,
  type Answer,
  assertNoLeaseTaken,
  type Call,
  checkJournal,
  describeCall,
  describeOp,
  expected,
  MAX_INTENTS,
  type MetaSpec,
  type Model,
  modelJournal,
  needsIntent,
  type Op,
  OWNERS,
  type PatchSpec,
  PLAYERS,
  PROFILES,
  perform,
  readAll,
  readJournal,
  resolve,
  SHARED_ACCOUNTS,
  T0,
  verify,
  WITHDRAWAL,
  WRITERS,
  type Writers,
} from './model.js';

type Cmd = fc.AsyncCommand<Model, Writers>;

/** One operation from one writer; its answer must be exactly the model's. */
class Single implements Cmd {
  constructor(readonly op: Op) {}

  check(model: Readonly<Model>): boolean {
    if (this.op.op === 'create' && this.op.reuse === null) {
      return model.intents.length < MAX_INTENTS;
    }
    return !needsIntent(this.op) || model.intents.length > 0;
  }

  async run(model: Model, writers: Writers): Promise<void> {
    const call = resolve(model, this.op);
    const before = structuredClone(model);
    const want = expected(model, call);
    const got = await perform(writers, call);
    assertNoLeaseTaken(before, call, got);
    expect(got, describeCall(call)).to.deep.equal(want);
    await verify(writers, model, (call.writer + 1) % WRITERS);
  }

  toString(): string {
    return describeOp(this.op);
  }
}

/**
 * Operations fired together (Promise.all), from several writers. `sameMove`: they all make one
 * move, so exactly one may win. `sameId`: they all create one new id, so exactly one may succeed
 * (none, when the model refuses it: a withdrawal past its tab). `sameTab`: they all withdraw a
 * player's whole tab, so at most one may succeed (exactly one when the tab holds money).
 */
class Together implements Cmd {
  constructor(
    readonly ops: Op[],
    readonly kind: 'mixed' | 'sameMove' | 'sameId' | 'sameTab' = 'mixed',
  ) {}

  check(model: Readonly<Model>): boolean {
    const creates = this.ops.filter((op) => op.op === 'create').length;
    const adds = this.kind === 'sameId' ? 0 : this.kind === 'sameTab' ? 1 : creates;
    if (model.intents.length + adds > MAX_INTENTS) return false;
    return !this.ops.some(needsIntent) || model.intents.length > 0;
  }

  async run(model: Model, writers: Writers): Promise<void> {
    const sharedId = this.kind === 'sameId' ? `i${model.ids++}` : undefined;
    const calls = this.ops.map((op) => resolve(model, op, sharedId));
    const answers = await Promise.all(calls.map((call) => perform(writers, call)));
    const told = calls.map((call, i) => `${describeCall(call)} => ${JSON.stringify(answers[i])}`);
    const what = `together:\n  ${told.join('\n  ')}\n`;

    // The plain statements first, so that a failure says which promise broke.
    // (A release in the same batch may free a lease for a second claim.)
    const released = new Set(calls.flatMap((call) => (call.op === 'release' ? [call.id] : [])));
    const claimed = answers
      .flatMap((a) => ('intents' in a ? a.intents.map((m) => m.id) : []))
      .filter((id) => !released.has(id));
    expect(new Set(claimed).size, `${what}an intent was leased to two claimers`).to.equal(
      claimed.length,
    );
    if (this.kind === 'sameMove') {
      const move = calls[0] as Extract<Call, { op: 'transition' }>;
      const status = model.intents.find((m) => m.id === move.id)?.status;
      const wins = answers.filter((a) => 'intent' in a && a.intent !== null).length;
      const open = status !== undefined && move.from.includes(status);
      expect(wins, `${what}winners of one compare-and-set`).to.equal(open ? 1 : 0);
    }
    if (this.kind === 'sameId' || this.kind === 'sameTab') {
      const made = answers.filter((a) => 'intent' in a).length;
      const alone = expected(structuredClone(model), calls[0] as Call);
      const may = 'intent' in alone ? 1 : 0;
      expect(made, `${what}creates that succeeded (of one id, or of one whole tab)`).to.equal(may);
    }

    // Then the whole claim: some order of the calls explains every answer and the store.
    const reader = ((calls[0]?.writer ?? 0) + 1) % WRITERS;
    const orders = permutations(calls.length);
    for (const order of orders) {
      const candidate = structuredClone(model);
      const wants: Answer[] = [];
      for (const i of order) wants[i] = expected(candidate, calls[i] as Call);
      if (!isDeepStrictEqual(wants, answers)) continue;
      const stored = await readAll(writers, candidate, reader);
      if (!isDeepStrictEqual(stored, candidate.intents)) continue;
      const journal = await readJournal(writers, candidate, reader);
      if (!isDeepStrictEqual(journal, modelJournal(candidate))) continue;
      Object.assign(model, candidate);
      await checkJournal(writers, model, reader);
      return;
    }
    const stored = await readAll(writers, model, reader);
    const journal = await readJournal(writers, model, reader);
    expect.fail(
      `${what}no order of these calls gives these answers and this state:\n  ${stored.map((m) => JSON.stringify(m)).join('\n  ')}\n  journal ${JSON.stringify(journal)}\nthe model before:\n  ${model.intents.map((m) => JSON.stringify(m)).join('\n  ')}\n  journal ${JSON.stringify(modelJournal(model))}`,
    );
  }

  toString(): string {
    const label = this.kind === 'mixed' ? 'together' : `together[${this.kind}]`;
    return `${label}(${this.ops.map(describeOp).join(' | ')})`;
  }
}

function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((rest) =>
    Array.from({ length: n }, (_, i) => [...rest.slice(0, i), n - 1, ...rest.slice(i)]),
  );
}

/** Moves the logical clock forward by `ms`, or to just around the end of someone's lease. */
class Advance implements Cmd {
  constructor(
    readonly ms: number,
    readonly toLease?: { pick: number; offset: number },
  ) {}

  check(model: Readonly<Model>): boolean {
    return this.toLease === undefined || model.intents.some((m) => m.leaseUntil !== null);
  }

  async run(model: Model): Promise<void> {
    if (this.toLease === undefined) {
      model.now += this.ms;
      return;
    }
    const leased = model.intents.filter((m) => m.leaseUntil !== null);
    const target = leased[this.toLease.pick % leased.length]?.leaseUntil ?? model.now;
    model.now = Math.max(model.now, target + this.toLease.offset);
  }

  toString(): string {
    return this.toLease === undefined
      ? `advance(${this.ms}ms)`
      : `advanceToLeaseEnd(#${this.toLease.pick}, ${this.toLease.offset >= 0 ? '+' : ''}${this.toLease.offset})`;
  }
}

// --- Arbitraries ----------------------------------------------------------------------------

const SOURCES = Object.fromEntries(
  INTENT_STATUSES.map((to) => [to, INTENT_STATUSES.filter((from) => canMove(from, to))]),
) as Record<IntentStatus, IntentStatus[]>;
const TARGETS = INTENT_STATUSES.filter((to) => SOURCES[to].length > 0);

const writer = fc.integer({ min: 0, max: WRITERS - 1 });
const pick = fc.nat({ max: 63 });
/** Due times around now: some already due, some later, a few exactly now. */
const due = fc.oneof(fc.integer({ min: -2000, max: 2000 }), fc.constant(0));
const owner = fc.constantFrom(...OWNERS);

const patch: fc.Arbitrary<PatchSpec> = fc.record({
  nextCheckAt: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 6 },
    { arbitrary: fc.constant(null), weight: 1 },
    { arbitrary: due, weight: 2 },
  ),
  checks: fc.option(fc.nat({ max: 9 }), { nil: undefined }),
  error: fc.option(fc.constantFrom('timeout', 'HTTP 502', null), { nil: undefined }),
  meta: fc.option(fc.constantFrom<MetaSpec>('shown', 'late', 'settle', 'none'), {
    nil: undefined,
  }),
});

/** What the new intent is (PROFILES), whose (PLAYERS), and how much (AMOUNTS). */
const profile = fc.nat({ max: PROFILES.length - 1 });
const player = fc.nat({ max: PLAYERS.length - 1 });
const amount = fc.nat({ max: AMOUNTS.length - 1 });

const create = fc.record({
  op: fc.constant('create' as const),
  writer,
  due: fc.option(due, { nil: null, freq: 6 }),
  reuse: fc.oneof({ arbitrary: fc.constant(null), weight: 6 }, { arbitrary: pick, weight: 1 }),
  profile,
  player,
  amount,
});

const legalTransition = fc.constantFrom(...TARGETS).chain((to) =>
  fc.record({
    op: fc.constant('transition' as const),
    writer,
    pick,
    aim: fc.boolean(),
    from: fc.subarray(SOURCES[to], { minLength: 1 }),
    to: fc.constant(to),
    patch,
  }),
);

const illegalTransition = fc
  .record({
    op: fc.constant('transition' as const),
    writer,
    pick,
    aim: fc.constant(true),
    from: fc.subarray([...INTENT_STATUSES], { minLength: 1 }),
    to: fc.constantFrom(...INTENT_STATUSES),
    patch: fc.constant({}),
  })
  .filter((op) => !op.from.every((s) => canMove(s, op.to)));

const update = fc.record({
  op: fc.constant('update' as const),
  writer,
  pick,
  status: fc.oneof(
    { arbitrary: fc.constant('current' as const), weight: 3 },
    { arbitrary: fc.constantFrom(...INTENT_STATUSES), weight: 1 },
  ),
  patch,
});

const claim = fc.record({
  op: fc.constant('claim' as const),
  writer,
  owner,
  limit: fc.integer({ min: 1, max: 3 }),
  leaseMs: fc.integer({ min: 1, max: 3000 }),
});

const release = fc.record({
  op: fc.constant('release' as const),
  writer,
  pick,
  owner: fc.oneof(
    { arbitrary: fc.constant('holder' as const), weight: 3 },
    { arbitrary: owner, weight: 1 },
  ),
});

const anyOp: fc.Arbitrary<Op> = fc.oneof(create, legalTransition, update, claim, release);

/** Every writer makes the same move on the same intent at once. */
const sameMove = fc
  .record({
    pick,
    from: fc.constantFrom(...OPEN_STATUSES),
    choice: fc.nat(),
    patch: patch.map((p) => ({ ...p, nextCheckAt: undefined })),
  })
  .map(({ pick, from, choice, patch }) => {
    const to = TRANSITIONS[from][choice % TRANSITIONS[from].length] as IntentStatus;
    const ops: Op[] = Array.from({ length: WRITERS }, (_, w) => ({
      op: 'transition',
      writer: w,
      pick,
      aim: true,
      from: [from],
      to,
      patch,
    }));
    return new Together(ops, 'sameMove');
  });

/** Every writer creates one new id at once (the same intent, with the same postings). */
const sameId = fc
  .tuple(fc.option(due, { nil: null, freq: 6 }), profile, player, amount)
  .map(([d, profile, player, amount]) => {
    const ops: Op[] = Array.from({ length: WRITERS }, (_, w) => ({
      op: 'create',
      writer: w,
      due: d,
      reuse: null,
      profile,
      player,
      amount,
    }));
    return new Together(ops, 'sameId');
  });

/** Every writer withdraws one player's whole tab at once, each as a new intent. */
const sameTab = fc.tuple(fc.option(due, { nil: null, freq: 6 }), player).map(([d, player]) => {
  const ops: Op[] = Array.from({ length: WRITERS }, (_, w) => ({
    op: 'create',
    writer: w,
    due: d,
    reuse: null,
    profile: WITHDRAWAL,
    player,
    amount: 0,
    all: true,
  }));
  return new Together(ops, 'sameTab');
});

/** Every writer claims at once, each for its own owner. */
const sameClaim = fc
  .tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3000 }))
  .map(([limit, leaseMs]) => {
    const ops: Op[] = OWNERS.slice(0, WRITERS).map((o, w) => ({
      op: 'claim',
      writer: w,
      owner: o,
      limit,
      leaseMs,
    }));
    return new Together(ops);
  });

/**
 * Two or three operations of any kind from distinct writers at once. At most one of them makes
 * a new intent: the order of two new intents is hidden state (they tie on createdAt and differ
 * only in insertion order) that no answer of the batch reveals, but later claims depend on.
 */
const mixed = fc
  .tuple(anyOp, anyOp, fc.option(anyOp, { nil: undefined }))
  .filter((ops) => ops.filter((op) => op?.op === 'create' && op.reuse === null).length <= 1)
  .map(([a, b, c]) => {
    const ops = (c ? [a, b, c] : [a, b]).map((op, w) => ({ ...op, writer: w % WRITERS }));
    return new Together(ops);
  });

const advance = fc.oneof(
  fc.integer({ min: 0, max: 2000 }).map((ms) => new Advance(ms)),
  fc
    .record({ pick, offset: fc.integer({ min: -1, max: 1 }) })
    .map((toLease) => new Advance(0, toLease)),
);

export const COMMANDS: fc.Arbitrary<Cmd> = fc.oneof(
  { arbitrary: create.map((op) => new Single(op)), weight: 3 },
  { arbitrary: legalTransition.map((op) => new Single(op)), weight: 5 },
  { arbitrary: illegalTransition.map((op) => new Single(op)), weight: 1 },
  { arbitrary: update.map((op) => new Single(op)), weight: 3 },
  { arbitrary: claim.map((op) => new Single(op)), weight: 4 },
  { arbitrary: release.map((op) => new Single(op)), weight: 2 },
  { arbitrary: advance, weight: 4 },
  { arbitrary: sameMove, weight: 2 },
  { arbitrary: sameId, weight: 1 },
  { arbitrary: sameTab, weight: 1 },
  { arbitrary: sameClaim, weight: 2 },
  { arbitrary: mixed, weight: 3 },
);

export interface ModelRunOptions {
  numRuns: number;
  maxCommands: number;
  seed?: number | undefined;
  path?: string | undefined;
  /** The `replayPath` a failure printed, with its seed and path. */
  replayPath?: string | undefined;
}

/** Sequences run by this process: names each one's ids, players and match (Model.run). */
let sequences = 0;

/**
 * Runs `numRuns` random command sequences, each on fresh writers from `open`, and at the end
 * of each reads every intent through every writer.
 */
export async function checkModel(
  open: () => Promise<Writers>,
  options: ModelRunOptions,
): Promise<void> {
  const property = fc.asyncProperty(
    fc.commands([COMMANDS], {
      maxCommands: options.maxCommands,
      size: 'max',
      replayPath: options.replayPath,
    }),
    async (commands) => {
      const writers = await open();
      try {
        const first = writers.writers[0] as Writers['writers'][number];
        const model: Model = {
          now: T0,
          intents: [],
          ids: 0,
          run: `s${sequences++}-`,
          journal: {},
          stale: [],
          baseline: {
            accounts: await first.balances(SHARED_ACCOUNTS),
            classes: await first.balances(),
          },
        };
        await fc.asyncModelRun(() => ({ model, real: writers }), commands);
        for (let reader = 0; reader < WRITERS; reader++) await verify(writers, model, reader, true);
      } finally {
        await writers.close();
      }
    },
  );
  await fc.assert(property, {
    // The error a command threw, in the report mocha prints (not only as its `cause`).
    includeErrorInReport: true,
    numRuns: options.numRuns,
    seed: options.seed,
    path: options.path,
  });
}
