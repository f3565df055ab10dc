/** The LedgerStore contract, intents and journal: run on every store (contract.ts). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BudgetExceededError, LimitExceededError } from '../../../src/errors.js';
import {
  DuplicateIntentError,
  IllegalTransitionError,
  INTENT_STATUSES,
  type Intent,
  type IntentPatch,
  type IntentStatus,
  InvalidIntentError,
  isTerminal,
  LedgerClosedError,
  type LedgerStore,
  type NewIntent,
  OPEN_STATUSES,
  TERMINAL_STATUSES,
  TRANSITIONS,
} from '../../../src/ledger/index.js';
import {
  type AccountBalance,
  afterWrite,
  type JournalEntry,
  type JournalQuery,
  type Posting,
  postingsFor,
} from '../../../src/ledger/journal.js';
import { positionOf } from '../../../src/server/kinds/index.js';
import {
  ALL_PAIRS,
  asCreated,
  assertIncludes,
  eachStore,
  type LedgerFactory,
  newIntent,
  operatorLine,
  rejection,
  token,
  UUID_V7,
  walkTo,
} from './support.js';

/**
 * `everyParseCase` false: of the families of inputs the core's parse refuses before any driver
 * call (every refused move, amount, posting), one case each. For a second transport of a driver
 * whose parse, being the core's, every other store's run has checked case by case.
 */
