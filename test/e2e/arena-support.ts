/**
 * The example arena (examples/arena) under test: the real server of `npm start` on a free
 * loopback port with its embedded emulator, real SDK clients that sign in at `POST /auth` as a
 * browser does, and the instruments the arena tests share (who a client is, its messages, its
 * fees at the service and in the ledger).
 */
import { randomBytes } from 'node:crypto';
import { matchMaker } from '@colyseus/core';
import { ColyseusSDK, type Room as SdkRoom } from '@colyseus/sdk';
import type { MoneyRow } from '../../examples/arena/history.js';
import { type Arena, type ArenaOptions, startArena } from '../../examples/arena/main.js';
import { seatOf as seatOfId } from '../../examples/arena/room.js';
import { ManualClock } from '../../src/clock.js';
import type { Emulator } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { holdPort } from '../support/ports.js';

export const DEPLETE = '/api/v1/widget/users/deplete';

export interface ArenaUnderTest {
  arena: Arena;
  emulator: Emulator;
  /** The server's clock: fee deadlines and the reconciler's schedule move only with it. */
  clock: ManualClock;
  /** Lines the arena logged. */
  lines: string[];
  port: number;
  /** The secret the arena signs its players' tokens with. */
  authSecret: string;
}

/**
 * The arena with a manual clock, a quiet library logger and no browser bundle. Every test player
 * signs in from 127.0.0.1, one address: new guests are not limited unless `config` says
 * `signInsPerMinute` (arena-sign-in.test.ts).
 */
export async function startArenaUnderTest(
  options: Pick<ArenaOptions, 'config' | 'lightning'> = {},
): Promise<ArenaUnderTest> {
  const clock = new ManualClock(Date.now());
  const lines: string[] = [];
  const authSecret = randomBytes(32).toString('base64url');
  const { arena, port } = await startArenaHeld({
    serveClient: false,
    auth: { secret: authSecret },
    log: (line) => lines.push(line),
    config: { signInsPerMinute: 1_000_000, ...options.config },
    lightning: {
      clock,
      logger: quietLogger,
      api: { retry: { baseDelayMs: 1, maxDelayMs: 5 } },
      reconciler: { intervalMs: 20, firstCheckMs: 2_000, maxBackoffMs: 10_000 },
      ...options.lightning,
    },
  });
  const emulator = arena.lightning.service.emulator;
  if (!emulator) throw new Error('the arena runs on its embedded emulator in tests');
  return { arena, emulator, clock, lines, port, authSecret };
}

/** The arena on a free port, held from its choice until the arena listens (holdPort). */
export async function startArenaHeld(
  options: Omit<ArenaOptions, 'port' | 'beforeListen'>,
): Promise<{ arena: Arena; port: number }> {
  const { port, release } = await holdPort();
  return { arena: await startArena({ ...options, port, beforeListen: release }), port };
}

/** A token from the arena's `POST /auth`, as the browser gets one. */
export async function signIn(t: ArenaUnderTest, kept?: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${t.port}/auth`, {
    method: 'POST',
    headers: kept ? { authorization: `Bearer ${kept}` } : {},
  });
  if (!res.ok) throw new Error(`POST /auth answered ${res.status}`);
  return ((await res.json()) as { token: string }).token;
}

/** An SDK client holding `token` (sent to the room's onAuth), or none. */
export function sdk(t: ArenaUnderTest, token?: string): ColyseusSDK {
  const client = new ColyseusSDK(`ws://127.0.0.1:${t.port}`);
  if (token !== undefined) client.auth.token = token;
  return client;
}

export interface Player {
  id: string;
  token: string;
  room: SdkRoom;
  /** Every `shop` and `fee` message this client received, in order. */
  shop: { ok: boolean | null; order: string; message: string }[];
  fees: { paid: boolean; fee: string | null }[];
  /** The last `history` message: the player's money, newest first. */
  history: MoneyRow[];
}

/** Signs in a new player and joins the arena (a given room, or any). */
export async function joinArena(
  t: ArenaUnderTest,
  options: { name?: string; roomId?: string; token?: string; extra?: object } = {},
): Promise<Player> {
  const token = options.token ?? (await signIn(t));
  const client = sdk(t, token);
  const joinOptions = { name: options.name ?? 'player', ...options.extra };
  const room = options.roomId
    ? await client.joinById(options.roomId, joinOptions)
    : await client.joinOrCreate('arena', joinOptions);
  const player: Player = {
    id: t.arena.auth.verify(token),
    token,
    room,
    shop: [],
    fees: [],
    history: [],
  };
  room.onMessage('shop', (m: Player['shop'][number]) => player.shop.push(m));
  room.onMessage('fee', (m: Player['fees'][number]) => player.fees.push(m));
  room.onMessage('history', (m: MoneyRow[]) => {
    player.history = m;
  });
  room.onMessage('seat', () => {});
  room.onMessage('tab', () => {});
  return player;
}

