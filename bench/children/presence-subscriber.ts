/**
 * The "other process" of the presence benchmark: subscribes to `--rooms` room channels through
 * RedisPresence, as the rooms of a second game server would, and records for each settlement
 * message how long after its `sentAt` it arrived. `process.hrtime` is CLOCK_MONOTONIC, one
 * clock for every process on the machine, so the one-way delay needs no clock sync. Prints
 * `{ready}` once subscribed; `{"cmd":"report"}` answers the delays (ms) so far and clears them.
 *
 * Args: <redisUrl> [--rooms N]
 */
import { createInterface } from 'node:readline';
import { RedisPresence } from '@colyseus/redis-presence';
import { roomChannel } from '../../src/server/settlement.js';

const [url] = process.argv.slice(2);
const roomsArg = process.argv.indexOf('--rooms');
const rooms = roomsArg > 0 ? Number(process.argv[roomsArg + 1]) : 1000;
const now = () => Number(process.hrtime.bigint()) / 1e6;

const presence = new RedisPresence(url as string);
let delays: number[] = [];
for (let i = 0; i < rooms; i++) {
  await presence.subscribe(roomChannel(`room-${i}`), (message: { sentAt: number }) => {
    delays.push(now() - message.sentAt);
  });
}
const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
reply({ ready: true, rooms });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { cmd: string };
  if (command.cmd === 'report') {
    reply({ delays });
    delays = [];
  }
}
presence.shutdown();
