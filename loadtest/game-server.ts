/**
 * One game process of the load test (loadtest/world.ts starts it through test/cluster's
 * GameProcess): Colyseus with RedisPresence + RedisDriver (test/cluster/fixtures/game-process.ts),
 * a PostgresLedger shared by every process, and the game's outbound rate (`rateLimit`) a little
 * under the emulator's. Configured by env as the soak's processes are (NODE_NAME, PORT,
 * PUBLIC_URL, REDIS_URL, API_URL, API_KEY, RECONCILER), plus LEDGER_URL (PostgreSQL) and
 * LOADTEST (JSON: the rate, the fee, the tournament's size).
 *
 * Three rooms:
 * - `queue`: where table players wait, one per run, created on this process by the runner's
 *   `createQueue` (Colyseus's QueueRoom): each second it forms groups of four, creates a `table`
 *   for each and reserves its seats for the group at once. A burst of `joinOrCreate('table')`
 *   would not do: Colyseus lets every join that finds no free seat while a table is being
 *   created (its match opened: a ledger write) create one of its own, so a crowd arriving at
 *   once sits one or two to a table, and those tables never fill. A group the queue could not
 *   fill within a few seconds (players sent back after their table was called off) gets a
 *   table of its own size.
 * - `table`: four seats (or its group's size); the room opens a match with that many seats when
 *   it is created; a bot sends `enter` and is answered `entered` (its fee, whose code reaches
 *   its screen). Once every seat paid (`onFunded`) the round is played: one winner, named from
 *   the players' ids and the run's seed, is paid the pot minus a 10 % rake (`settling` is
 *   broadcast, with the time, just before the settle). A player who leaves before the round
 *   starts aborts it: every paid fee is refunded.
 * - `hall`: the tournament, one per run, created on this process by the runner's `createHall`:
 *   a match with `seats: <winners>`; once every seat paid, the runner's `settleHall` settles it
 *   with one equal share per player (every entrant wins: a 1,000-winner settle).
 *
 * Commands besides the common ones: `createQueue`, `createHall`, `settleHall`, `cpu` (this
 * process's CPU time, age and the holds its 429s wrote), `audit` (the game's own live audit).
 */
import { channel } from 'node:diagnostics_channel';
import {
  type Client,
  definePlugins,
  matchMaker,
  type QueueMatchGroup,
  QueueRoom,
  Room,
} from '@colyseus/core';
import { schema } from '@colyseus/schema';
import { z } from 'zod';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../src/lightning.js';
import type { RoomMatch } from '../src/room/match.js';
import { LightningState } from '../src/room/state.js';
import { RATE_CHANNEL, type RateEvent } from '../src/server/outbound.js';
import { env, nodeName as name, serveGameProcess } from '../test/cluster/fixtures/game-process.js';
import { type GameSettings, gameSettings } from './settings.js';

const settings: GameSettings = gameSettings.parse(JSON.parse(env('LOADTEST')));

const lightning: Lightning = createLightning({
  apiKey: env('API_KEY'),
  baseUrl: env('API_URL'),
  publicUrl: env('PUBLIC_URL'),
  ledger: new PostgresLedger(env('LEDGER_URL')),
  reconciler: JSON.parse(env('RECONCILER')),
  rateLimit: settings.rateLimit,
  logger: {
    info: () => {},
    warn: () => {},
    error: (m) => console.error(`[${name}] ${m}`),
  },
});
await lightning.ready();

const State = schema({ lightning: LightningState }, 'LoadState');

/** The least match timeout the API accepts: a killed process's open matches are refunded by then. */
const TIMEOUT_MS = 10_000;

/** The winner of a table: the paid player whose id hashes lowest with the run's seed. */
function winnerOf(playerIds: readonly string[], seed: number): string {
  const score = (id: string) => {
    let h = seed >>> 0;
    for (let k = 0; k < id.length; k++) h = Math.imul(h ^ id.charCodeAt(k), 16_777_619) >>> 0;
    return h;
  };
  return [...playerIds].sort((a, b) => score(a) - score(b))[0] as string;
}

/** Players at a table: four, or fewer for a group the queue could not fill. */
const SEATS = 4;
const tableOptions = z.object({ seats: z.number().int().min(1).max(SEATS).default(SEATS) });

class TableRoom extends Room {
  override maxClients = SEATS;
  override state = new State();
  override plugins = definePlugins([lightning.plugin({ lingerMs: 600_000 })]);
  #match: RoomMatch | undefined;
  #started = false;

