/**
 * What the fuzz targets run against: a real emulator (with a webhook secret), a real Colyseus
 * server with the lightning routes and an arena room, one connected player with an email, a
 * room with the region gate where this machine's region is refused (and already read, so that
 * the targets ask the service nothing), and the counters the harness reads: requests at the emulator's HTTP server, calls of the ledger's
 * writing methods, events of the lightning object, and unhandled rejections and uncaught
 * exceptions in the process.
 *
 * Every HTTP mount of the plugin is on that one server: `lightning.endpoints()` and
 * `lightning.operator.console.endpoints()` on Colyseus's router (under `/lightning`), and a second Lightning (its
 * own in-memory ledger, on the same emulator) with `attach(server)` and `operator.console.attach(server)`
 * under `/attached`. Both consoles let in `authorization: Bearer fuzz-operator`.
 * Two open matches (one on the server, one in the room) that alice paid into, so that a match
 * target can aim a bad argument at a real match (a settle naming who never paid in, a share
 * too small to weigh anything).
 *
 * Cost: one emulator, one game server and one SDK connection, started once for every target,
 * and two matches with a paid fee each.
 */
import type { Client } from '@colyseus/core';
import fc from 'fast-check';
import { Pool } from 'undici';
import { type Emulator, startEmulator } from '../src/emulator/index.js';
import { RegionRefusedError } from '../src/errors.js';
import { INTENT_KINDS } from '../src/ledger/intent.js';
import { SqliteLedger } from '../src/ledger/sqlite.js';
import type { Lightning } from '../src/lightning.js';
import { createLightning } from '../src/lightning.js';
import type { RoomMatch } from '../src/room/match.js';
import type { LightningEventName } from '../src/server/events.js';
import { type Arena, serverClient, startArena } from '../test/room/support.js';
import { eventually } from '../test/support/eventually.js';
import { type Game, quietLogger } from '../test/support/game.js';
import type { Counters } from './harness.js';
import { MATCH_PAYER } from './specs.js';

export const WEBHOOK_SECRET = 'whsec_fuzz_0123456789abcdef';
/** Where the second Lightning's routes and console are (attach, operator.console.attach). */
export const ATTACHED_PREFIX = '/attached';
/** What lets a request into either console. */
export const OPERATOR_TOKEN = 'Bearer fuzz-operator';
const operatorCheck = (request: Request) =>
  request.headers.get('authorization') === OPERATOR_TOKEN ? 'fuzz-operator' : false;

export interface FuzzEnvironment {
  emulator: Emulator;
  game: Game;
  lightning: Lightning;
  /** The second Lightning, mounted by attach and operator.console.attach under ATTACHED_PREFIX. */
  attached: Lightning;
  room: Arena;
  /** A connected player (`alice`, with an email) of the room. */
  client: Client;
  /** A room with the region gate; the service refuses this machine's region. */
  gated: Arena;
  /** Keep-alive connections to the game server, for the route targets. */
  routes: Pool;
  /** Open matches that only `MATCH_PAYER` (alice) paid into: one on the server, one in the room. */
  matches: { server: string; room: RoomMatch };
  counters(): Counters;
  stop(): Promise<void>;
}

const WRITES = ['create', 'transition', 'update', 'recordEvent', 'claimDue', 'release'] as const;

