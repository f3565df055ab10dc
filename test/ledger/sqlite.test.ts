/**
 * SqliteLedger: what only a file ledger promises (the shared contract on each medium is in
 * sqlite-contract-*.test.ts): it survives a restart, and several instances or processes on one file never both
 * win a move or a lease. The cross-process tests spawn two Node processes (about a second).
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../src/clock.js';
import {
  DuplicateIntentError,
  IllegalTransitionError,
  IncompatibleLedgerError,
  type Intent,
  InvalidIntentError,
  LedgerBusyError,
  LedgerUnavailableError,
  SqliteLedger,
} from '../../src/ledger/index.js';
import { LAYOUT } from '../../src/ledger/sqlite-schema.js';
import { nodeArgs } from '../support/node-child.js';
import {
  assertIncludes,
  assertMembers,
  describeSharedStorage,
  newIntent,
  rejection,
} from './contract.js';

/** The IncompatibleLedgerError that `make` throws. */
function rejectionSync(make: () => unknown): IncompatibleLedgerError {
  try {
    make();
  } catch (err) {
    assert.ok(err instanceof IncompatibleLedgerError, String(err));
    assert.equal(err.code, 'LN_LEDGER_INCOMPATIBLE');
    return err;
  }
  assert.fail('expected IncompatibleLedgerError');
}

async function tempDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ledger-test-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

// The contract on each mode the store ships: sqlite-contract-*.test.ts (one file per medium, so
// that the suite's parallel workers share them).

// What every shared store shows, on a file two instances (two worker threads) open.
describe('SqliteLedger: instances sharing a file', () => {
  const made: SqliteLedger[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    await Promise.all(made.splice(0).map((l) => l.close()));
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  describeSharedStorage(
    'two instances, one file',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'ledger-test-'));
      dirs.push(dir);
      return () => {
        const store = new SqliteLedger(join(dir, 'ledger.sqlite'));
        made.push(store);
        return store;
      };
    },
    { rounds: 20, sharesRate: false },
  );
});