/** The arena room a player is in, on the server. */
export function serverRoom(player: Player) {
  const room = matchMaker.getLocalRoomById(player.room.roomId);
  if (!room) throw new Error(`no room ${player.room.roomId}`);
  return room as unknown as {
    roomId: string;
    clients: { length: number };
    state: {
      phase: string;
      matchId: string;
      players: Map<string, { name: string; paid: boolean; playing: boolean; items: string[] }>;
      lightning: {
        entryFees: Map<string, { playerId: string; status: string }>;
        matches: Map<string, { status: string }>;
      };
    };
  };
}

/** Resolves when the server answered a ping sent after everything this client sent so far. */
export function pong(player: Player): Promise<number> {
  return new Promise((resolve) => player.room.ping(resolve));
}

/** The static charges the service holds for a player (their entry fees). */
export function chargesOf(t: ArenaUnderTest, playerId: string) {
  return t.emulator.control.staticCharges().filter((c) => c.internalId === playerId);
}

/** No create call of the player's is in flight (each is recorded before it is sent). */
export async function noCreateInFlight(t: ArenaUnderTest, playerId: string): Promise<boolean> {
  const open = await t.arena.lightning.books.ledger.openByPlayer(playerId);
  return open.every((i) => i.status !== 'creating');
}

/** The player's one open entry fee in the ledger, once created. */
export async function openFeeOf(t: ArenaUnderTest, playerId: string) {
  return eventually(
    async () => {
      const open = await t.arena.lightning.books.ledger.openByPlayer(playerId);
      return open.find((i) => i.kind === 'entryFee' && i.status === 'pending');
    },
    5_000,
    `an open entry fee of ${playerId}`,
  );
}

/** Pays the player's open entry fee as their wallet would. */
export async function payFee(t: ArenaUnderTest, playerId: string): Promise<string> {
  const fee = await openFeeOf(t, playerId);
  const paid = t.emulator.control.payStaticCharge(fee.remoteId as string);
  if (paid.status !== 'OK') throw new Error(`paying ${fee.id}: ${paid.reason}`);
  return fee.id;
}

/** The seat entry of a player as a client sees the synced state. */
export function seen(viewer: Player, who: Player) {
  const state = viewer.room.state as unknown as {
    phase: string;
    players?: Map<
      string,
      { ready: boolean; paid: boolean; playing: boolean; items: Iterable<string> }
    >;
  };
  for (const [seat, p] of state.players ?? []) {
    if (seat === seatOfId(who.id)) return p;
  }
  return undefined;
}

export function phaseOf(viewer: Player): string {
  return (viewer.room.state as unknown as { phase: string }).phase;
}

/** A round's match as a client sees it (`state.lightning.matches`, synced to everyone). */
export interface SeenMatch {
  status: string;
  potMsat: string;
  rakeMsat: string;
  rake: number;
  entered: number;
  paid: number;
  funded: boolean;
  reason: string;
}

/** The match of the round on the viewer's screen (or of another round, by id). */
export function matchSeen(viewer: Player, id?: string): SeenMatch | undefined {
  const state = viewer.room.state as unknown as {
    matchId: string;
    lightning?: { matches?: Map<string, SeenMatch> };
  };
  return state.lightning?.matches?.get(id ?? state.matchId);
}

/** The id of the match of the round that is open or running on the viewer's screen, or ''. */
export function matchIdOf(viewer: Player): string {
  return (viewer.room.state as unknown as { matchId: string }).matchId ?? '';
}

export interface SeenReward {
  id: string;
  status: string;
  amount: string;
  description: string;
  code: string;
}

/** The reward entries (prizes and refunds) a client holds: only ever its own. */
export function rewardsSeen(viewer: Player): SeenReward[] {
  const state = viewer.room.state as unknown as {
    lightning?: { rewards?: Map<string, Omit<SeenReward, 'id'>> };
  };
  // An entry's id is its key in the map (the synced entry does not repeat it).
  return Array.from(state.lightning?.rewards?.entries() ?? [], ([id, r]) => ({
    id,
    status: r.status,
    amount: r.amount,
    description: r.description,
    code: r.code,
  }));
}
