/**
 * A room under test and the client-side instruments the room tests share: a game room whose
 * state holds a LightningState, a way to give it the Lightning of the running game, a
 * recorder of the raw bytes every SDK room receives, and a way to know that a client has
 * received everything sent to it so far (together: to prove what a client never got).
 */
import { type Client, definePlugins, Room, ServerError } from '@colyseus/core';
import { schema, t } from '@colyseus/schema';
import { ColyseusSDK, Room as SdkRoom } from '@colyseus/sdk';
import type { Lightning } from '../../src/lightning.js';
import type { LightningPluginOptions } from '../../src/room/options.js';
import { LightningState } from '../../src/room/state.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

export const ArenaState = schema({ round: t.number(), lightning: LightningState }, 'ArenaState');
export type ArenaState = InstanceType<typeof ArenaState>;

/** The Lightning of the game a test started; rooms read it when they are constructed. */
export const current: { lightning?: Lightning; plugin?: LightningPluginOptions } = {};

function theLightning(): Lightning {
  if (!current.lightning) throw new Error('start the game with startArena() first');
  return current.lightning;
}

export interface JoinOptions {
  playerId?: string;
  email?: string;
}

/** A room as a game writes one: players say who they are on join (tests only: trust nothing). */
export class Arena extends Room<{ state: ArenaState }> {
  override state = new ArenaState();
  override plugins = definePlugins([theLightning().plugin(current.plugin)]);
  override autoDispose = false;

  override onJoin(client: Client, options: JoinOptions = {}) {
    client.userData = { playerId: options.playerId, email: options.email };
  }
}

/** The same room, but players are who the room's onAuth says (a token per player). */
export class AuthArena extends Arena {
  override onAuth(_client: Client, options: { token?: string }) {
    if (!options.token?.startsWith('token-of-')) throw new Error('not signed in');
    return { id: options.token.slice('token-of-'.length) };
  }
  override onJoin() {}
}

/** The same room with onUncaughtException, which hides plugin hooks from its first instance. */
export class GuardedArena extends Arena {
  readonly errors: Error[] = [];
  override onUncaughtException(error: Error) {
    this.errors.push(error);
  }
}

/** The same room with the region gate (one plugin setting per room class). */
export class GatedArena extends Room<{ state: ArenaState }> {
  override state = new ArenaState();
  override plugins = definePlugins([
    theLightning().plugin({ ...current.plugin, regionGate: true }),
  ]);
  override autoDispose = false;

  override onJoin(client: Client, options: JoinOptions = {}) {
    client.userData = { playerId: options.playerId, email: options.email };
  }
}

/**
 * A gated room whose own onAuth checks a token: throws on a bad one, answers false to 'refuse'.
 * Each gated room class is its own (Colyseus lays out plugin hooks per class, wrapping what it
 * inherits).
 */
export class GatedAuthArena extends Room<{ state: ArenaState }> {
  override state = new ArenaState();
  override plugins = definePlugins([
    theLightning().plugin({ ...current.plugin, regionGate: true }),
  ]);
  override autoDispose = false;

  override onAuth(_client: Client, options: { token?: string }) {
    if (options.token === 'refuse') return false;
    if (!options.token?.startsWith('token-of-')) throw new ServerError(4401, 'not signed in');
    return { id: options.token.slice('token-of-'.length) };
  }
}

/**
 * The gated room signed in as the README's sign-in does it: a static onAuth (as
 * `@colyseus/auth`'s JWT check), which makes Colyseus skip every instance onAuth.
 */
export class StaticGatedArena extends Room<{ state: ArenaState }> {
  override state = new ArenaState();
  override plugins = definePlugins([
    theLightning().plugin({ ...current.plugin, regionGate: true }),
  ]);
  override autoDispose = false;

  static override async onAuth(token: string) {
    if (!token?.startsWith('token-of-')) throw new ServerError(4401, 'not signed in');
    return { id: token.slice('token-of-'.length) };
  }
}