  override async onCreate(options: unknown): Promise<void> {
    const { seats } = tableOptions.parse(options ?? {});
    this.maxClients = seats;
    this.state.lightning = new LightningState();
    this.onMessage('enter', (client) => void this.#enter(client));
    const match = await this.plugins.lightning.openMatch({
      entryFeeMsat: settings.feeMsat,
      rake: 0.1,
      seats,
      feeExpiresIn: settings.feeExpiresIn,
      claimExpiresIn: settings.claimExpiresIn,
      timeoutMs: TIMEOUT_MS,
      description: `table ${this.roomId} on ${name}`,
    });
    this.#match = match;
    match.onFunded(() => void this.#play(match));
    // However the match ends (its round, a player leaving, its timeout), no one new sits down.
    match.onClosed(() => void this.lock());
  }

  async #enter(client: Client): Promise<void> {
    const playerId = (client.userData as { playerId: string }).playerId;
    try {
      if (!this.#match) throw new Error('no match yet');
      const { entry } = await this.#match.enter(client);
      client.send('entered', { id: entry.id });
    } catch (err) {
      client.send('entered', { error: failure(err), playerId });
    }
  }

  async #play(match: RoomMatch): Promise<void> {
    this.#started = true;
    await this.lock();
    const paid = match.view.players
      .filter((p) => p.feeStatus === 'completed')
      .map((p) => p.playerId);
    const winner = winnerOf(paid, settings.seed);
    this.broadcast('settling', { at: Date.now(), winner });
    try {
      await match.settle({ [winner]: 1 });
    } catch (err) {
      console.error(`[${name}] settling ${match.id}: ${failure(err)}`);
    }
  }

  override onJoin(client: Client, options: { playerId?: string } = {}): void {
    client.userData = { playerId: options.playerId };
  }

  override async onLeave(): Promise<void> {
    // A player left before the round started: the round is off, every paid fee refunded.
    const match = this.#match;
    if (!match || this.#started || match.view.status !== 'open') return;
    this.#started = true;
    await this.lock();
    await match.abort('a player left before the start').catch((err) => {
      console.error(`[${name}] aborting ${match.id}: ${failure(err)}`);
    });
  }
}

/** Cycles a group may wait for a fourth player before it is given a table of its own size. */
const QUEUE_CYCLES = 3;

/**
 * The tables' queue: groups of four in the order players came (any players match), each seated
 * at a new table at once.
 */
class TableQueue extends QueueRoom {
  override autoDispose = false;
  #arrivals = 0;

  override onJoin(client: Parameters<QueueRoom['onJoin']>[0], options: unknown): void {
    this.addToQueue(client, { rank: ++this.#arrivals, options });
  }

  override onCreate(): void {
    super.onCreate({
      matchRoomName: 'table',
      maxPlayers: SEATS,
      allowIncompleteGroups: true,
      maxWaitingCycles: QUEUE_CYCLES,
      compare: () => true,
      onGroupReady: (group: QueueMatchGroup) =>
        matchMaker.createRoom('table', { seats: group.clients.length }),
    });
  }
}

let hall: HallRoom | undefined;

class HallRoom extends Room {
  override maxClients = 100_000;
  override autoDispose = false;
  override state = new State();
  override plugins = definePlugins([lightning.plugin({ lingerMs: 600_000 })]);
  match: RoomMatch | undefined;

  override async onCreate(): Promise<void> {
    this.state.lightning = new LightningState();
    this.onMessage('enter', (client) => void this.#enter(client));
    this.match = await this.plugins.lightning.openMatch({
      entryFeeMsat: settings.feeMsat,
      seats: settings.winners,
      feeExpiresIn: settings.feeExpiresIn,
      claimExpiresIn: settings.claimExpiresIn,
      description: `tournament on ${name}`,
    });
    hall = this;
  }

  override onJoin(client: Client, options: { playerId?: string } = {}): void {
    client.userData = { playerId: options.playerId };
  }

  async #enter(client: Client): Promise<void> {
    try {
      if (!this.match) throw new Error('no match yet');
      const { entry } = await this.match.enter(client);
      client.send('entered', { id: entry.id });
    } catch (err) {
      client.send('entered', { error: failure(err) });
    }
  }

  /**
   * Every entrant who paid wins an equal share: one settle of `winners` payouts, made at the
   * game's outbound rate. (A payout queue's `rewardMany` would take the same list.)
   */
  async settleAll(): Promise<{ at: number; payouts: number; ms: number }> {
    const match = this.match;
    if (!match) throw new Error('the hall has no match');
    const view = await match.refresh();
    const paid = view.players.filter((p) => p.feeStatus === 'completed').map((p) => p.playerId);
    const at = Date.now();
    this.broadcast('settling', { at });
    const settled = await match.settle(Object.fromEntries(paid.map((id) => [id, 1])));
    return { at, payouts: settled.payouts.length, ms: Date.now() - at };
  }
}

/** The error's code, and for a lost answer what was lost (a timeout, a reset, a 5xx). */
function failure(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e.code !== 'string') return String(e.message ?? err);
  return e.code === 'LN_AMBIGUOUS_RESULT' ? `${e.code}: ${String(e.message)}` : e.code;
}

type Command =
  | { cmd: 'createQueue' }
  | { cmd: 'createHall' }
  | { cmd: 'settleHall' }
  | { cmd: 'cpu' }
  | { cmd: 'audit' };

const born = Date.now();
// Each 429 this process met holds every process until its Retry-After ends: [from, to] in ms.
const holds: [number, number][] = [];
channel(RATE_CHANNEL).subscribe((message) => {
  const event = message as RateEvent;
  if (event.event === 'hold') holds.push([event.until - event.waitMs, event.until]);
});
await serveGameProcess<Command>(
  'table',
  TableRoom,
  lightning,
  async (command) => {
    switch (command.cmd) {
      case 'createQueue':
        return { roomId: (await matchMaker.handleCreateRoom('queue', {})).roomId };
      case 'createHall': {
        const room = await matchMaker.handleCreateRoom('hall', {});
        return { roomId: room.roomId, matchId: hall?.match?.id };
      }
      case 'settleHall':
        if (!hall) throw new Error('no hall on this process');
        return hall.settleAll();
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return { cpuMs: (user + system) / 1000, ageMs: Date.now() - born, holds };
      }
      case 'audit':
        return (await lightning.books.audit()).findings.map((f) => `${f.type}: ${f.message}`);
    }
  },
  { hall: HallRoom, queue: TableQueue },
);