describe('SqliteLedger', () => {
  let dir: string;
  let remove: () => Promise<void>;
  let file: string;
  const open: SqliteLedger[] = [];

  function ledger(options: { clock?: ManualClock; worker?: boolean } = {}): SqliteLedger {
    const instance = new SqliteLedger({ path: file, ...options });
    open.push(instance);
    return instance;
  }

  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    file = join(dir, 'ledger.sqlite');
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close()));
    await remove();
  });

  /** n intents in `pending`, each due at `nextCheckAt`. */
  async function pendingIntents(
    store: SqliteLedger,
    n: number,
    nextCheckAt = 1,
  ): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const created = await store.create(newIntent({ nextCheckAt }), 1);
      await store.transition(created.id, 'creating', 'pending', { now: 2 });
      ids.push(created.id);
    }
    return ids;
  }

  it('accepts a path string, an options object, or nothing (memory)', async () => {
    const byString = new SqliteLedger(file);
    const created = await byString.create(newIntent());
    await byString.close();
    const byOptions = ledger();
    assert.deepEqual(await byOptions.get(created.id), created);
    const memory = new SqliteLedger();
    assert.equal(memory.path, ':memory:');
    assert.equal(await memory.get(created.id), null);
    await memory.close();
  });

  it('uses the clock option when a call gives no time', async () => {
    const clock = new ManualClock(1_000);
    const store = ledger({ clock });
    const created = await store.create(newIntent());
    clock.advance(1_000);
    const moved = await store.transition(created.id, 'creating', 'pending');
    assert.equal(created.createdAt, 1_000);
    assert.equal(moved?.updatedAt, 2_000);
    assert.equal(moved?.history.at(-1)?.at, 2_000);
  });

  it('keeps every field of every intent across close and reopen', async () => {
    const first = ledger();
    const a = await first.create(
      newIntent({
        amount: '123456789012345678901',
        idempotencyKey: '0b7c3f5e-0000-4000-8000-000000000001',
        expiresAt: 1_700_000_000_000,
        nextCheckAt: 1_700_000_060_000,
        meta: { slots: { before: 3 }, tags: ['a', 'b'], ratio: 0.5, none: null },
      }),
      1_000,
    );
    await first.transition(a.id, 'creating', 'pending', {
      patch: { remoteId: 'wr-9', code: 'LNURL1XYZ', uri: 'lightning:LNURL1XYZ', checks: 2 },
      note: 'created',
      now: 2_000,
    });
    await first.claimDue(1_700_000_060_000, 1, 'worker-1', 30_000);
    const b = await first.create(newIntent({ kind: 'entryFee', roomId: null }), 3_000);
    await first.transition(b.id, 'creating', 'unknown', {
      patch: { error: 'timeout' },
      now: 4_000,
    });
    await first.transition(b.id, 'unknown', 'failed', { note: 'operator', now: 5_000 });
    const before = [await first.get(a.id), await first.get(b.id)];
    await first.close();

    const second = ledger();
    const after = [await second.get(a.id), await second.get(b.id)];
    assert.deepEqual(after, before);
    assert.equal(after[0]?.amount, '123456789012345678901');
    assert.equal(after[0]?.leaseOwner, 'worker-1');
    assert.deepEqual(
      after[1]?.history.map((h) => h.to),
      ['creating', 'unknown', 'failed'],
    );
    assert.deepEqual(await second.byCallbackToken(a.callbackToken as string), before[0]);
    assert.deepEqual(await second.byRemoteId('reward', 'wr-9'), before[0]);
  });

  it('keeps ids, remote ids and tokens in any spelling as given, UUIDs and tokens as bytes', async () => {
    const store = ledger();
    const lower = '0190f5a2-7c3e-7d4b-9a1f-2b3c4d5e6f70';
    for (const id of [lower, lower.toUpperCase(), `${lower}-x`, 'plain']) {
      const created = await store.create(newIntent({ id }));
      const moved = await store.transition(id, 'creating', 'pending', { patch: { remoteId: id } });
      assertIncludes(moved, { id, remoteId: id });
      assert.deepEqual(await store.get(id), moved);
      assert.deepEqual(await store.byRemoteId(created.kind, id), moved);
    }
    await rejection(store.create(newIntent({ id: lower })), DuplicateIntentError);
    for (const callbackToken of ['xgrkioTcbCGb4MHs3K-qWDE5haT90LEJ', 'hREE4C1VLHrANh0E6LXX_Q']) {
      const created = await store.create(newIntent({ callbackToken }));
      assert.equal(created.callbackToken, callbackToken);
      assert.deepEqual(await store.byCallbackToken(callbackToken), created);
      await rejection(store.create(newIntent({ callbackToken })), DuplicateIntentError);
    }
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      assert.deepEqual(
        db
          .prepare('SELECT typeof(id) AS t FROM intents ORDER BY seq')
          .all()
          .map((r) => r.t)
          .slice(0, 4),
        ['blob', 'text', 'text', 'text'],
      );
      assert.deepEqual(
        db
          .prepare('SELECT typeof(callback_token) AS t FROM intents ORDER BY seq')
          .all()
          .map((r) => r.t)
          .slice(4),
        ['blob', 'text'],
      );
    } finally {
      db.close();
    }
  });

  it("stores the file in WAL mode with every index in place, the budgets' once budgets are used", async () => {
    const store = ledger();
    await store.create(newIntent());
    const db = new DatabaseSync(file, { readOnly: true });
    const indexes = () =>
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'intents'")
        .all()
        .map((r) => r.name as string);
    const payout = ['intents_payout_player', 'intents_payout_room', 'intents_payout_time'];
    try {
      assertIncludes(db.prepare('PRAGMA journal_mode').get(), { journal_mode: 'wal' });
      assertMembers(indexes(), [
        'intents_callback_token',
        'intents_remote',
        'intents_open_room',
        'intents_open_player',
        'intents_due',
        'intents_open_key',
        'intents_player',
      ]);
      // A game without budgets keeps no budget index; the first create that checks one builds it.
      assert.deepEqual(
        indexes().filter((n) => payout.includes(n)),
        [],
      );
      const windows = (['player', 'room', 'game'] as const).map((scope) => ({
        scope,
        limitMsat: 1_000_000,
        windowMs: 60_000,
      }));
      await store.create(newIntent({ kind: 'reward' }), Date.now(), { budgets: windows });
      assertMembers(indexes(), payout);
      const plan = db
        .prepare(
          "EXPLAIN QUERY PLAN SELECT sum(amount) FROM intents WHERE player_id = 'p' AND kind IN ('reward', 'payment', 'withdrawal') AND created_at > 0",
        )
        .all()
        .map((r) => String(r.detail))
        .join(' ');
      assert.match(plan, /intents_payout_player/);
      const amount = db.prepare('SELECT typeof(amount) AS t FROM intents').get();
      assertIncludes(amount, { t: 'text' });
    } finally {
      db.close();
    }
  });

  for (const worker of [false, true]) {
    it(`refuses a posting that would take a balance past 2^63 - 1, writing nothing (${worker ? 'worker' : 'inline'})`, async () => {
      const store = ledger({ worker });
      const max = String(2n ** 63n - 1n);
      const posting = { debit: 'wallet', credit: 'house:fees', unit: 'msats', why: '' };
      const intent = await store.create(newIntent(), 1, undefined, [
        { ...posting, tag: 'a', amount: max },
      ]);
      await rejection(
        store.update(intent.id, 'creating', { checks: 1 }, 2, [
          { ...posting, tag: 'b', amount: '1' },
        ]),
        InvalidIntentError,
      );
      assert.deepEqual(await store.get(intent.id), intent);
      assert.equal((await store.journal()).entries.length, 1);
      assert.deepEqual(await store.balances(['house:fees']), [
        { account: 'house:fees', unit: 'msats', balance: max },
      ]);
    });
  }

  it('keeps its operator log append-only in the file itself, whoever writes it', async () => {
    const store = ledger();
    const line = await store.recordOperatorAction({
      by: 'alice',
      action: 'pause',
      intentId: null,
      playerId: null,
      before: 'running',
      after: 'paused',
      note: 'maintenance',
    });
    await store.close();
    const db = new DatabaseSync(file);
    try {
      assert.throws(() => db.exec("UPDATE operator_log SET by = 'mallory'"), /append-only/);
      assert.throws(() => db.exec('DELETE FROM operator_log'), /append-only/);
      assertIncludes(db.prepare('SELECT seq, by FROM operator_log').get(), {
        seq: line.seq,
        by: 'alice',
      });
    } finally {
      db.close();
    }
  });

  it("refuses a file of a newer layout, a pre-release one and another program's, changing nothing", async () => {
    await ledger().close();
    const db = new DatabaseSync(file);
    db.exec(`PRAGMA user_version = ${LAYOUT + 1}`);
    db.close();
    for (const worker of [false, true]) {
      const err = rejectionSync(() => new SqliteLedger({ path: file, worker }));
      assert.match(
        err.message,
        new RegExp(`layout ${LAYOUT + 1}; this library reads up to layout ${LAYOUT}`),
      );
    }
    // A pre-release library's files: their own schema numbers, and no mark of a ledger.
    for (const version of [1, 2, 10]) {
      const old = join(dir, `pre-release-${version}.sqlite`);
      const pre = new DatabaseSync(old);
      pre.exec(`CREATE TABLE intents (seq INTEGER PRIMARY KEY); PRAGMA user_version = ${version}`);
      pre.close();
      const err = rejectionSync(() => new SqliteLedger(old));
      assert.match(
        err.message,
        new RegExp(`pre-release colyseus-lightning \\(schema ${version}\\)`),
      );
      const after = new DatabaseSync(old, { readOnly: true });
      try {
        assertIncludes(after.prepare('PRAGMA user_version').get(), { user_version: version });
        assert.deepEqual(
          after
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .all()
            .map((r) => r.name),
          ['intents'],
        );
      } finally {
        after.close();
      }
    }
    const foreign = join(dir, 'foreign.sqlite');
    const other = new DatabaseSync(foreign);
    other.exec('PRAGMA application_id = 42');
    other.close();
    assert.match(
      rejectionSync(() => new SqliteLedger(foreign)).message,
      /not a colyseus-lightning ledger/,
    );
  });

  // The worker thread waits in SQLite's busy handler; inline, the store retries on a timer.
  for (const [mode, worker] of [
    ['worker thread', true],
    ['inline', false],
  ] as const) {
    it(`reports a write lock held too long as LedgerBusyError, writes nothing, and recovers (${mode})`, async () => {
      const store = new SqliteLedger({ path: file, busyTimeoutMs: 50, worker });
      open.push(store);
      const created = await store.create(newIntent());
      const other = new DatabaseSync(file);
      other.exec('BEGIN IMMEDIATE');
      try {
        const err = await rejection(
          store.transition(created.id, 'creating', 'pending'),
          LedgerBusyError,
        );
        assert.equal(err.code, 'LN_LEDGER_BUSY');
      } finally {
        other.exec('COMMIT');
        other.close();
      }
      assert.deepEqual(await store.get(created.id), created);
      assert.equal((await store.transition(created.id, 'creating', 'pending'))?.status, 'pending');
    });

    it(`waits for a held write lock off the game loop: the loop keeps running meanwhile (${mode})`, async () => {
      // Issue 12, finding 6: node:sqlite waited on the loop for up to busyTimeoutMs (5 s),
      // freezing every room of the process. Here the lock is released by a timer on the same
      // loop, so the write can only succeed if the loop ran while it waited.
      const store = ledger({ worker });
      const created = await store.create(newIntent());
      const other = new DatabaseSync(file);
      other.exec('BEGIN IMMEDIATE');
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 5);
      const started = performance.now();
      setTimeout(() => {
        other.exec('COMMIT');
        other.close();
      }, 150);
      try {
        const moved = await store.transition(created.id, 'creating', 'pending');
        assert.equal(moved?.status, 'pending');
      } finally {
        clearInterval(ticker);
        if (other.isOpen && other.isTransaction) other.exec('COMMIT');
        if (other.isOpen) other.close();
      }
      // The write came after the COMMIT, which only the loop could run: it waited off the loop.
      // How long each attempt holds the loop (LOCK_SPIN_MS) is a latency: not asserted, as a
      // loaded machine delays the loop by as much on its own.
      assert.ok(
        performance.now() - started >= 140,
        'the write went through before the lock was released',
      );
      assert.ok(ticks >= 5, `the loop ran ${ticks} timer ticks while the write waited`);
    });
  }

  it('lets exactly one of two instances on one file win each move (200 intents)', async () => {
    const a = ledger();
    const b = ledger();
    const ids = await pendingIntents(a, 200);
    let winsA = 0;
    let winsB = 0;
    for (const id of ids) {
      const [ra, rb] = await Promise.all([
        a.transition(id, 'pending', 'completed', { note: 'a' }),
        b.transition(id, 'pending', 'completed', { note: 'b' }),
      ]);
      assert.equal([ra, rb].filter((r) => r !== null).length, 1);
      if (ra) winsA++;
      if (rb) winsB++;
      const final = (await b.get(id)) as Intent;
      assert.equal(final.status, 'completed');
      assert.equal(final.history.filter((h) => h.to === 'completed').length, 1);
    }
    assert.equal(winsA + winsB, 200);
  });

  it('never leases one intent to two instances on one file', async () => {
    const a = ledger();
    const b = ledger();
    const ids = await pendingIntents(a, 120);
    const leased = new Map<string, string>();
    for (;;) {
      const [ca, cb] = await Promise.all([
        a.claimDue(100, 7, 'a', 60_000),
        b.claimDue(100, 7, 'b', 60_000),
      ]);
      if (ca.length + cb.length === 0) break;
      for (const intent of [...ca, ...cb]) {
        assert.equal(leased.has(intent.id), false, `${intent.id} leased twice`);
        leased.set(intent.id, intent.leaseOwner as string);
      }
    }
    assert.deepEqual([...leased.keys()].sort(), [...ids].sort());
    assert.deepEqual(new Set(leased.values()), new Set(['a', 'b']));
  });

  it('lets another instance re-claim a lease that has expired, and not before', async () => {
    const a = ledger();
    const b = ledger();
    const [id] = await pendingIntents(a, 1, 100);
    assert.deepEqual(
      (await a.claimDue(100, 1, 'a', 500)).map((i) => i.id),
      [id],
    );
    assert.deepEqual(await b.claimDue(599, 1, 'b', 500), []);
    const [again] = await b.claimDue(600, 1, 'b', 500);
    assertIncludes(again, { id, leaseOwner: 'b', leaseUntil: 1_100 });
    // The first owner's late release must not free the new owner's lease.
    await a.release(id as string, 'a');
    assert.equal((await a.get(id as string))?.leaseOwner, 'b');
  });

  it('changes nothing on an illegal move, seen from another instance', async () => {
    const a = ledger();
    const b = ledger();
    const [id] = await pendingIntents(a, 1);
    const before = await b.get(id as string);
    await rejection(a.transition(id as string, 'pending', 'creating'), IllegalTransitionError);
    assert.deepEqual(await b.get(id as string), before);
  });

  it('orders due intents by nextCheckAt across instances', async () => {
    const a = ledger();
    const b = ledger();
    const times = [500, 100, 400, 200, 300];
    const byTime = new Map<number, string>();
    for (const [i, t] of times.entries()) {
      const writer = i % 2 === 0 ? a : b;
      byTime.set(t, (await pendingIntents(writer, 1, t))[0] as string);
    }
    const claimed = await b.claimDue(1_000, 10, 'b', 60_000);
    assert.deepEqual(
      claimed.map((i) => i.nextCheckAt),
      [100, 200, 300, 400, 500],
    );
    assert.deepEqual(
      claimed.map((i) => i.id),
      [100, 200, 300, 400, 500].map((t) => byTime.get(t)),
    );
  });

  it('rejects calls with LedgerUnavailableError, never hangs, when its thread dies', async () => {
    const store = ledger();
    await store.create(newIntent());
    // What a crash of the thread looks like from here: it is gone, answers and all.
    const { thread } = (
      store as unknown as { driver: { thread: { worker: { terminate(): Promise<number> } } } }
    ).driver;
    const inFlight = store.create(newIntent()).then(
      () => 'answered',
      (err: unknown) => err,
    );
    await thread.worker.terminate();
    // The call in flight may have been answered before the end, or not: it settles either way.
    const outcome = await inFlight;
    assert.ok(outcome === 'answered' || outcome instanceof LedgerUnavailableError, String(outcome));
    await rejection(store.get('anything'), LedgerUnavailableError);
  });

  it('lets a process that never closes its file ledger get its answers, then exit', async function () {
    this.timeout(20_000);
    const script = fileURLToPath(new URL('./fixtures/left-open.ts', import.meta.url));
    const child = spawn(process.execPath, [...(await nodeArgs(script)), file], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const next = lineReader(child as ChildProcess & { stdout: Readable });
    try {
      assert.equal(await next(), 'pending');
      await exited(child);
    } finally {
      if (child.exitCode === null) child.kill();
    }
  });

  describe('two processes on one file', function () {
    this.timeout(60_000);
    const worker = fileURLToPath(new URL('./fixtures/race-worker.ts', import.meta.url));

    /** Starts one worker process per name, waits until all are ready, then starts them together. */
    async function race(mode: 'transition' | 'claim', ids: string[]): Promise<string[][]> {
      const args = await nodeArgs(worker);
      const children = ['p1', 'p2'].map((name) =>
        spawn(process.execPath, [...args, file, mode, name], {
          cwd: fileURLToPath(new URL('../..', import.meta.url)),
          stdio: ['pipe', 'pipe', 'inherit'],
        }),
      );
      try {
        const outputs = children.map((child) => lineReader(child));
        for (const next of outputs) assert.equal(await next(), 'ready');
        const start = JSON.stringify({ ids, startAt: Date.now() + 200 });
        for (const child of children) child.stdin.write(`${start}\n`);
        const results = await Promise.all(outputs.map(async (next) => JSON.parse(await next())));
        await Promise.all(children.map((c) => exited(c)));
        return results as string[][];
      } finally {
        // A failed assertion or a mocha timeout must not leave workers running.
        for (const child of children) if (child.exitCode === null) child.kill();
      }
    }

    it('lets exactly one process win each move', async () => {
      const ids = await pendingIntents(ledger(), 200);
      const [p1, p2] = await race('transition', ids);
      const all = [...(p1 ?? []), ...(p2 ?? [])];
      assert.deepEqual(all.sort(), [...ids].sort());
      const reader = ledger();
      for (const id of ids) {
        const final = (await reader.get(id)) as Intent;
        assert.equal(final.status, 'completed');
        assert.equal(final.history.filter((h) => h.to === 'completed').length, 1);
      }
    });

    it('never leases one intent to both processes', async () => {
      const ids = await pendingIntents(ledger(), 200);
      const [p1, p2] = await race('claim', ids);
      const all = [...(p1 ?? []), ...(p2 ?? [])];
      assert.equal(new Set(all).size, all.length, 'an intent was leased twice');
      assert.deepEqual(all.sort(), [...ids].sort());
    });
  });
});

function lineReader(child: ChildProcess & { stdout: Readable }): () => Promise<string> {
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error('worker exited without answering');
    return value;
  };
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) {
      if (child.exitCode === 0) resolve();
      else reject(new Error(`worker exited with ${child.exitCode}`));
      return;
    }
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`worker exited with ${code}`)),
    );
  });
}