export async function startArena(
  options: Parameters<typeof startGame>[1] = {},
  plugin: LightningPluginOptions = {},
): Promise<Game> {
  const game = await startGame(
    {
      arena: Arena,
      authArena: AuthArena,
      guardedArena: GuardedArena,
      gatedArena: GatedArena,
      gatedAuthArena: GatedAuthArena,
      staticGatedArena: StaticGatedArena,
    },
    options,
  );
  current.lightning = game.lightning;
  current.plugin = plugin;
  return game;
}

/** The server-side client of an SDK room. */
export function serverClient(room: Room, sdkRoom: { sessionId: string }): Client {
  const client = room.clients.get(sdkRoom.sessionId);
  if (!client) throw new Error(`no client ${sdkRoom.sessionId} in room ${room.roomId}`);
  return client;
}

/**
 * An arena room with alice connected, the reward claims its hook has heard, and a reward of
 * 21,000 msats the room made for her (pending, its code on her screen).
 */
export async function aliceRewarded(game: Game) {
  const room = await game.colyseus.createRoom<Arena>('arena');
  const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
  const claimed: string[] = [];
  room.plugins.lightning.onRewardClaimed((entry) => claimed.push(entry.id));
  const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
    amountMsat: 21_000,
    description: 'win',
  });
  return { room, alice, claimed, reward };
}

/** An SDK client of its own, signed in with `token` (sent to the room's onAuth). */
export function sdkWithToken(game: Game, token: string): ColyseusSDK {
  const sdk = new ColyseusSDK(`ws://127.0.0.1:${game.port}`);
  sdk.auth.token = token;
  return sdk;
}

// ---- raw bytes received by each SDK room --------------------------------------------------

const received = new WeakMap<object, Uint8Array[]>();
const proto = SdkRoom.prototype as unknown as {
  onMessageCallback(this: object, event: { data: ArrayBuffer }): void;
};
const original = proto.onMessageCallback;
// The SDK binds this method when it connects, so patching the prototype once, before any
// join, records every frame from the first one (the join and the full state) onward.
proto.onMessageCallback = function (this: object, event: { data: ArrayBuffer }) {
  const list = received.get(this) ?? [];
  list.push(new Uint8Array(event.data.slice(0)));
  received.set(this, list);
  original.call(this, event);
};

/** Every byte the SDK room received so far, frame by frame. */
export function framesOf(sdkRoom: object): Uint8Array[] {
  return received.get(sdkRoom) ?? [];
}

/** Whether `text` (as UTF-8) occurs in any frame the SDK room received. */
export function sawText(sdkRoom: object, text: string): boolean {
  const needle = Buffer.from(text, 'utf8');
  return framesOf(sdkRoom).some((frame) => Buffer.from(frame).includes(needle));
}

// ---- knowing that a client is caught up ------------------------------------------------

/** The marker message of caughtUp(); no room of these tests uses the name. */
const SYNC = 'test:caught-up';
let markers = 0;

/** What caughtUp() needs of an SDK room (its overloads hide the untyped one). */
interface Listening {
  sessionId: string;
  onMessage(type: string, callback: (payload: unknown) => void): () => void;
}

/**
 * Waits until each SDK room has received everything the server sent it up to the next patch,
 * which carries every change made to the state and the views before this call. A message the
 * server sends after that patch travels behind it on the same WebSocket, so its arrival
 * proves the patch arrived: what a client has not seen by then, it was never sent.
 */
export async function caughtUp(room: Room, ...sdkRooms: object[]): Promise<void> {
  await room.waitForNextPatch();
  await sentSoFar(room, ...sdkRooms);
}

/**
 * Waits until each SDK room has received everything the server sent it before this call
 * (no patch is awaited: what the state changed since the last patch is not included).
 */
export async function sentSoFar(room: Room, ...sdkRooms: object[]): Promise<void> {
  await Promise.all(
    (sdkRooms as Listening[]).map(async (sdkRoom) => {
      const marker = ++markers;
      let arrived = false;
      const off = sdkRoom.onMessage(SYNC, (payload) => {
        if (payload === marker) arrived = true;
      });
      try {
        serverClient(room, sdkRoom).send(SYNC, marker);
        await eventually(() => arrived, 3000, `client ${sdkRoom.sessionId} to catch up`);
      } finally {
        off();
      }
    }),
  );
}