export function describeIntentContract(factory: LedgerFactory, everyParseCase = true): void {
  const parseCases = <T>(cases: readonly T[]): readonly T[] =>
    everyParseCase ? cases : cases.slice(0, 1);
  describe('intents and journal', () => {
    let store: LedgerStore;
    eachStore(factory, (made) => {
      store = made;
    });

    const intentIn = (status: IntentStatus, overrides: Partial<NewIntent> = {}) =>
      walkTo(store, status, overrides);

    describe('create', () => {
      it('records a creating intent with every default filled in', async () => {
        const input = newIntent({ nextCheckAt: 5_000, meta: { slots: 0 } });
        const intent = await store.create(input, 1_000);
        assert.deepEqual(intent, {
          id: intent.id,
          kind: 'reward',
          status: 'creating',
          roomId: input.roomId,
          playerId: input.playerId,
          amount: '21000',
          unit: 'msats',
          description: 'Level 3 cleared',
          remoteId: null,
          code: null,
          uri: null,
          callbackToken: input.callbackToken,
          idempotencyKey: null,
          openKey: null,
          groupId: null,
          expiresAt: null,
          createdAt: 1_000,
          updatedAt: 1_000,
          nextCheckAt: 5_000,
          checks: 0,
          leaseOwner: null,
          leaseUntil: null,
          error: null,
          meta: { slots: 0 },
          history: [{ at: 1_000, from: null, to: 'creating' }],
        });
        assert.deepEqual(await store.get(intent.id), intent);
      });

      it('generates UUID v7 ids that sort in creation order', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) ids.push((await store.create(newIntent())).id);
        for (const id of ids) assert.match(id, UUID_V7);
        assert.deepEqual([...ids].sort(), ids);
        assert.equal(new Set(ids).size, ids.length);
      });

      it('keeps a given id, idempotency key, expiry and null room', async () => {
        const id = randomUUID();
        const intent = await store.create(
          newIntent({
            id,
            kind: 'spend',
            roomId: null,
            unit: 'USDZ',
            idempotencyKey: 'b3a1c2d4-0000-4000-8000-000000000000',
            expiresAt: 99_000,
            callbackToken: null,
          }),
        );
        assertIncludes(intent, {
          id,
          kind: 'spend',
          roomId: null,
          unit: 'USDZ',
          idempotencyKey: 'b3a1c2d4-0000-4000-8000-000000000000',
          expiresAt: 99_000,
          callbackToken: null,
        });
        assert.deepEqual(await store.get(id), intent);
      });

      it('keeps amounts beyond 2^53 exactly, as strings', async () => {
        const amount = '123456789012345678901';
        const intent = await store.create(newIntent({ amount }));
        assert.equal(intent.amount, amount);
        assert.equal((await store.get(intent.id))?.amount, amount);
      });

      it('rejects a duplicate id and keeps the first intent unchanged', async () => {
        const first = await store.create(newIntent());
        const err = await rejection(
          store.create(newIntent({ id: first.id, amount: '1' })),
          DuplicateIntentError,
        );
        assert.equal(err.code, 'LN_LEDGER_DUPLICATE');
        assert.equal(err.field, 'id');
        assert.deepEqual(await store.get(first.id), first);
      });

      it('rejects a duplicate callback token and stores nothing for the second intent', async () => {
        const first = await store.create(newIntent());
        const second = newIntent({ id: randomUUID(), callbackToken: first.callbackToken });
        const err = await rejection(store.create(second), DuplicateIntentError);
        assert.equal(err.field, 'callbackToken');
        assert.ok(!err.message.includes(first.callbackToken as string));
        assert.equal(await store.get(second.id as string), null);
        assert.deepEqual(await store.byCallbackToken(first.callbackToken as string), first);
      });

      it('allows many intents without a callback token', async () => {
        const a = await store.create(newIntent({ callbackToken: null }));
        const b = await store.create(newIntent({ callbackToken: null }));
        assert.notEqual(a.id, b.id);
      });

      for (const amount of parseCases([21000, '1.5', '-1', '01', '', '1e9', ' 1'])) {
        it(`rejects the amount ${JSON.stringify(amount)} and stores nothing`, async () => {
          const input = newIntent({ amount: amount as string });
          const err = await rejection(store.create(input), InvalidIntentError);
          assert.equal(err.code, 'LN_LEDGER_INVALID');
          assert.deepEqual(await store.openByPlayer(input.playerId), []);
        });
      }

      it('rejects an unknown kind, a short callback token and unknown fields', async () => {
        await rejection(store.create(newIntent({ kind: 'gift' as 'reward' })), InvalidIntentError);
        await rejection(store.create(newIntent({ callbackToken: 'abc' })), InvalidIntentError);
        const typo: NewIntent = Object.assign(newIntent(), { nextCheckAT: 5 });
        await rejection(store.create(typo), InvalidIntentError);
      });
    });

    describe('reads', () => {
      it('returns null for what does not exist', async () => {
        assert.equal(await store.get(randomUUID()), null);
        assert.equal(await store.byCallbackToken(token()), null);
        assert.equal(await store.byRemoteId('reward', randomUUID()), null);
        assert.deepEqual(await store.openByRoom(randomUUID()), []);
        assert.deepEqual(await store.openByPlayer(randomUUID()), []);
      });

      it('returns fresh objects: changing one never changes the store or another result', async () => {
        const created = await store.create(newIntent({ meta: { nested: { n: 1 } } }));
        const snapshot = structuredClone(created);
        created.meta.nested = 'changed';
        created.history.push({ at: 0, from: 'creating', to: 'completed' });
        created.status = 'completed';
        const a = await store.get(created.id);
        const b = await store.get(created.id);
        assert.deepEqual(a, snapshot);
        assert.notEqual(a, b);
        if (!a || !b) assert.fail('missing intent');
        assert.notEqual(a.meta, b.meta);
        assert.notEqual(a.history, b.history);
        a.history.length = 0;
        assert.deepEqual(await store.get(created.id), snapshot);
      });

      it('finds an intent by callback token', async () => {
        const intent = await store.create(newIntent());
        await store.create(newIntent());
        assert.deepEqual(await store.byCallbackToken(intent.callbackToken as string), intent);
      });

      it('finds an intent by kind and remote id, and not under another kind', async () => {
        const remoteId = `wr-${randomUUID()}`;
        const intent = await store.create(newIntent({ kind: 'reward' }));
        const pending = await store.transition(intent.id, 'creating', 'pending', {
          patch: { remoteId },
        });
        assert.deepEqual(await store.byRemoteId('reward', remoteId), pending);
        assert.equal(await store.byRemoteId('entryFee', remoteId), null);
      });

      it('lists open intents of a room and of a player, oldest first, without terminal ones', async () => {
        const roomId = `room-${randomUUID()}`;
        const playerId = `player-${randomUUID()}`;
        const at = async (now: number, status: IntentStatus) => {
          const created = await store.create(newIntent({ roomId, playerId }), now);
          if (status === 'creating') return created;
          const moved = await store.transition(created.id, 'creating', status, { now: now + 1 });
          if (!moved) assert.fail('transition refused');
          return moved;
        };
        // Created out of time order, so that insertion order and id order disagree with age.
        const c = await at(3_000, 'creating');
        const a = await at(1_000, 'pending');
        await at(1_500, 'failed');
        const b = await at(2_000, 'unknown');
        const done = await at(500, 'pending');
        await store.transition(done.id, 'pending', 'completed');
        await store.create(newIntent({ roomId: `room-${randomUUID()}` }));
        await store
          .create(newIntent({ roomId: null, playerId }), 2_500)
          .then((d) => store.transition(d.id, 'creating', 'failed'));

        const expected = [a, b, c].map((i) => i.id);
        assert.deepEqual(
          (await store.openByRoom(roomId)).map((i) => i.id),
          expected,
        );
        assert.deepEqual(
          (await store.openByPlayer(playerId)).map((i) => i.id),
          expected,
        );
        assert.deepEqual(await store.openByRoom(roomId), [a, b, c]);
      });

      it('lists a player’s open intents across rooms and with no room', async () => {
        const playerId = `player-${randomUUID()}`;
        const x = await store.create(newIntent({ playerId }), 1);
        const y = await store.create(newIntent({ playerId, roomId: null }), 2);
        assert.deepEqual(
          (await store.openByPlayer(playerId)).map((i) => i.id),
          [x.id, y.id],
        );
      });
    });

    describe('transition', () => {
      it('moves the status, appends history and applies the patch in one step', async () => {
        const created = await store.create(newIntent({ meta: { a: 1 } }), 1_000);
        const moved = await store.transition(created.id, 'creating', 'pending', {
          patch: {
            remoteId: 'wr-1',
            code: 'LNURL1ABC',
            uri: 'lightning:LNURL1ABC',
            meta: { b: 2 },
          },
          note: 'created by the service',
          now: 2_000,
        });
        assert.deepEqual(moved, {
          ...created,
          status: 'pending',
          remoteId: 'wr-1',
          code: 'LNURL1ABC',
          uri: 'lightning:LNURL1ABC',
          meta: { b: 2 },
          updatedAt: 2_000,
          history: [
            { at: 1_000, from: null, to: 'creating' },
            { at: 2_000, from: 'creating', to: 'pending', note: 'created by the service' },
          ],
        });
        assert.deepEqual(await store.get(created.id), moved);
      });

      it('records the status it actually left when several sources are allowed', async () => {
        const unknown = await intentIn('unknown');
        const moved = await store.transition(unknown.id, ['pending', 'unknown'], 'completed', {
          now: 9_000,
        });
        assert.equal(moved?.status, 'completed');
        assert.deepEqual(moved?.history.at(-1), {
          at: 9_000,
          from: 'unknown',
          to: 'completed',
        });
      });

      it('answers a move handed the intent it read (`read`) as it answers one without', async () => {
        const created = await store.create(newIntent({ nextCheckAt: 50 }), 10);
        const read = await store.transition(created.id, 'creating', 'unknown', {
          patch: { remoteId: 'wr-r' },
          note: 'no answer',
          now: 20,
          read: created,
        });
        if (!read) assert.fail('transition refused');
        assert.deepEqual(read, await store.get(created.id));
        // Written since the read, the status unchanged: the answer shows them, not the reading.
        await store.update(created.id, 'unknown', { error: 'slow', meta: { seen: 1 } }, 30);
        const [leased] = await store.claimDue(100, 1, 'worker-1', 60_000);
        assert.equal(leased?.id, created.id);
        const snapshot = structuredClone(read);
        const moved = await store.transition(created.id, 'unknown', 'pending', {
          patch: { code: 'LNURL1R' },
          note: 'found',
          now: 40,
          read,
        });
        if (!moved) assert.fail('transition refused');
        assert.deepEqual(moved, await store.get(created.id));
        assertIncludes(moved, { error: 'slow', meta: { seen: 1 }, leaseOwner: 'worker-1' });
        assert.deepEqual(moved.history, [
          { at: 10, from: null, to: 'creating' },
          { at: 20, from: 'creating', to: 'unknown', note: 'no answer' },
          { at: 40, from: 'unknown', to: 'pending', note: 'found' },
        ]);
        // Nothing shared with the reading, either way.
        assert.deepEqual(read, snapshot);
        moved.history.length = 0;
        assert.deepEqual(read, snapshot);
        const done = await store.transition(created.id, 'pending', 'completed', {
          now: 50,
          read: (await store.get(created.id)) ?? undefined,
        });
        assert.deepEqual(
          done?.history.map((h) => h.to),
          ['creating', 'unknown', 'pending', 'completed'],
        );
        assert.deepEqual(done, await store.get(created.id));
      });

      it('answers a move handed its reading as a read afterwards, whatever its patch writes', async () => {
        const patches: IntentPatch[] = [
          { remoteId: 'wr-p', code: 'LNURL1P', uri: 'lightning:LNURL1P', meta: { shownAt: 5 } },
          { code: 'LNURL1Q', expiresAt: 90, nextCheckAt: 70, checks: 2, error: null },
          { uri: 'https://pay.example/q', meta: {} },
          { remoteId: randomUUID(), leaseOwner: 'w', leaseUntil: 99, error: 'x' },
          {},
        ];
        for (const patch of patches) {
          const created = await store.create(
            newIntent({ meta: { keep: true }, nextCheckAt: 10, expiresAt: 60 }),
            5,
          );
          const unknown = await store.transition(created.id, 'creating', 'unknown', {
            patch: { code: 'LNURL1OLD', uri: 'lightning:LNURL1OLD' },
            now: 6,
            read: created,
          });
          if (!unknown) assert.fail('transition refused');
          for (const to of ['pending', 'completed'] as const) {
            const from = (await store.get(created.id)) as Intent;
            const terminal = isTerminal(to);
            const moved = await store.transition(created.id, from.status, to, {
              patch: terminal
                ? { ...patch, nextCheckAt: undefined, leaseOwner: undefined, leaseUntil: undefined }
                : patch,
              note: to,
              now: 7,
              read: from,
            });
            assert.deepEqual(moved, await store.get(created.id), JSON.stringify(patch));
          }
        }
      });

      it('keeps the history it holds when `read` is a reading from before another move', async () => {
        const created = await store.create(newIntent(), 10);
        await store.transition(created.id, 'creating', 'pending', { now: 20 });
        // A stale reading (creating) beside a move from pending: the move is the store's to tell.
        const moved = await store.transition(created.id, 'pending', 'completed', {
          now: 30,
          read: created,
        });
        assert.deepEqual(
          moved?.history.map((h) => h.to),
          ['creating', 'pending', 'completed'],
        );
        assert.deepEqual(moved, await store.get(created.id));
        // Several sources: the status it left is the store's to tell too.
        const other = await intentIn('unknown');
        const fromEither = await store.transition(other.id, ['pending', 'unknown'], 'expired', {
          read: other,
        });
        assert.equal(fromEither?.history.at(-1)?.from, 'unknown');
        assert.deepEqual(fromEither, await store.get(other.id));
        // A reading in the move's source that lost the race: null, as without it.
        const raced = await intentIn('pending');
        await store.transition(raced.id, 'pending', 'failed');
        assert.equal(
          await store.transition(raced.id, 'pending', 'completed', { read: raced }),
          null,
        );
      });

      it('returns null and changes nothing when the status is not a listed source', async () => {
        const pending = await intentIn('pending');
        assert.equal(await store.transition(pending.id, 'unknown', 'completed'), null);
        assert.equal(await store.transition(pending.id, 'creating', 'failed'), null);
        assert.deepEqual(await store.get(pending.id), pending);
      });

      it('returns null for an intent that does not exist', async () => {
        assert.equal(await store.transition(randomUUID(), 'pending', 'completed'), null);
      });

      it('clears only the fields a patch sets to null, and keeps the rest', async () => {
        const created = await store.create(newIntent({ nextCheckAt: 10, expiresAt: 20 }));
        const pending = await store.transition(created.id, 'creating', 'pending', {
          patch: { remoteId: 'wr-2', error: 'slow answer' },
        });
        const again = await store.transition(pending?.id as string, 'pending', 'failed', {
          patch: { error: null, expiresAt: null },
        });
        assertIncludes(again, { remoteId: 'wr-2', error: null, expiresAt: null });
      });

      for (const [from, to] of parseCases(
        ALL_PAIRS.filter(([f, t]) => !TRANSITIONS[f].includes(t)),
      )) {
        it(`refuses ${from} -> ${to} with IllegalTransitionError and changes nothing`, async () => {
          const intent = await intentIn(from);
          const err = await rejection(
            store.transition(intent.id, from, to, { patch: { error: 'x' } }),
            IllegalTransitionError,
          );
          assert.equal(err.code, 'LN_LEDGER_ILLEGAL_TRANSITION');
          assert.deepEqual(await store.get(intent.id), intent);
        });
      }

      for (const [from, to] of ALL_PAIRS.filter(([f, t]) => TRANSITIONS[f].includes(t))) {
        it(`allows ${from} -> ${to}`, async () => {
          const intent = await intentIn(from);
          const moved = await store.transition(intent.id, from, to, { now: intent.updatedAt + 1 });
          assert.equal(moved?.status, to);
          assertIncludes(moved?.history.at(-1), { from, to });
        });
      }

      it('refuses a source list with one illegal source, even if the intent sits in a legal one', async () => {
        const pending = await intentIn('pending');
        await rejection(
          store.transition(pending.id, ['pending', 'completed'], 'completed'),
          IllegalTransitionError,
        );
        await rejection(store.transition(pending.id, [], 'completed'), IllegalTransitionError);
        await rejection(
          store.transition(pending.id, 'pending', 'paid' as IntentStatus),
          IllegalTransitionError,
        );
        assert.deepEqual(await store.get(pending.id), pending);
      });

      it('never moves a terminal intent again', async () => {
        for (const status of TERMINAL_STATUSES) {
          const intent = await intentIn(status);
          for (const to of INTENT_STATUSES) {
            const attempt = store.transition(intent.id, status, to);
            await rejection(attempt, IllegalTransitionError);
            // Callers who only list open sources (the normal case) just lose.
            const sources = OPEN_STATUSES.filter((s) => TRANSITIONS[s].includes(to));
            if (sources.length > 0) {
              assert.equal(await store.transition(intent.id, sources, to), null);
            }
          }
          assert.deepEqual(await store.get(intent.id), intent);
        }
      });

      it('clears the schedule and the lease on a terminal move', async () => {
        const created = await store.create(newIntent({ nextCheckAt: 100 }));
        const pending = await store.transition(created.id, 'creating', 'pending');
        const [claimed] = await store.claimDue(100, 1, 'worker-1', 60_000);
        assert.equal(claimed?.id, pending?.id);
        const done = await store.transition(created.id, 'pending', 'completed', {
          patch: { checks: 1 },
        });
        assertIncludes(done, {
          nextCheckAt: null,
          leaseOwner: null,
          leaseUntil: null,
          checks: 1,
        });
        assert.deepEqual(await store.claimDue(10 ** 15, 10, 'worker-2', 1), []);
      });

      it('refuses a terminal move whose patch would schedule or lease the intent', async () => {
        const pending = await intentIn('pending');
        for (const patch of [{ nextCheckAt: 5 }, { leaseOwner: 'w' }, { leaseUntil: 5 }]) {
          await rejection(
            store.transition(pending.id, 'pending', 'expired', { patch }),
            InvalidIntentError,
          );
        }
        assert.deepEqual(await store.get(pending.id), pending);
      });

      it('keeps the schedule and the lease on a move between open statuses', async () => {
        const created = await store.create(newIntent({ nextCheckAt: 100 }));
        await store.claimDue(100, 1, 'worker-1', 60_000);
        const moved = await store.transition(created.id, 'creating', 'unknown');
        assertIncludes(moved, { nextCheckAt: 100, leaseOwner: 'worker-1', leaseUntil: 60_100 });
      });

      it('lets exactly one of many concurrent moves win', async () => {
        const pending = await intentIn('pending');
        const targets: IntentStatus[] = ['completed', 'expired', 'failed'];
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            store.transition(pending.id, ['pending', 'unknown'], targets[i % 3] as IntentStatus),
          ),
        );
        const winners = results.filter((r) => r !== null);
        assert.equal(winners.length, 1);
        const final = await store.get(pending.id);
        assert.equal(final?.status, winners[0]?.status);
        assert.equal(final?.history.filter((h) => isTerminal(h.to)).length, 1);
      });
    });

    describe('update', () => {
      it('writes fields while the status is unchanged, without touching status or history', async () => {
        const pending = await intentIn('pending');
        const updated = await store.update(
          pending.id,
          'pending',
          { checks: 3, error: 'timeout', nextCheckAt: 7_000, meta: { slots: 1 } },
          8_000,
        );
        assert.deepEqual(updated, {
          ...pending,
          checks: 3,
          error: 'timeout',
          nextCheckAt: 7_000,
          meta: { slots: 1 },
          updatedAt: 8_000,
        });
        assert.deepEqual(await store.get(pending.id), updated);
      });

      it('returns null and writes nothing when the status has moved on', async () => {
        const pending = await intentIn('pending');
        assert.equal(await store.update(pending.id, 'creating', { checks: 9 }), null);
        assert.deepEqual(await store.get(pending.id), pending);
        assert.equal(await store.update(randomUUID(), 'pending', { checks: 9 }), null);
      });

      it('may annotate a terminal intent but never schedule or lease it', async () => {
        const done = await intentIn('completed');
        const noted = await store.update(done.id, 'completed', { meta: { credited: true } });
        assert.deepEqual(noted?.meta, { credited: true });
        for (const patch of [{ nextCheckAt: 1 }, { leaseOwner: 'w' }, { leaseUntil: 1 }]) {
          const err = await rejection(
            store.update(done.id, 'completed', patch),
            InvalidIntentError,
          );
          assert.equal(err.code, 'LN_LEDGER_INVALID');
        }
        assert.deepEqual(await store.get(done.id), noted);
      });

      it('rejects an invalid patch', async () => {
        const pending = await intentIn('pending');
        await rejection(
          store.update(pending.id, 'pending', { status: 'completed' } as never),
          InvalidIntentError,
        );
        await rejection(store.update(pending.id, 'pending', { checks: -1 }), InvalidIntentError);
        await rejection(
          store.update(pending.id, 'pending', { meta: { n: 1n } as never }),
          InvalidIntentError,
        );
        assert.deepEqual(await store.get(pending.id), pending);
      });
    });

    describe('journal', () => {
      const P = 2n ** 62n;

      /** A posting; by default the reward's first step (the game's money in flight). */
      function posting(overrides: Partial<Posting> = {}): Posting {
        return {
          tag: 'created',
          debit: 'house:rewards',
          credit: 'inflight',
          amount: '21000',
          unit: 'msats',
          why: 'creating',
          ...overrides,
        };
      }

      /** The entry a posting of `intent` written at `at` becomes, without its seq. */
      function entryOf(intent: Intent, p: Posting, at: number): Omit<JournalEntry, 'seq'> {
        return {
          ...p,
          id: `${intent.id}:${p.tag}`,
          intentId: intent.id,
          playerId: intent.playerId,
          matchId: intent.groupId,
          at,
        };
      }

      async function entriesOf(intentId: string): Promise<JournalEntry[]> {
        return (await store.journal({ intentId })).entries;
      }

      /** Every entry, following `next` until it is null. */
      async function everyEntry(query: JournalQuery = {}): Promise<JournalEntry[]> {
        const entries: JournalEntry[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.journal({ ...query, ...(after ? { after } : {}) });
          entries.push(...page.entries);
          if (page.next === null) return entries;
          after = page.next;
        }
      }

      function withoutSeq(entries: readonly JournalEntry[]): Omit<JournalEntry, 'seq'>[] {
        return entries.map(({ seq: _, ...rest }) => rest);
      }

      function assertSeqIncreasing(entries: readonly JournalEntry[]): void {
        for (const e of entries) assert.ok(Number.isSafeInteger(e.seq), `seq ${e.seq}`);
        for (let i = 1; i < entries.length; i++) {
          assert.ok(
            (entries[i] as JournalEntry).seq > (entries[i - 1] as JournalEntry).seq,
            'seq must increase',
          );
        }
      }

      /** Balances as a sorted list of `account unit balance`, for order-free comparison. */
      function rows(balances: readonly AccountBalance[]): string[] {
        return balances.map((b) => `${b.account} ${b.unit} ${b.balance}`).sort();
      }

      /** Class balances summed per unit, as bigint: zero for every unit, always. */
      async function assertConserved(): Promise<void> {
        const sums = new Map<string, bigint>();
        for (const b of await store.balances()) {
          sums.set(b.unit, (sums.get(b.unit) ?? 0n) + BigInt(b.balance));
        }
        for (const [unit, sum] of sums) assert.equal(sum, 0n, `${unit} sums to ${sum}`);
      }

      /** Creates with the postings journal.ts computes. */
      async function journaledCreate(overrides: Partial<NewIntent>, now: number) {
        const input = { ...newIntent(overrides), id: overrides.id ?? randomUUID() };
        const postings = postingsFor(null, asCreated(input, now), positionOf);
        return store.create(input, now, undefined, postings);
      }

      /** Moves with the postings journal.ts computes; the move must be made. */
      async function journaledMove(
        intent: Intent,
        to: IntentStatus,
        now: number,
        patch: IntentPatch = {},
      ): Promise<Intent> {
        const postings = postingsFor(intent, afterWrite(intent, to, patch, now), positionOf);
        const moved = await store.transition(intent.id, intent.status, to, {
          patch,
          now,
          postings,
        });
        if (!moved) assert.fail(`could not move ${intent.status} -> ${to}`);
        return moved;
      }

      it('writes the postings of create, transition and update as entries of their intent', async () => {
        const groupId = `match-${randomUUID()}`;
        const input = newIntent({ kind: 'reward', groupId, meta: { payKey: 'payout:alice' } });
        const created = posting({ debit: `escrow:${groupId}` });
        const intent = await store.create(input, 1_000, undefined, [created]);
        const shown = posting({
          tag: 'pending',
          debit: 'inflight',
          credit: `claimable:${intent.playerId}`,
          why: 'code shown',
        });
        const pending = await store.transition(intent.id, 'creating', 'pending', {
          patch: { remoteId: 'wr-1' },
          now: 2_000,
          postings: [shown],
        });
        assert.equal(pending?.status, 'pending');
        const a = posting({ tag: 'a', debit: 'wallet', credit: 'owed:x', amount: '5', why: '' });
        const b = posting({ tag: 'b', debit: 'owed:x', credit: 'house:fees', amount: '3' });
        const noted = await store.update(intent.id, 'pending', { checks: 1 }, 3_000, [a, b]);
        assert.equal(noted?.checks, 1);
        // Another intent, with no group: its entries name no match.
        const other = await store.create(newIntent(), 4_000, undefined, [posting()]);

        const entries = await entriesOf(intent.id);
        assert.deepEqual(withoutSeq(entries), [
          entryOf(intent, created, 1_000),
          entryOf(intent, shown, 2_000),
          entryOf(intent, a, 3_000),
          entryOf(intent, b, 3_000),
        ]);
        assert.equal(entries[0]?.matchId, groupId);
        const all = await everyEntry();
        assertSeqIncreasing(all);
        assert.deepEqual(withoutSeq(all), [
          ...withoutSeq(entries),
          { ...entryOf(other, posting(), 4_000), matchId: null },
        ]);
        // A write without postings writes no entries.
        await store.update(intent.id, 'pending', { checks: 2 }, 5_000);
        await store.transition(intent.id, 'pending', 'completed', { now: 6_000, postings: [] });
        assert.equal((await everyEntry()).length, 5);
      });

      it('writes no entries and moves no balances for a write that is not made', async () => {
        const pending = await intentIn('pending');
        const move = posting({ tag: 'failed', debit: 'inflight', credit: 'house:rewards' });
        const names = ['inflight', 'house:rewards'];
        const before = rows(await store.balances(names));
        // A lost compare-and-set, a lost update, an intent that does not exist.
        assert.equal(
          await store.transition(pending.id, 'creating', 'failed', { postings: [move] }),
          null,
        );
        assert.equal(await store.update(pending.id, 'unknown', { checks: 1 }, 1, [move]), null);
        const missing = randomUUID();
        assert.equal(
          await store.transition(missing, 'pending', 'failed', { postings: [move] }),
          null,
        );
        assert.equal(await store.update(missing, 'pending', {}, 1, [move]), null);
        // A create its guards or its duplicate id refuse.
        const input = newIntent({ id: randomUUID(), callbackToken: pending.callbackToken });
        await rejection(store.create(input, 1, undefined, [posting()]), DuplicateIntentError);
        await rejection(
          store.create(newIntent({ id: pending.id }), 1, undefined, [posting()]),
          DuplicateIntentError,
        );
        const playerId = `player-${randomUUID()}`;
        await store.create(newIntent({ playerId }), 1, { maxOpenPerPlayer: 1 });
        const limited = newIntent({ playerId, id: randomUUID() });
        await rejection(
          store.create(limited, 1, { maxOpenPerPlayer: 1 }, [posting()]),
          LimitExceededError,
        );
        assert.deepEqual(await everyEntry(), []);
        assert.deepEqual(rows(await store.balances(names)), before);
        assert.deepEqual(rows(await store.balances(names)), [
          'house:rewards msats 0',
          'inflight msats 0',
        ]);
        assert.deepEqual(await store.balances(), []);
        assert.deepEqual(await store.get(pending.id), pending);
      });

      it('refuses a transition or update whose posting is already journaled, writing nothing', async () => {
        const first = posting();
        const intent = await store.create(newIntent({ meta: { a: 1 } }), 1_000, undefined, [first]);
        const again = posting({ debit: 'inflight', credit: 'wallet', amount: '7' });
        const fresh = posting({ tag: 'pending', debit: 'inflight', credit: 'claimable:p' });
        const balances = rows(await store.balances());
        // The whole write is refused: status, patch, history, and its other, new postings.
        assert.equal(
          await store.transition(intent.id, 'creating', 'pending', {
            patch: { remoteId: 'wr-1', meta: { b: 2 } },
            note: 'should not be kept',
            now: 2_000,
            postings: [fresh, again],
          }),
          null,
        );
        assert.equal(
          await store.update(intent.id, 'creating', { meta: { b: 2 }, checks: 4 }, 2_000, [again]),
          null,
        );
        assert.deepEqual(await store.get(intent.id), intent);
        assert.deepEqual(withoutSeq(await entriesOf(intent.id)), [entryOf(intent, first, 1_000)]);
        assert.deepEqual(rows(await store.balances()), balances);

        // A step journaled by a move is refused to a later update, whatever its status.
        const moved = await store.transition(intent.id, 'creating', 'pending', {
          now: 3_000,
          postings: [fresh],
        });
        assert.equal(moved?.status, 'pending');
        assert.equal(await store.update(intent.id, 'pending', { checks: 9 }, 4_000, [fresh]), null);
        assert.equal(
          await store.transition(intent.id, 'pending', 'completed', { postings: [fresh] }),
          null,
        );
        assert.deepEqual(await store.get(intent.id), moved);
        assert.equal((await entriesOf(intent.id)).length, 2);
        await assertConserved();
      });

      const invalid: [string, Posting[]][] = [
        ['an unknown account class', [posting({ debit: 'bank' })]],
        ['an account with an empty owner', [posting({ credit: 'claimable:' })]],
        ['an account with a newline', [posting({ credit: 'escrow:a\nb' })]],
        ['an account of no class', [posting({ credit: 'player:a' })]],
        ['an uppercase tag', [posting({ tag: 'Created' })]],
        ['an empty tag', [posting({ tag: '' })]],
        ['a tag of 41 characters', [posting({ tag: 'a'.repeat(41) })]],
        ['the amount 0', [posting({ amount: '0' })]],
        ['the amount 01', [posting({ amount: '01' })]],
        ['the amount -5', [posting({ amount: '-5' })]],
        ['the amount 1.5', [posting({ amount: '1.5' })]],
        ['an amount of 2^63', [posting({ amount: String(2n ** 63n) })]],
        ['a numeric amount', [posting({ amount: 5 as unknown as string })]],
        ['an empty unit', [posting({ unit: '' })]],
        ['a debit equal to its credit', [posting({ credit: 'house:rewards' })]],
        ['one tag twice', [posting(), posting({ credit: 'wallet' })]],
        ['an unknown field', [{ ...posting(), note: 'x' } as Posting]],
      ];
      for (const [what, postings] of parseCases(invalid)) {
        it(`rejects postings with ${what} on every write, storing nothing`, async () => {
          const input = newIntent({ id: randomUUID() });
          await rejection(store.create(input, 1, undefined, postings), InvalidIntentError);
          assert.equal(await store.get(input.id as string), null);
          const pending = await intentIn('pending');
          await rejection(
            store.transition(pending.id, 'pending', 'completed', { postings }),
            InvalidIntentError,
          );
          await rejection(
            store.update(pending.id, 'pending', { checks: 1 }, 1, postings),
            InvalidIntentError,
          );
          assert.deepEqual(await store.get(pending.id), pending);
          assert.deepEqual(await everyEntry(), []);
          assert.deepEqual(await store.balances(), []);
        });
      }

      it('keeps the largest amount a posting may carry exactly, and refuses one more', async () => {
        const max = String(2n ** 63n - 1n);
        await store.create(newIntent(), 1, undefined, [posting({ amount: max })]);
        assert.deepEqual(rows(await store.balances(['house:rewards', 'inflight'])), [
          `house:rewards msats -${max}`,
          `inflight msats ${max}`,
        ]);
      });

      it('keeps apart an account first named by a refused write and the next one named', async () => {
        const max = String(2n ** 63n - 1n);
        await store.create(newIntent(), 1, undefined, [posting({ amount: max })]);
        // Names house:rake for the first time, then takes inflight past 2^63: refused whole.
        const refused = await store.create(newIntent(), 2);
        await rejection(
          store.update(refused.id, 'creating', { checks: 1 }, 3, [
            posting({ tag: 'x', debit: 'house:rake', credit: 'inflight', amount: '1' }),
          ]),
          InvalidIntentError,
        );
        // Another account named for the first time, then house:rake: each its own balance.
        const alice = `claimable:player-${randomUUID()}`;
        await store.update(refused.id, 'creating', { checks: 2 }, 4, [
          posting({ tag: 'y', debit: 'wallet', credit: alice, amount: '5' }),
        ]);
        await store.update(refused.id, 'creating', { checks: 3 }, 5, [
          posting({ tag: 'z', debit: 'wallet', credit: 'house:rake', amount: '7' }),
        ]);
        assert.deepEqual(rows(await store.balances([alice, 'house:rake', 'wallet'])), [
          `${alice} msats 5`,
          'house:rake msats 7',
          'wallet msats -12',
        ]);
      });

      it('answers every named account, 0 in msats when it never moved, once per unit it moved in', async () => {
        const alice = `player-${randomUUID()}`;
        const intent = await store.create(newIntent({ playerId: alice }), 1, undefined, [
          posting({ tag: 'a', debit: 'wallet', credit: `claimable:${alice}`, amount: '300' }),
          posting({ tag: 'b', debit: `claimable:${alice}`, credit: 'wallet', amount: '300' }),
          posting({ tag: 'c', debit: `points:${alice}`, credit: 'inflight', unit: 'USDZ' }),
        ]);
        assert.equal((await entriesOf(intent.id)).length, 3);
        const named = [`claimable:${alice}`, `points:${alice}`, 'owed:nobody', 'escrow:none'];
        assert.deepEqual(rows(await store.balances(named)), [
          `claimable:${alice} msats 0`,
          'escrow:none msats 0',
          'owed:nobody msats 0',
          `points:${alice} USDZ -21000`,
        ]);
        assert.deepEqual(rows(await store.balances(['owed:nobody'])), ['owed:nobody msats 0']);
      });

      it('sums balances per class over owners, signed and exact beyond 2^53', async () => {
        const [m1, m2] = [`match-${randomUUID()}`, `match-${randomUUID()}`];
        // Around 2^62 each: a double would round every one of these sums.
        const fee1 = await store.create(newIntent({ kind: 'entryFee', groupId: m1 }), 1);
        await store.transition(fee1.id, 'creating', 'pending');
        await store.transition(fee1.id, 'pending', 'completed', {
          postings: [
            posting({ tag: 'completed', debit: 'wallet', credit: `escrow:${m1}`, amount: `${P}` }),
          ],
        });
        const fee2 = await store.create(newIntent({ kind: 'entryFee', groupId: m2 }), 1);
        await store.update(fee2.id, 'creating', { checks: 1 }, 2, [
          posting({ tag: 'x', debit: 'wallet', credit: `escrow:${m2}`, amount: `${P - 3n}` }),
          posting({ tag: 'y', debit: `escrow:${m2}`, credit: 'house:rake', amount: '1' }),
          posting({ tag: 'z', debit: `escrow:${m2}`, credit: 'claimable:p', amount: `${P / 2n}` }),
        ]);
        const escrow = 2n * P - 3n - 1n - P / 2n;
        assert.deepEqual(rows(await store.balances()), [
          `claimable msats ${P / 2n}`,
          `escrow msats ${escrow}`,
          'house msats 1',
          `wallet msats -${2n * P - 3n}`,
        ]);
        // rows() sorts, and m1 and m2 are random: sort the expected rows too.
        assert.deepEqual(
          rows(await store.balances([`escrow:${m1}`, `escrow:${m2}`, 'wallet'])),
          [
            `escrow:${m1} msats ${P}`,
            `escrow:${m2} msats ${P - 3n - 1n - P / 2n}`,
            `wallet msats -${2n * P - 3n}`,
          ].sort(),
        );
        // A class that moved and came back to zero is still answered.
        await store.update(fee2.id, 'creating', {}, 3, [
          posting({ tag: 'back', debit: 'claimable:p', credit: 'wallet', amount: `${P / 2n}` }),
        ]);
        assert.ok(rows(await store.balances()).includes('claimable msats 0'));
        await assertConserved();
      });

      it('keeps units apart: points never mix with msats', async () => {
        const alice = `player-${randomUUID()}`;
        const spend = await store.create(
          newIntent({ kind: 'spend', playerId: alice, unit: 'USDZ', amount: '500' }),
          1,
          undefined,
          [posting({ debit: `points:${alice}`, amount: '500', unit: 'USDZ' })],
        );
        await store.create(newIntent({ playerId: alice }), 1, undefined, [posting()]);
        await store.transition(spend.id, 'creating', 'pending');
        await store.transition(spend.id, 'pending', 'completed', {
          postings: [
            posting({
              tag: 'completed',
              debit: 'inflight',
              credit: 'house:points',
              amount: '200',
              unit: 'USDZ',
            }),
          ],
        });
        assert.deepEqual(rows(await store.balances(['inflight', `points:${alice}`])), [
          'inflight USDZ 300',
          'inflight msats 21000',
          `points:${alice} USDZ -500`,
        ]);
        assert.deepEqual(rows(await store.balances()), [
          'house USDZ 200',
          'house msats -21000',
          'inflight USDZ 300',
          'inflight msats 21000',
          'points USDZ -500',
        ]);
        await assertConserved();
      });

      it('lists entries by player, match, intent and time, AND-ed, in seq order', async () => {
        const [alice, bob] = [`player-${randomUUID()}`, `player-${randomUUID()}`];
        const match = `match-${randomUUID()}`;
        const write = async (playerId: string, groupId: string | null, now: number) => {
          const intent = await store.create(newIntent({ playerId, groupId }), now, undefined, [
            posting(),
          ]);
          await store.update(intent.id, 'creating', {}, now + 1, [
            posting({ tag: 'moved', debit: 'inflight', credit: 'wallet' }),
          ]);
          return intent;
        };
        const a1 = await write(alice, match, 1_000);
        const b1 = await write(bob, match, 2_000);
        const a2 = await write(alice, null, 3_000);
        const b2 = await write(bob, null, 4_000);
        const ids = async (query: JournalQuery) => (await everyEntry(query)).map((e) => e.id);
        const both = (i: Intent) => [`${i.id}:created`, `${i.id}:moved`];
        assert.deepEqual(await ids({ playerId: alice }), [...both(a1), ...both(a2)]);
        assert.deepEqual(await ids({ matchId: match }), [...both(a1), ...both(b1)]);
        assert.deepEqual(await ids({ intentId: b2.id }), both(b2));
        assert.deepEqual(await ids({ since: 2_001 }), [`${b1.id}:moved`, ...both(a2), ...both(b2)]);
        assert.deepEqual(await ids({ playerId: bob, matchId: match }), both(b1));
        assert.deepEqual(await ids({ playerId: alice, since: 3_000 }), both(a2));
        assert.deepEqual(await ids({ playerId: alice, intentId: b1.id }), []);
        assert.deepEqual(await ids({ matchId: `match-${randomUUID()}` }), []);
        assert.deepEqual(await ids({ since: 4_002 }), []);
        assertSeqIncreasing(await everyEntry());
      });

      it('pages through entries with limit and next, to a last page whose next is null', async () => {
        const alice = `player-${randomUUID()}`;
        const intents: Intent[] = [];
        // 7 intents of 15 entries each: 105 entries, the default page is 100.
        for (let i = 0; i < 7; i++) {
          const tags = Array.from({ length: 15 }, (_, t) => posting({ tag: `t${t}` }));
          intents.push(await store.create(newIntent({ playerId: alice }), i, undefined, tags));
        }
        await store.create(newIntent(), 9, undefined, [posting()]);
        const all = await everyEntry({ playerId: alice });
        assert.equal(all.length, 105);
        assertSeqIncreasing(all);
        const first = await store.journal({ playerId: alice });
        assert.equal(first.entries.length, 100);
        assert.equal(typeof first.next, 'string');
        const rest = await store.journal({ playerId: alice, after: first.next as string });
        assert.deepEqual([...first.entries, ...rest.entries], all);
        assert.equal(rest.next, null);

        const sizes: number[] = [];
        let after: string | undefined;
        const paged: JournalEntry[] = [];
        for (;;) {
          const page = await store.journal({
            intentId: (intents[3] as Intent).id,
            limit: 4,
            ...(after ? { after } : {}),
          });
          sizes.push(page.entries.length);
          paged.push(...page.entries);
          if (page.next === null) break;
          after = page.next;
        }
        assert.deepEqual(sizes, [4, 4, 4, 3]);
        assert.deepEqual(paged, await entriesOf((intents[3] as Intent).id));
        const one = await store.journal({ limit: 1 });
        assert.equal(one.entries.length, 1);
        assert.deepEqual(one.entries[0], all[0]);
        assert.deepEqual((await store.journal({ limit: 1000 })).entries.length, 106);
      });

      it('rejects nonsense queries and account names', async () => {
        const bad: JournalQuery[] = [
          { limit: 0 },
          { limit: 1001 },
          { limit: 1.5 },
          { after: 'abc' },
          { after: '-1' },
          { after: '01' },
          { since: -1 },
          { playerId: '' },
          { player: 'x' } as JournalQuery,
        ];
        for (const query of bad) {
          const err = await rejection(store.journal(query), InvalidIntentError);
          assert.equal(err.code, 'LN_LEDGER_INVALID');
        }
        for (const names of [['bank'], ['wallet:'], [''], [5 as unknown as string]]) {
          await rejection(store.balances(names), InvalidIntentError);
        }
      });

      it('keeps every unit summing to zero over the class balances after a mix of writes', async () => {
        const match = `match-${randomUUID()}`;
        const [alice, bob] = [`player-${randomUUID()}`, `player-${randomUUID()}`];
        // A match and its pot: two fees in, a payout that fails and is reissued, rake out.
        const pot = await journaledCreate({ kind: 'match', groupId: match, id: match }, 1);
        for (const playerId of [alice, bob]) {
          const fee = await journaledCreate(
            { kind: 'entryFee', playerId, groupId: match, amount: '50000' },
            2,
          );
          await journaledMove(await journaledMove(fee, 'pending', 3), 'completed', 4);
        }
        const key = `${match}:payout:${alice}`;
        const payout = await journaledCreate(
          {
            kind: 'reward',
            playerId: alice,
            groupId: match,
            id: key,
            amount: '90000',
            meta: { payKey: key },
          },
          5,
        );
        await journaledMove(payout, 'failed', 6);
        const second = await journaledCreate(
          {
            kind: 'reward',
            playerId: alice,
            groupId: match,
            id: `${key}:2`,
            amount: '90000',
            meta: { payKey: key },
          },
          7,
        );
        await journaledMove(await journaledMove(second, 'pending', 8), 'completed', 9);
        const decision = { kind: 'settle', rakeMsat: '10000' };
        await journaledMove(await journaledMove(pot, 'pending', 10), 'completed', 11, {
          meta: { decision },
        });
        // A fee outside any match paid after its deadline; a reward shown and expired; a spend.
        const late = await journaledMove(
          await journaledMove(await journaledCreate({ kind: 'entryFee' }, 12), 'pending', 13),
          'expired',
          14,
        );
        const meta = { latePaymentReported: true };
        const postings = postingsFor(late, { ...late, meta }, positionOf);
        assert.equal(postings[0]?.tag, 'late');
        await store.update(late.id, 'expired', { meta }, 15, postings);
        await journaledMove(
          await journaledMove(await journaledCreate({ kind: 'reward' }, 16), 'pending', 17),
          'expired',
          18,
        );
        const spend = await journaledCreate({ kind: 'spend', unit: 'USDZ', amount: '700' }, 19);
        await journaledMove(await journaledMove(spend, 'unknown', 20), 'completed', 21);

        await assertConserved();
        assert.deepEqual(rows(await store.balances([`escrow:${match}`, 'house:rake'])), [
          `escrow:${match} msats 0`,
          'house:rake msats 10000',
        ]);
        const potEntries = (await everyEntry({ matchId: match })).map(
          (e) => `${e.tag} ${e.debit} ${e.credit} ${e.amount}`,
        );
        assert.deepEqual(potEntries, [
          `completed wallet escrow:${match} 50000`,
          `completed wallet escrow:${match} 50000`,
          `created escrow:${match} inflight 90000`,
          `failed inflight escrow:${match} 90000`,
          `created escrow:${match} inflight 90000`,
          `pending inflight claimable:${alice} 90000`,
          `completed claimable:${alice} wallet 90000`,
          `completed escrow:${match} house:rake 10000`,
        ]);
      });
    });

    describe('guards: open keys, per-player limits, budgets', () => {
      it('refuses a second open intent with the same openKey, naming the holder, and frees the key once it ends', async () => {
        const first = await store.create(newIntent({ openKey: 'fee:room-1:alice' }));
        const err = await rejection(
          store.create(newIntent({ openKey: 'fee:room-1:alice' })),
          DuplicateIntentError,
        );
        assert.equal(err.field, 'openKey');
        assert.equal(err.existingId, first.id);
        assert.equal(first.openKey, 'fee:room-1:alice');
        // Another key, or no key, is independent.
        await store.create(newIntent({ openKey: 'fee:room-1:bob' }));
        await store.create(newIntent({ openKey: null }));
        await store.transition(first.id, 'creating', 'pending');
        await rejection(
          store.create(newIntent({ openKey: 'fee:room-1:alice' })),
          DuplicateIntentError,
        );
        await store.transition(first.id, 'pending', 'expired');
        const next = await store.create(newIntent({ openKey: 'fee:room-1:alice' }));
        assert.equal(next.openKey, 'fee:room-1:alice');
      });

      it('lets exactly one of many concurrent creates with one openKey through', async () => {
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, () => store.create(newIntent({ openKey: 'seat-7' }))),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1);
        for (const r of results) {
          if (r.status === 'rejected') assert.ok(r.reason instanceof DuplicateIntentError);
        }
      });

      it('refuses a create past maxOpenPerPlayer, storing nothing, and counts only open intents', async () => {
        const playerId = `player-${randomUUID()}`;
        const made: Intent[] = [];
        for (let i = 0; i < 3; i++) {
          made.push(await store.create(newIntent({ playerId }), 1, { maxOpenPerPlayer: 3 }));
        }
        const err = await rejection(
          store.create(newIntent({ playerId, description: 'fourth' }), 1, { maxOpenPerPlayer: 3 }),
          LimitExceededError,
        );
        assert.equal(err.code, 'LN_LIMIT_EXCEEDED');
        assert.equal(err.max, 3);
        assert.equal((await store.openByPlayer(playerId)).length, 3);
        // Another player is not affected; an ended intent frees a place.
        await store.create(newIntent(), 1, { maxOpenPerPlayer: 3 });
        await store.transition((made[0] as Intent).id, 'creating', 'failed');
        await store.create(newIntent({ playerId }), 1, { maxOpenPerPlayer: 3 });
        assert.equal((await store.openByPlayer(playerId)).length, 3);
      });

      it('holds maxOpenPerPlayer under concurrent creates', async () => {
        const playerId = `player-${randomUUID()}`;
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, () =>
            store.create(newIntent({ playerId }), 1, { maxOpenPerPlayer: 5 }),
          ),
        );
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
        assert.equal((await store.openByPlayer(playerId)).length, 5);
      });

      it('refuses a create past maxOpenPerGame, storing nothing, whoever asks', async () => {
        const cap = { maxOpenPerGame: 4 };
        const made: Intent[] = [];
        // Four players, one open intent each: the game's cap, exactly.
        for (let i = 0; i < 4; i++) made.push(await store.create(newIntent(), 1, cap));
        const refused = newIntent({ description: 'fifth', openKey: 'seat-5' });
        const err = await rejection(store.create(refused, 1, cap), LimitExceededError);
        assert.equal(err.code, 'LN_LIMIT_EXCEEDED');
        assert.equal(err.limit, 'maxOpenPerGame');
        assert.equal(err.max, 4);
        // The player refused, though they held nothing: the cap is the game's.
        assert.equal(err.playerId, refused.playerId);
        assert.match(err.message, /game/);
        assert.deepEqual(await store.openByPlayer(refused.playerId), []);
        assert.deepEqual(await store.openByRoom(refused.roomId as string), []);
        // Nothing of it was kept: not its open key, not an entry.
        const again = await rejection(store.create(refused, 1, cap), LimitExceededError);
        assert.equal(again.limit, 'maxOpenPerGame');
        assert.deepEqual((await store.journal()).entries, []);
        // Without the guard a create is not held back, and what it records counts.
        const unguarded = await store.create(newIntent(), 1);
        await rejection(store.create(newIntent(), 1, { maxOpenPerGame: 5 }), LimitExceededError);
        // A larger cap lets one more through.
        await store.create(newIntent(), 1, { maxOpenPerGame: 6 });
        await store.transition(unguarded.id, 'creating', 'failed');
        await store.transition((made[0] as Intent).id, 'creating', 'pending');
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        assert.equal(
          (await rejection(store.create(newIntent(), 1, { maxOpenPerGame: 5 }), LimitExceededError))
            .max,
          5,
        );
      });

      it('frees a place in the game as soon as an intent ends, whatever its end', async () => {
        const cap = { maxOpenPerGame: 3 };
        const [a, b, c] = [
          await store.create(newIntent(), 1, cap),
          await store.create(newIntent({ kind: 'entryFee' }), 1, cap),
          await store.create(newIntent({ kind: 'spend' }), 1, cap),
        ] as [Intent, Intent, Intent];
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        // Moves between open statuses free nothing.
        await store.transition(a.id, 'creating', 'pending');
        await store.transition(b.id, 'creating', 'unknown');
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        // Each end frees one place: completed, expired, failed.
        await store.transition(a.id, 'pending', 'completed');
        const d = await store.create(newIntent(), 1, cap);
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        await store.transition(b.id, 'unknown', 'expired');
        await store.transition(c.id, 'creating', 'failed');
        await store.create(newIntent(), 1, cap);
        await store.create(newIntent(), 1, cap);
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        // A lost compare-and-set, an update and a lease change nothing.
        assert.equal(await store.transition(a.id, 'pending', 'failed'), null);
        await store.update(d.id, 'creating', { checks: 1 });
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
      });

      it('does not count a record that moves no money (a match) against maxOpenPerGame: its fees and payouts count', async () => {
        const cap = { maxOpenPerGame: 2 };
        const matchId = randomUUID();
        const match = newIntent({
          id: matchId,
          kind: 'match',
          movesMoney: false,
          playerId: `match:${matchId}`,
          groupId: matchId,
          callbackToken: null,
        });
        await store.create(match, 1);
        await store.create({ ...match, id: randomUUID(), groupId: randomUUID() }, 1, cap);
        const fee = await store.create(newIntent({ kind: 'entryFee', groupId: matchId }), 1, cap);
        await store.create(newIntent({ groupId: matchId }), 1, cap);
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        // A match that ends frees nothing (it held no place); its fee does.
        await store.transition(matchId, 'creating', 'failed');
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
        await store.transition(fee.id, 'creating', 'failed');
        await store.create(newIntent(), 1, cap);
      });

      it('holds maxOpenPerGame under concurrent creates of many players', async () => {
        // A cap well above the creates in flight at first, reached only at the end: a store may
        // count cheaply far from its cap and exactly near it (PostgresLedger does).
        const cap = { maxOpenPerGame: 40 };
        const results = await Promise.allSettled(
          Array.from({ length: 70 }, (_, i) =>
            store.create(newIntent({ kind: i % 2 ? 'entryFee' : 'reward' }), 1, {
              ...cap,
              maxOpenPerPlayer: 3,
            }),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 40);
        for (const r of results) {
          if (r.status === 'rejected') {
            assert.ok(r.reason instanceof LimitExceededError, String(r.reason));
            assert.equal(r.reason.limit, 'maxOpenPerGame');
          }
        }
        // Ending some while others create: the cap is never passed, and the count stays exact.
        const ids = won.map((r) => (r as PromiseFulfilledResult<Intent>).value.id);
        const mixed = await Promise.allSettled([
          ...ids.slice(0, 5).map((id) => store.transition(id, 'creating', 'failed')),
          ...Array.from({ length: 20 }, () => store.create(newIntent(), 1, cap)),
        ]);
        const created = mixed.slice(5).filter((r) => r.status === 'fulfilled').length;
        assert.ok(created <= 5, `${created} created into 5 free places`);
        for (let i = created; i < 5; i++) await store.create(newIntent(), 1, cap);
        await rejection(store.create(newIntent(), 1, cap), LimitExceededError);
      });

      it('reserves reward budgets per player, room and game over rolling windows', async () => {
        const playerId = `player-${randomUUID()}`;
        const roomId = `room-${randomUUID()}`;
        const budgets = [
          { scope: 'player', limitMsat: 50_000, windowMs: 1_000 },
          { scope: 'room', limitMsat: 70_000, windowMs: 1_000 },
        ] as const;
        const reward = (amount: number, who = playerId, room: string | null = roomId) =>
          newIntent({ playerId: who, roomId: room, amount: String(amount) });
        const a = await store.create(reward(30_000), 100, { budgets });
        await store.create(reward(20_000), 200, { budgets }); // the player's 50,000 exactly
        const err = await rejection(store.create(reward(1), 300, { budgets }), BudgetExceededError);
        assert.equal(err.scope, 'player');
        assert.equal(err.reservedMsat, '50000');
        assert.equal(err.limitMsat, '50000');
        // Another player in the same room: the room's cap (70,000) holds.
        const bob = `player-${randomUUID()}`;
        await store.create(reward(20_000, bob), 300, { budgets });
        const room = await rejection(
          store.create(reward(1, bob), 300, { budgets }),
          BudgetExceededError,
        );
        assert.equal(room.scope, 'room');
        // Entry fees and spends never count against a payout budget.
        await store.create({ ...reward(99_000), kind: 'entryFee' }, 300, { budgets });
        // A payment to a Lightning address is a payout: it counts, and is refused, like a reward.
        const paid = await rejection(
          store.create({ ...reward(1), kind: 'payment' }, 300, { budgets }),
          BudgetExceededError,
        );
        assert.equal(paid.scope, 'player');
        // A reward that expired unclaimed gives its budget back.
        await store.transition(a.id, 'creating', 'pending', { now: 400 });
        await store.transition(a.id, 'pending', 'expired', { now: 500 });
        await store.create(reward(10_000, bob), 600, { budgets });
        // The window rolls: at 1,201 the rewards created at 100 and 200 have left it, and the
        // room holds bob's 30,000 (created at 300 and 600).
        await store.create(reward(40_000), 1_201, { budgets }); // the room's 70,000 exactly
        const rolled = await rejection(
          store.create(reward(10_001), 1_201, { budgets }),
          BudgetExceededError,
        );
        assert.equal(rolled.scope, 'player');
        assert.equal(rolled.reservedMsat, '40000');
        // No room: the room budget does not apply.
        await store.create(reward(1_000, `player-${randomUUID()}`, null), 1_300, { budgets });
      });

      it('counts payments to Lightning addresses in the same budgets as rewards', async () => {
        const playerId = `player-${randomUUID()}`;
        const budgets = [{ scope: 'player', limitMsat: 30_000, windowMs: 10_000 }] as const;
        const payout = (kind: 'reward' | 'payment', amount: number) =>
          newIntent({ playerId, kind, amount: String(amount) });
        const payment = await store.create(payout('payment', 20_000), 100, { budgets });
        await store.create(payout('reward', 10_000), 200, { budgets });
        const err = await rejection(
          store.create(payout('payment', 1), 300, { budgets }),
          BudgetExceededError,
        );
        assert.equal(err.reservedMsat, '30000');
        // A payment that failed gives its budget back, as a reward does.
        await store.transition(payment.id, 'creating', 'failed', { now: 400 });
        await store.create(payout('payment', 20_000), 500, { budgets });
        await rejection(store.create(payout('reward', 1), 600, { budgets }), BudgetExceededError);
      });

      it('holds a game-wide budget under concurrent creates, exactly to the msat', async () => {
        const budgets = [{ scope: 'game', limitMsat: 100_000, windowMs: 60_000 }] as const;
        const results = await Promise.allSettled(
          Array.from({ length: 25 }, () =>
            store.create(newIntent({ amount: '7000' }), 1_000, { budgets }),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled').length;
        assert.equal(won, 14); // 14 * 7,000 = 98,000; a 15th would make 105,000
        for (const r of results) {
          if (r.status === 'rejected') assert.ok(r.reason instanceof BudgetExceededError);
        }
      });

      it('refuses nonsense guards and stores nothing', async () => {
        const playerId = `player-${randomUUID()}`;
        await rejection(
          store.create(newIntent({ playerId }), 1, { maxOpenPerPlayer: 0 }),
          InvalidIntentError,
        );
        await rejection(
          store.create(newIntent({ playerId }), 1, { maxOpenPerGame: 1.5 }),
          InvalidIntentError,
        );
        await rejection(
          store.create(newIntent({ playerId }), 1, {
            budgets: [{ scope: 'player', limitMsat: 2 ** 60, windowMs: 1 }],
          }),
          InvalidIntentError,
        );
        assert.deepEqual(await store.openByPlayer(playerId), []);
      });
    });

    describe('payout approvals: the hold', () => {
      const hold = (aboveMsat: number) => ({ hold: { aboveMsat } });

      it('records a payout above the line held: never due, listed by held(), open, counted', async () => {
        const playerId = `player-${randomUUID()}`;
        const before = await store.openCount();
        const big = await store.create(
          newIntent({ playerId, amount: '50001', nextCheckAt: 5_000 }),
          1_000,
          hold(50_000),
        );
        assert.equal(big.status, 'held');
        assert.equal(big.nextCheckAt, null);
        assert.deepEqual(big.history, [{ at: 1_000, from: null, to: 'held' }]);
        const line = await store.create(
          newIntent({ playerId, amount: '50000', kind: 'payment' }),
          1_001,
          hold(50_000),
        );
        assert.equal(line.status, 'creating', 'at the line is not above it');
        // Not a payout: the hold does not apply.
        const fee = await store.create(
          newIntent({ playerId, amount: '90000', kind: 'entryFee' }),
          1_002,
          hold(50_000),
        );
        assert.equal(fee.status, 'creating');
        assert.deepEqual(
          (await store.held()).map((i) => i.id),
          [big.id],
        );
        assert.deepEqual(
          (await store.openByPlayer(playerId)).map((i) => i.id),
          [big.id, line.id, fee.id],
        );
        assert.equal(await store.openCount(), before + 3);
        // The reconciler never looks at it, nor does the start-up sweep bring it forward.
        const due = await store.claimDue(10_000_000, 100, 'me', 1_000);
        assert.ok(!due.some((i) => i.id === big.id));
        await store.advanceChecks(0);
        const still = await store.get(big.id);
        assert.equal(still?.status, 'held');
        assert.equal(still?.nextCheckAt, null);
      });

      it('moves held -> creating (approved) or failed (rejected) only, history kept', async () => {
        const approved = await store.create(newIntent({ amount: '9' }), 100, hold(1));
        const moved = await store.transition(approved.id, 'held', 'creating', {
          now: 200,
          note: 'approved by ops',
          patch: { nextCheckAt: 900, meta: { approvedBy: 'ops' } },
        });
        assert.equal(moved?.status, 'creating');
        assert.equal(moved?.nextCheckAt, 900);
        const pending = await store.transition(approved.id, 'creating', 'pending', { now: 300 });
        assert.deepEqual(
          pending?.history.map((h) => [h.from, h.to, h.at]),
          [
            [null, 'held', 100],
            ['held', 'creating', 200],
            ['creating', 'pending', 300],
          ],
        );
        assert.deepEqual(
          (await store.get(approved.id))?.history.map((h) => h.to),
          ['held', 'creating', 'pending'],
        );
        const rejected = await store.create(newIntent({ amount: '9' }), 100, hold(1));
        const failed = await store.transition(rejected.id, 'held', 'failed', { now: 400 });
        assert.deepEqual(
          failed?.history.map((h) => h.to),
          ['held', 'failed'],
        );
        assert.deepEqual(await store.held(), []);
        const third = await store.create(newIntent({ amount: '9' }), 100, hold(1));
        await rejection(store.transition(third.id, 'held', 'pending'), IllegalTransitionError);
        await rejection(store.transition(third.id, 'creating', 'held'), IllegalTransitionError);
        assert.equal(await store.transition(third.id, 'creating', 'pending'), null);
      });

      it("holds what would take a player's window past its line, held ones counted", async () => {
        const playerId = `player-${randomUUID()}`;
        const guards = { hold: { perPlayer: { limitMsat: 1_000, windowMs: 10_000 } } };
        const payout = (amount: number, who = playerId) =>
          newIntent({ playerId: who, amount: String(amount) });
        const a = await store.create(payout(600), 1_000, guards);
        assert.equal(a.status, 'creating');
        const b = await store.create(payout(600), 1_100, guards);
        assert.equal(b.status, 'held', '1,200 in the window');
        // Held ones count: 600 + 600 + 300 is past the line.
        assert.equal((await store.create(payout(300), 1_200, guards)).status, 'held');
        // Another player's window is their own.
        assert.equal(
          (await store.create(payout(900, `p-${randomUUID()}`), 1_200, guards)).status,
          'creating',
        );
        // Ended unpaid gives its place back (as a budget's): a's 600 leaves the window.
        await store.transition(a.id, 'creating', 'failed', { now: 1_300 });
        await store.transition(b.id, 'held', 'failed', { now: 1_300 });
        assert.equal((await store.create(payout(400), 1_400, guards)).status, 'creating');
        // The window rolls: what was created at 1,200 and 1,400 has left it at 11,401.
        assert.equal((await store.create(payout(1_000), 11_401, guards)).status, 'creating');
        assert.equal((await store.create(payout(1), 11_402, guards)).status, 'held');
      });

      it("decides a player's window in the create's atomic step, under concurrent creates", async () => {
        const playerId = `player-${randomUUID()}`;
        const guards = { hold: { perPlayer: { limitMsat: 1_000, windowMs: 60_000 } } };
        const made = await Promise.all(
          Array.from({ length: 12 }, () =>
            store.create(newIntent({ playerId, amount: '200' }), 1_000, guards),
          ),
        );
        const unheld = made.filter((i) => i.status === 'creating').length;
        assert.equal(unheld, 5, '5 * 200 reach the line; every other is held');
        assert.equal((await store.held(100)).length, 7);
      });

      it('journals a held payout as a create, and its end as any move', async () => {
        const input = { ...newIntent({ amount: '700' }), id: randomUUID() };
        const draft = asCreated(input, 10);
        const held = await store.create(input, 10, hold(1), postingsFor(null, draft, positionOf));
        assert.equal(held.status, 'held');
        const [entry] = (await store.journal({ intentId: held.id })).entries;
        assert.equal(entry?.credit, 'inflight');
        assert.equal(entry?.debit, 'house:rewards');
      });

      it('refuses a nonsense hold and stores nothing', async () => {
        const playerId = `player-${randomUUID()}`;
        await rejection(
          store.create(newIntent({ playerId }), 1, { hold: { aboveMsat: -1 } }),
          InvalidIntentError,
        );
        await rejection(
          store.create(newIntent({ playerId }), 1, {
            hold: { perPlayer: { limitMsat: 1, windowMs: 0 } },
          }),
          InvalidIntentError,
        );
        assert.deepEqual(await store.openByPlayer(playerId), []);
      });
    });

    describe('byGroup', () => {
      it('lists every intent of a group, whatever its status, oldest first, and no others', async () => {
        const groupId = `match-${randomUUID()}`;
        const match = await store.create(newIntent({ kind: 'match', groupId }), 10);
        const fee = await store.create(newIntent({ kind: 'entryFee', groupId }), 20);
        const payout = await store.create(newIntent({ groupId }), 30);
        await store.create(newIntent({ groupId: `other-${randomUUID()}` }), 15);
        await store.create(newIntent(), 25);
        await store.transition(fee.id, 'creating', 'pending');
        await store.transition(fee.id, 'pending', 'completed');
        await store.transition(payout.id, 'creating', 'failed');
        const group = await store.byGroup(groupId);
        assert.deepEqual(
          group.map((i) => [i.id, i.status]),
          [
            [match.id, 'creating'],
            [fee.id, 'completed'],
            [payout.id, 'failed'],
          ],
        );
        assert.equal(group[1]?.groupId, groupId);
        assert.deepEqual(await store.byGroup(`none-${randomUUID()}`), []);
      });
    });

    describe('seats (CreateGuards.seat)', () => {
      const fee = (groupId: string, playerId = `player-${randomUUID()}`) =>
        newIntent({ kind: 'entryFee', groupId, playerId });

      it('gives the last seat to exactly one of many racing creates, and refuses the rest', async () => {
        const groupId = `match-${randomUUID()}`;
        await store.create(fee(groupId), undefined, { seat: { seats: 3 } });
        await store.create(fee(groupId), undefined, { seat: { seats: 3 } });
        const racing = await Promise.allSettled(
          Array.from({ length: 8 }, () =>
            store.create(fee(groupId), undefined, { seat: { seats: 3 } }),
          ),
        );
        const won = racing.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1);
        for (const lost of racing.filter((r) => r.status === 'rejected')) {
          assert.ok(lost.reason instanceof LimitExceededError);
          assertIncludes(lost.reason, { limit: 'seats', max: 3 });
        }
        // Nothing of a refused create was written.
        assert.equal((await store.byGroup(groupId)).length, 3);
      });

      it('gives a seat back when its holder ends expired or failed, never when it is paid', async () => {
        const groupId = `match-${randomUUID()}`;
        const a = await store.create(fee(groupId), undefined, { seat: { seats: 2 } });
        const b = await store.create(fee(groupId), undefined, { seat: { seats: 2 } });
        await rejection(
          store.create(fee(groupId), undefined, { seat: { seats: 2 } }),
          LimitExceededError,
        );
        await store.transition(a.id, 'creating', 'pending');
        await store.transition(a.id, 'pending', 'completed');
        await rejection(
          store.create(fee(groupId), undefined, { seat: { seats: 2 } }),
          LimitExceededError,
        );
        await store.transition(b.id, 'creating', 'failed');
        const c = await store.create(fee(groupId), undefined, { seat: { seats: 2 } });
        await store.transition(c.id, 'creating', 'pending');
        await store.transition(c.id, 'pending', 'expired');
        const d = await store.create(fee(groupId), undefined, { seat: { seats: 2 } });
        assert.equal((await store.seatHolder(groupId, d.playerId))?.id, d.id);
        assert.equal((await store.seatHolder(groupId, a.playerId))?.status, 'completed');
        assert.equal(await store.seatHolder(groupId, b.playerId), null);
        // Another group's seats are its own.
        await store.create(fee(`match-${randomUUID()}`), undefined, { seat: { seats: 1 } });
      });

      it('keeps one seat per player: a second is refused with the holder, unless it replaces it', async () => {
        const groupId = `match-${randomUUID()}`;
        const playerId = `player-${randomUUID()}`;
        const lost = await store.create(fee(groupId, playerId), undefined, { seat: { seats: 2 } });
        const refused = await rejection(
          store.create(fee(groupId, playerId), undefined, { seat: { seats: 2 } }),
          DuplicateIntentError,
        );
        assertIncludes(refused, { field: 'seat', existingId: lost.id });
        await store.transition(lost.id, 'creating', 'unknown');
        // The replacement takes the lost one's seat, not a second one: the other seat stays free.
        const again = await store.create(fee(groupId, playerId), undefined, {
          seat: { seats: 2, replaces: lost.id },
        });
        assert.equal((await store.seatHolder(groupId, playerId))?.id, again.id);
        const other = await store.create(fee(groupId), undefined, { seat: { seats: 2 } });
        // The replaced one ending gives back nothing: it holds no seat.
        await store.transition(lost.id, 'unknown', 'expired');
        assert.equal((await store.seatHolder(groupId, playerId))?.id, again.id);
        await rejection(
          store.create(fee(groupId), undefined, { seat: { seats: 2 } }),
          LimitExceededError,
        );
        assert.equal((await store.seatHolder(groupId, other.playerId))?.id, other.id);
        // Without a cap, the player's one seat is still kept.
        const free = `match-${randomUUID()}`;
        const first = await store.create(fee(free, playerId), undefined, { seat: {} });
        assertIncludes(
          await rejection(
            store.create(fee(free, playerId), undefined, { seat: {} }),
            DuplicateIntentError,
          ),
          { field: 'seat', existingId: first.id },
        );
      });

      it('refuses a seat for an intent without a group, writing nothing', async () => {
        await rejection(
          store.create(newIntent({ kind: 'entryFee' }), undefined, { seat: { seats: 1 } }),
          InvalidIntentError,
        );
      });
    });

    describe('dueAlso (TransitionOptions)', () => {
      it('makes the other intent due with the move, never later, and only while in its status', async () => {
        const group = await store.create(newIntent({ kind: 'match', nextCheckAt: 50_000 }), 10);
        const fee = await store.create(newIntent({ kind: 'entryFee', groupId: group.id }), 10);
        await store.transition(fee.id, 'creating', 'pending', {
          dueAlso: { id: group.id, status: 'creating', at: 60_000 },
        });
        // Later than it was: left alone.
        assert.equal((await store.get(group.id))?.nextCheckAt, 50_000);
        const moved = await store.transition(fee.id, 'pending', 'completed', {
          now: 20_000,
          dueAlso: { id: group.id, status: 'creating', at: 20_000 },
        });
        assert.equal(moved?.status, 'completed');
        const touched = await store.get(group.id);
        assertIncludes(touched, { nextCheckAt: 20_000, status: 'creating', updatedAt: 10 });
        const claimed = await store.claimDue(20_000, 10, 'me', 1_000);
        assert.deepEqual(
          claimed.map((i) => i.id),
          [group.id],
        );
      });

      it('touches nothing when the move is not made or the other intent moved on', async () => {
        const group = await store.create(newIntent({ kind: 'match', nextCheckAt: 50_000 }), 10);
        const fee = await store.create(newIntent({ kind: 'entryFee', groupId: group.id }), 10);
        const due = { id: group.id, status: 'creating' as const, at: 20_000 };
        assert.equal(
          await store.transition(fee.id, 'pending', 'completed', { dueAlso: due }),
          null,
        );
        assert.equal((await store.get(group.id))?.nextCheckAt, 50_000);
        await store.transition(group.id, 'creating', 'pending', { patch: { nextCheckAt: 70_000 } });
        await store.transition(fee.id, 'creating', 'pending', { dueAlso: due });
        assertIncludes(await store.get(group.id), { status: 'pending', nextCheckAt: 70_000 });
      });
    });

    describe('close', () => {
      it('refuses every call after close, and closing twice is harmless', async () => {
        const intent = await store.create(newIntent());
        await store.close();
        await store.close();
        const calls: Promise<unknown>[] = [
          store.create(newIntent()),
          store.get(intent.id),
          store.byCallbackToken(intent.callbackToken as string),
          store.byRemoteId('reward', 'x'),
          store.openByRoom(intent.roomId as string),
          store.openByPlayer(intent.playerId),
          store.transition(intent.id, 'creating', 'pending'),
          store.update(intent.id, 'creating', { checks: 1 }),
          store.claimDue(0, 1, 'w', 1),
          store.release(intent.id, 'w'),
          store.open(),
          store.unknowns(),
          store.advanceChecks(0),
          store.journal(),
          store.balances(),
          store.recordEvent(`ramp:${randomUUID()}`),
          store.recordOperatorAction(operatorLine()),
          store.recordBlock(operatorLine({ action: 'block' })),
          store.isBlocked('p'),
          store.operatorLog(),
          store.takeToken({ perSecond: 1, burst: 1 }, 0),
          store.holdCalls(0),
        ];
        for (const call of calls) {
          const err = await rejection(call, LedgerClosedError);
          assert.equal(err.code, 'LN_LEDGER_CLOSED');
        }
      });
    });
  });
}
