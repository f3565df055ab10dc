/** The LedgerStore contract, the operator log: run on every store (contract.ts). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { InvalidIntentError, type LedgerStore } from '../../../src/ledger/index.js';

import type { NewOperatorAction, OperatorAction } from '../../../src/ledger/operator-log.js';

import { eachStore, type LedgerFactory, operatorLine, rejection } from './support.js';

export function describeOperatorLogContract(factory: LedgerFactory): void {
  describe('the operator log', () => {
    let store: LedgerStore;
    eachStore(factory, (made) => {
      store = made;
    });

    describe('operator log and blocks', () => {
      it("pauses and resumes the game's payouts as a compare-and-set, each with its line", async () => {
        const pause = (action: 'pause' | 'resume', by = 'ann') =>
          operatorLine({
            by,
            action,
            intentId: null,
            playerId: null,
            before: action === 'pause' ? 'running' : 'paused (operator)',
            after: action === 'pause' ? 'paused' : 'running',
            note: action === 'pause' ? 'wallet top-up' : '',
          });
        assert.equal(await store.payoutPause(), null);
        const paused = await store.recordPause(pause('pause'), 1_000);
        assert.deepEqual(paused, { ...pause('pause'), seq: paused?.seq, at: 1_000 });
        assert.deepEqual(await store.payoutPause(), paused);
        // Already paused: nothing written, whoever asks.
        assert.equal(await store.recordPause(pause('pause', 'bo'), 1_100), null);
        const racing = await Promise.all([
          store.recordPause(pause('resume', 'ann'), 1_200),
          store.recordPause(pause('resume', 'bo'), 1_200),
        ]);
        assert.equal(racing.filter((line) => line !== null).length, 1, 'one resume wins');
        assert.equal(await store.payoutPause(), null);
        assert.equal(await store.recordPause(pause('resume'), 1_300), null);
        const again = await store.recordPause(pause('pause', 'bo'), 1_400);
        assert.equal((await store.payoutPause())?.seq, again?.seq);
        assert.deepEqual(
          (await store.operatorLog()).actions.map((l) => [l.action, l.by]),
          [
            ['pause', 'ann'],
            ['resume', racing.find((l) => l !== null)?.by],
            ['pause', 'bo'],
          ],
        );
        await rejection(
          store.recordPause(operatorLine({ action: 'block', playerId: 'p' })),
          InvalidIntentError,
        );
        await rejection(
          store.recordPause({ ...pause('pause'), playerId: 'someone' }),
          InvalidIntentError,
        );
      });

      it('appends a line with its seq and time, and lists it with everything it was given', async () => {
        const line = operatorLine();
        const recorded = await store.recordOperatorAction(line, 5_000);
        assert.deepEqual(recorded, { ...line, seq: recorded.seq, at: 5_000 });
        assert.ok(Number.isSafeInteger(recorded.seq) && recorded.seq > 0);
        const page = await store.operatorLog();
        assert.deepEqual(page, { actions: [recorded], next: null });
        // Nulls stay nulls, an empty note stays empty.
        const pause = await store.recordOperatorAction(
          operatorLine({
            action: 'pause',
            intentId: null,
            playerId: null,
            before: 'running',
            after: 'paused',
            note: '',
          }),
          6_000,
        );
        assert.ok(pause.seq > recorded.seq);
        assert.deepEqual((await store.operatorLog()).actions, [recorded, pause]);
      });

      it('filters by intent, player and time, and pages oldest first without skipping or repeating', async () => {
        const intentId = `intent-${randomUUID()}`;
        const playerId = `player-${randomUUID()}`;
        // Lines before them: their seqs run past 9, where text order is not number order.
        const before: OperatorAction[] = [];
        for (let i = 0; i < 8; i++)
          before.push(await store.recordOperatorAction(operatorLine(), 500));
        const lines: OperatorAction[] = [];
        for (let i = 0; i < 7; i++) {
          lines.push(
            await store.recordOperatorAction(
              operatorLine({
                ...(i % 2 === 0 ? { intentId } : {}),
                ...(i % 3 === 0 ? { playerId } : {}),
                note: `n${i}`,
              }),
              1_000 + i,
            ),
          );
        }
        const seqs = (actions: OperatorAction[]) => actions.map((a) => a.seq);
        const ofIntent = await store.operatorLog({ intentId });
        assert.deepEqual(seqs(ofIntent.actions), seqs(lines.filter((_, i) => i % 2 === 0)));
        const ofPlayer = await store.operatorLog({ playerId });
        assert.deepEqual(seqs(ofPlayer.actions), seqs(lines.filter((_, i) => i % 3 === 0)));
        const both = await store.operatorLog({ intentId, playerId, since: 1_001 });
        assert.deepEqual(seqs(both.actions), [lines[6]?.seq]);
        const recent = await store.operatorLog({ since: 1_005 });
        assert.deepEqual(seqs(recent.actions), seqs(lines.slice(5)));
        const listed: OperatorAction[] = [];
        let page = await store.operatorLog({ limit: 3 });
        listed.push(...page.actions);
        while (page.next !== null) {
          page = await store.operatorLog({ limit: 3, after: page.next });
          listed.push(...page.actions);
        }
        assert.deepEqual(listed, [...before, ...lines]);
        assert.deepEqual(await store.operatorLog({ playerId: `player-${randomUUID()}` }), {
          actions: [],
          next: null,
        });
      });

      it('pages without skipping a line while appends race the reader', async () => {
        const playerId = `player-${randomUUID()}`;
        const seen: number[] = [];
        let after: string | undefined;
        const read = async () => {
          const page = await store.operatorLog({ playerId, limit: 2, ...(after ? { after } : {}) });
          seen.push(...page.actions.map((a) => a.seq));
          if (page.actions.length > 0) after = String(page.actions.at(-1)?.seq);
        };
        const appends = Array.from({ length: 30 }, (_, i) =>
          store.recordOperatorAction(operatorLine({ playerId, note: `race ${i}` })),
        );
        const readers = (async () => {
          for (let i = 0; i < 10; i++) await read();
        })();
        const written = await Promise.all(appends);
        await readers;
        // Drain what is left: every line once, in seq order.
        for (;;) {
          const before = seen.length;
          await read();
          if (seen.length === before) break;
        }
        const all = written.map((w) => w.seq).sort((a, b) => a - b);
        assert.equal(new Set(all).size, 30);
        assert.deepEqual(seen, all);
      });

      it('refuses a line that is not one, and a bad query, writing nothing', async () => {
        const bad: Partial<NewOperatorAction>[] = [
          { by: '' },
          { by: '   ' },
          { by: 'x'.repeat(256) },
          { action: 'delete' as NewOperatorAction['action'] },
          { action: 'resolve', intentId: null },
          { action: 'block', playerId: null },
          { before: '' },
          { note: 'x'.repeat(1001) },
        ];
        for (const overrides of bad) {
          await rejection(store.recordOperatorAction(operatorLine(overrides)), InvalidIntentError);
        }
        await rejection(
          store.recordOperatorAction({ ...operatorLine(), extra: 1 } as NewOperatorAction),
          InvalidIntentError,
        );
        await rejection(store.recordOperatorAction(operatorLine(), -1), InvalidIntentError);
        // A block goes through recordBlock, and recordBlock takes nothing else.
        await rejection(store.recordBlock(operatorLine()), InvalidIntentError);
        for (const query of [
          { limit: 0 },
          { limit: 1001 },
          { after: 'x' },
          { since: -1 },
          { playerId: '' },
        ]) {
          await rejection(store.operatorLog(query), InvalidIntentError);
        }
        await rejection(store.isBlocked(''), InvalidIntentError);
        assert.deepEqual(await store.operatorLog(), { actions: [], next: null });
      });

      it('blocks and unblocks a player as a compare-and-set, one line per change', async () => {
        const playerId = `player-${randomUUID()}`;
        const other = `player-${randomUUID()}`;
        const block = operatorLine({
          action: 'block',
          intentId: null,
          playerId,
          before: 'unblocked',
          after: 'blocked',
          note: 'chargebacks',
        });
        assert.equal(await store.isBlocked(playerId), false);
        const blocked = await store.recordBlock(block, 10);
        assert.deepEqual(blocked, { ...block, seq: blocked?.seq, at: 10 });
        assert.equal(await store.isBlocked(playerId), true);
        assert.equal(await store.isBlocked(other), false);
        // Already blocked: nothing written.
        assert.equal(await store.recordBlock(block, 11), null);
        const unblock = {
          ...block,
          action: 'unblock' as const,
          before: 'blocked',
          after: 'unblocked',
          note: '',
        };
        const lifted = await store.recordBlock(unblock, 12);
        assert.equal(lifted?.action, 'unblock');
        assert.equal(await store.isBlocked(playerId), false);
        assert.equal(await store.recordBlock(unblock, 13), null);
        const lines = (await store.operatorLog({ playerId })).actions;
        assert.deepEqual(
          lines.map((l) => [l.action, l.at]),
          [
            ['block', 10],
            ['unblock', 12],
          ],
        );
      });

      it('lets exactly one of many racing blocks of one player win', async () => {
        const playerId = `player-${randomUUID()}`;
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.recordBlock(
              operatorLine({ action: 'block', intentId: null, playerId, by: `op${i}` }),
            ),
          ),
        );
        assert.equal(results.filter((r) => r !== null).length, 1);
        assert.equal((await store.operatorLog({ playerId })).actions.length, 1);
        assert.equal(await store.isBlocked(playerId), true);
      });

      it('offers no call that changes or removes a line', () => {
        const calls: string[] = [];
        for (
          let p = Object.getPrototypeOf(store);
          p !== Object.prototype;
          p = Object.getPrototypeOf(p)
        ) {
          calls.push(...Object.getOwnPropertyNames(p));
        }
        const touching = calls.filter((c) => /operator|oplog/i.test(c));
        assert.deepEqual(touching.sort(), ['operatorLog', 'recordOperatorAction']);
      });
    });
  });
}
