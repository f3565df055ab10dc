/**
 * Benchmark 4, across processes: how much later a settlement reaches a room hosted by another
 * process through RedisPresence than a room in the same process through LocalPresence.
 * Settlement messages (the shape of server/settlement.ts) are published one per millisecond
 * to one of 1,000 room channels; the delay is from `publish` to the subscriber's callback,
 * on CLOCK_MONOTONIC (`process.hrtime`), which every process on the machine shares.
 * Subjects, in interleaved rounds: LocalPresence in one process (the limit), RedisPresence
 * with publisher and subscriber in one process (the Redis round trip alone), and RedisPresence
 * to a subscriber in a child process (a room on another server).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalPresence, type Presence } from '@colyseus/core';
import { RedisPresence } from '@colyseus/redis-presence';
import { roomChannel } from '../src/server/settlement.js';
import { startRedis } from '../test/support/redis.js';
import { startChild } from './support/child.js';
import { median, percentile, rotate } from './support/stats.js';
import { ms, type Row } from './support/table.js';

export interface PresenceBenchOptions {
  rooms?: number;
  messages?: number;
  rounds?: number;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

interface Subject {
  name: string;
  /** Publishes `n` messages, one per millisecond; resolves with the delays (ms) observed. */
  run(n: number): Promise<number[]>;
}

async function publishPaced(
  presence: Presence,
  prefix: string,
  rooms: number,
  n: number,
): Promise<void> {
  for (let i = 0; i < n; i++) {
    await presence.publish(roomChannel(`${prefix}${i % rooms}`), {
      id: `intent-${i}`,
      kind: 'reward',
      status: 'completed',
      playerId: `player-${i}`,
      updatedAt: Date.now(),
      sentAt: now(),
    });
    await sleep(1);
  }
}

// Each subject has its own channels: one Redis carries both Redis subjects.
async function inProcess(presence: Presence, prefix: string, rooms: number) {
  let delays: number[] = [];
  for (let i = 0; i < rooms; i++) {
    await presence.subscribe(roomChannel(`${prefix}${i}`), (message: { sentAt: number }) => {
      delays.push(now() - message.sentAt);
    });
  }
  return async (publisher: Presence, n: number) => {
    await publishPaced(publisher, prefix, rooms, n);
    await sleep(50); // stragglers
    const out = delays;
    delays = [];
    return out;
  };
}

export async function benchPresence(options: PresenceBenchOptions = {}): Promise<Row[]> {
  const rooms = options.rooms ?? 1_000;
  const messages = options.messages ?? 1_000;
  const rounds = options.rounds ?? 3;
  const redis = await startRedis();
  const local = new LocalPresence();
  const publisher = new RedisPresence(redis.url);
  const subscriber = new RedisPresence(redis.url);
  const child = await startChild<{ ready: boolean }>(
    new URL('./children/presence-subscriber.ts', import.meta.url),
    [redis.url, '--rooms', String(rooms)],
  );
  try {
    const localRun = await inProcess(local, 'local-', rooms);
    const redisRun = await inProcess(subscriber, 'same-', rooms);
    const subjects: Subject[] = [
      { name: 'LocalPresence, one process (limit)', run: (n) => localRun(local, n) },
      { name: 'RedisPresence, one process', run: (n) => redisRun(publisher, n) },
      {
        name: 'RedisPresence, to another process',
        run: async (n) => {
          await publishPaced(publisher, 'room-', rooms, n);
          await sleep(50);
          return (await child.ask<{ delays: number[] }>({ cmd: 'report' })).delays;
        },
      },
    ];
    for (const s of subjects) await s.run(100); // warm-up
    const p50s = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
    const p99s = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const s of rotate(subjects, round)) {
        const delays = await s.run(messages);
        if (delays.length !== messages) {
          throw new Error(`${s.name}: ${delays.length} of ${messages} messages arrived`);
        }
        p50s.get(s.name)?.push(percentile(delays, 0.5));
        p99s.get(s.name)?.push(percentile(delays, 0.99));
      }
    }
    const limitP50 = median(p50s.get(subjects[0]?.name as string) ?? []);
    const limitP99 = median(p99s.get(subjects[0]?.name as string) ?? []);
    return subjects.map((s, i) => {
      const p50 = median(p50s.get(s.name) ?? []);
      const p99 = median(p99s.get(s.name) ?? []);
      return {
        bench: '4 presence',
        subject: s.name,
        value: `p50 ${ms(p50, 3)}`,
        detail: `p99 ${ms(p99, 3)}`,
        ...(i === 0 ? {} : { limit: `p50 ${ms(limitP50, 3)} (LocalPresence)` }),
        note:
          i === 0
            ? `${rooms} channels, ${rounds}x${messages} msgs at 1/ms, medians`
            : `extra over local: p50 +${ms(p50 - limitP50, 3)}, p99 +${ms(p99 - limitP99, 3)}`,
      };
    });
  } finally {
    await child.stop();
    publisher.shutdown();
    subscriber.shutdown();
    await redis.stop();
  }
}