export async function startFuzzEnvironment(): Promise<FuzzEnvironment> {
  const counts: Counters = { requests: 0, writes: 0, events: 0, unhandled: 0 };
  const onUnhandled = () => {
    counts.unhandled++;
  };
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);

  const emulator = await startEmulator({ webhookSecret: WEBHOOK_SECRET });
  // The second Lightning, mounted in front of Colyseus's router by attach and operator.console.attach.
  const attachedLedger = new SqliteLedger({ path: ':memory:' });
  const attached = await createLightning({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    publicUrl: 'http://127.0.0.1:9',
    prefix: ATTACHED_PREFIX,
    logger: quietLogger,
    ledger: attachedLedger,
    webhookSecret: WEBHOOK_SECRET,
    reconciler: { enabled: false },
  });
  await attached.ready();
  emulator.server.on('request', () => {
    counts.requests++;
  });
  const game = await startArena({
    emulator,
    webhookSecret: WEBHOOK_SECRET,
    reconciler: { enabled: false },
    console: { via: 'router', authorize: operatorCheck },
    onServer: (server) => {
      attached.attach(server);
      attached.operator.console.attach(server, { authorize: operatorCheck });
    },
  });
  const lightning = game.lightning;
  // The writable stores under both (`lightning.books.ledger` only reads): every write counted.
  for (const store of [game.store, attachedLedger]) {
    const ledger = store as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const name of WRITES) {
      const write = (ledger[name] as (...a: unknown[]) => unknown).bind(ledger);
      ledger[name] = (...args: unknown[]) => {
        counts.writes++;
        return write(...args);
      };
    }
  }
  const names: LightningEventName[] = ['settled', 'unknown', 'latePayment', 'webhook', 'paused'];
  for (const kind of INTENT_KINDS) {
    if (kind === 'match') continue;
    for (const status of ['completed', 'expired', 'failed'] as const)
      names.push(`${kind}.${status}`);
  }
  for (const name of names) {
    for (const emitter of [lightning, attached]) {
      emitter.on(name, () => {
        counts.events++;
      });
    }
  }

  const room = await game.colyseus.createRoom<Arena>('arena');
  const sdkRoom = await game.colyseus.connectTo(room, {
    playerId: 'alice',
    email: 'alice@example.com',
  });
  const client = serverClient(room, sdkRoom);
  // A failing input names the player instead of printing the whole socket.
  Object.defineProperty(client, fc.toStringMethod, { value: () => 'client(alice)' });
  const routes = new Pool(`http://127.0.0.1:${game.port}`, { connections: 4 });

  // Open for the whole run: no reconciler, and a timeout far beyond it.
  const timeoutMs = 7 * 24 * 3600 * 1000;
  const serverMatch = await lightning.matches.open({ entryFeeMsat: 10_000, timeoutMs });
  const roomMatch = await room.plugins.lightning.openMatch({ entryFeeMsat: 10_000, timeoutMs });
  const fees = [
    await lightning.matches.enter({ matchId: serverMatch.id, playerId: MATCH_PAYER }),
    (await roomMatch.enter(client)).entry,
  ];
  for (const fee of fees) {
    const remoteId = (await lightning.books.ledger.get(fee.id))?.remoteId as string;
    emulator.control.payStaticCharge(remoteId);
    await eventually(
      async () => (await lightning.books.ledger.get(fee.id))?.status === 'completed',
      5_000,
      `the fuzz fixture's fee ${fee.id} paid`,
    );
  }
  for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '::1']) {
    emulator.control.setRegion(ip, { country: 'XX', region: 'Fuzz' });
  }
  const gated = await game.colyseus.createRoom<Arena>('gatedArena');
  const probe = await game.colyseus.connectTo(gated, { playerId: 'fuzz' });
  await gated.plugins.lightning
    .chargeEntryFee(serverClient(gated, probe), { amountMsat: 21_000, description: 'probe' })
    .then(
      () => Promise.reject(new Error('the gated room charged a player of a refused region')),
      (err: unknown) => (err instanceof RegionRefusedError ? undefined : Promise.reject(err)),
    );
  await probe.leave();

  return {
    emulator,
    game,
    lightning,
    attached,
    room,
    client,
    gated,
    routes,
    matches: { server: serverMatch.id, room: roomMatch },
    counters: () => ({ ...counts }),
    async stop() {
      await routes.close();
      await sdkRoom.leave().catch(() => {});
      await game.stop();
      await attached.close();
      await attachedLedger.close();
      await emulator.close();
      process.off('unhandledRejection', onUnhandled);
      process.off('uncaughtException', onUnhandled);
    },
  };
}
