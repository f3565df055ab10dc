/**
 * Benchmark 2, callback to screen: from the moment the service's callback POST leaves to the
 * moment the owner's @colyseus/sdk client holds the new status, through the whole path: token
 * lookup, re-read of the withdrawal request, ledger move, presence publish, the room plugin's
 * ledger read and state update, the next patch, the client's decode. The limit is the room's
 * patch interval: a change waits for the next patch, on average half an interval.
 *
 * The emulator (callbacks dropped) and one game server per patch rate run in child
 * processes; this process holds the SDK client and POSTs the callbacks, so both ends of each
 * measurement are read from one clock. Settlements are sent one at a time, each after a
 * random pause shorter than the patch interval so that they land at every phase of the patch
 * cycle; the patch rates are measured in interleaved rounds, each with and without the room
 * plugin's `immediatePush` (a settlement's patch sent at once rather than at the next tick).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as Sdk, type Room as SdkRoom } from '@colyseus/sdk';
import { request } from 'undici';
import { type CallbackItem, callbackPost } from './support/callback.js';
import { type Child, startChild } from './support/child.js';
import { percentile } from './support/stats.js';
import { ms, type Row, ratio } from './support/table.js';

export interface ScreenBenchOptions {
  /** Settlements per patch rate. */
  settlements?: number;
  patchRates?: number[];
  rounds?: number;
}

interface Item extends CallbackItem {
  id: string;
}

interface Target {
  url: string;
  patchRate: number;
  immediatePush: boolean;
  child: Child<{ url: string; roomIds: string[] }>;
  room: SdkRoom;
  total: number[];
  verify: number[];
}

type Rewards = { get(id: string): { status: string } | undefined; size: number } | undefined;
const rewardsOf = (room: SdkRoom) =>
  (room.state as { lightning?: { rewards?: Rewards } } | undefined)?.lightning?.rewards;

/** Resolves once `check` holds after some state change of `room` (or already holds). */
function until(room: SdkRoom, check: () => boolean, what: string, ms = 10_000): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      room.onStateChange.remove(listener);
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
    const listener = () => {
      if (!check()) return;
      clearTimeout(timer);
      room.onStateChange.remove(listener);
      resolve();
    };
    room.onStateChange(listener);
  });
}

async function settleOne(target: Target, item: Item): Promise<void> {
  await sleep(Math.random() * target.patchRate);
  const seen = until(
    target.room,
    () => rewardsOf(target.room)?.get(item.id)?.status === 'completed',
    `completed ${item.id}`,
  );
  const started = performance.now();
  const { path, ...post } = callbackPost(item);
  const res = await request(`${target.url}${path}`, post);
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`callback answered ${res.statusCode}`);
  target.verify.push(performance.now() - started);
  await seen;
  target.total.push(performance.now() - started);
}

export async function benchScreen(options: ScreenBenchOptions = {}): Promise<Row[]> {
  const settlements = options.settlements ?? 200;
  const patchRates = options.patchRates ?? [50, 16];
  // A round creates at most 20 entries: the ledger refuses a 21st open intent per player.
  const rounds = options.rounds ?? 10;
  const emulator = await startChild<{ url: string; apiKey: string }>(
    new URL('./children/emulator.ts', import.meta.url),
    ['--drop-callbacks'],
  );
  const targets: Target[] = [];
  try {
    for (const [patchRate, immediatePush] of patchRates.flatMap((r) => [
      [r, false] as const,
      [r, true] as const,
    ])) {
      const child = await startChild<{ url: string; roomIds: string[] }>(
        new URL('./children/game-server.ts', import.meta.url),
        [
          emulator.info.url,
          emulator.info.apiKey,
          '--rooms',
          '1',
          '--patch-rate',
          String(patchRate),
          ...(immediatePush ? ['--immediate-push'] : []),
        ],
      );
      const sdk = new Sdk(child.info.url.replace(/^http/, 'ws'));
      const room = await sdk.joinById(child.info.roomIds[0] as string, { playerId: 'owner' });
      targets.push({
        url: child.info.url,
        patchRate,
        immediatePush,
        child,
        room,
        total: [],
        verify: [],
      });
    }
    // A player holds a few dozen entries at most: each round creates its own, the owner waits
    // until they are all on screen, the wallet claims them, and the callbacks go one by one.
    const perRound = Math.ceil(settlements / rounds);
    const prepare = async (target: Target, n: number) => {
      const { items } = await target.child.ask<{ items: Item[] }>({
        cmd: 'create',
        n,
        concurrency: 8,
        player: 'owner',
      });
      await until(
        target.room,
        () => items.every((i) => rewardsOf(target.room)?.get(i.id) !== undefined),
        'the owner to hold every new entry',
      );
      const claim = await emulator.ask<{ failed: number }>({
        cmd: 'claim',
        ids: items.map((i) => i.remoteId),
      });
      if (claim.failed > 0) throw new Error(`${claim.failed} claims failed`);
      return items;
    };
    for (const target of targets) {
      for (const item of await prepare(target, 10)) await settleOne(target, item); // warm-up
      target.total = [];
      target.verify = [];
    }
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const n = Math.min(perRound, settlements - round * perRound);
        for (const item of await prepare(target, n)) await settleOne(target, item);
      }
    }
    return targets.flatMap((t): Row[] => {
      const p50 = percentile(t.total, 0.5);
      const p99 = percentile(t.total, 0.99);
      return [
        {
          bench: '2 screen',
          subject: `callback to owner's screen, patchRate ${t.patchRate} ms${t.immediatePush ? ', immediatePush' : ''}`,
          value: `p50 ${ms(p50, 1)}`,
          detail: `p99 ${ms(p99, 1)}; callback answered (verified) p50 ${ms(percentile(t.verify, 0.5), 1)}, p99 ${ms(percentile(t.verify, 0.99), 1)}`,
          limit: `${t.patchRate} ms patch interval`,
          ratio: ratio(p99 / t.patchRate),
          goal: {
            text: `p99 <= ${t.immediatePush ? '0.3' : '1.0'} of the interval`,
            met: p99 / t.patchRate <= (t.immediatePush ? 0.3 : 1.0),
          },
          note: `${t.total.length} settlements; ratio p99 / interval`,
        },
      ];
    });
  } finally {
    for (const t of targets) {
      await t.room.leave().catch(() => {});
      await t.child.stop();
    }
    await emulator.stop();
  }
}
