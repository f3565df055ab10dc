/**
 * One game-server process of the soak: Colyseus with RedisPresence + RedisDriver, the
 * lightning routes, a PostgresLedger, and a room whose players ask for money
 * movements and play matches by message, as a game's client would. Started by soak/cluster.ts
 * through test/cluster's GameProcess (`node --import tsx`, an IPC channel), configured by env:
 *
 *   NODE_NAME, PORT, PUBLIC_URL, REDIS_URL, API_URL, API_KEY, RECONCILER (JSON),
 *   SOAK_OPTIONS (JSON: more createLightning options: api, breaker), SOAK_LINGER_MS,
 *   LEDGER_URL (PostgreSQL), SOAK_CLOCK_OFFSET (ms ahead of the system clock)
 *
 * A player (an SDK client that joined with `{ playerId, email, lnAddress? }`) sends `op`
 * `{ seq, kind, amount, expiresIn, dice }`; the room calls the plugin's helper for that client
 * and answers `op` `{ seq, ok, id, status, did?, matchId? }` or `{ seq, ok: false, error }`.
 * Kind `match` is the next step of the room's current match, as the room's state and the
 * runner's dice (seeded) decide: open one (through the room's helper or the server's
 * `lightning.matches.open`), enter it (the player's fee, with their Lightning address if they
 * have one), wait for the others to pay, or end it: settle among those who paid (some with
 * rake), abort, or abandon it (nobody keeps it alive: it times out).
 *
 * Reports to the runner: `ready`; `settled`, `unknown`, `latePayment`, the matches' ends
 * (`match`) and the live audit's findings (`audit`) from its Lightning core; every settlement its rooms' hooks deliver (`room`), and
 * every message on its rooms' settlement channels (`message`). Commands: `createRoom`, `sync`
 * (answered after every report made before it), `closeMatches` (every room decides its current
 * match: closing time), `resolve` (an operator resolves an unknown intent), `claims` (the
 * claim codes waiting for players), `clock` (time jumps forward), `audit` (the live audit now). It exits when the runner goes
 * away (the IPC channel closes).
 */
import { type Client, definePlugins, Room } from '@colyseus/core';
import { schema } from '@colyseus/schema';
import { MatchClosedError } from '../src/errors.js';
import type { Intent } from '../src/ledger/intent.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../src/lightning.js';
import type { RoomMatch } from '../src/room/match.js';
import { LightningState } from '../src/room/state.js';
import type { Shares } from '../src/server/match/terms.js';
import type { MatchView } from '../src/server/match/view.js';
import {
  env,
  nodeName as name,
  report,
  reportRoom,
  serveGameProcess,
} from '../test/cluster/fixtures/game-process.js';
import { SoakClock } from './clock.js';

const clock = new SoakClock(Number(process.env.SOAK_CLOCK_OFFSET ?? 0));

const lightning: Lightning = createLightning({
  apiKey: env('API_KEY'),
  baseUrl: env('API_URL'),
  publicUrl: env('PUBLIC_URL'),
  // Presence and the driver are on Redis; the ledger is not.
  ledger: new PostgresLedger(env('LEDGER_URL'), { clock }),
  reconciler: JSON.parse(env('RECONCILER')),
  clock,
  ...JSON.parse(process.env.SOAK_OPTIONS ?? '{}'),
  logger: {
    info: () => {},
    warn: () => {},
    error: (m) => console.error(`[${name}] ${m}`),
  },
});
await lightning.ready();

const summary = (i: Intent) => ({ id: i.id, kind: i.kind, status: i.status, roomId: i.roomId });

lightning.on('settled', (intent) => report({ event: 'settled', ...summary(intent) }));
lightning.on('unknown', (intent) => report({ event: 'unknown', ...summary(intent) }));
lightning.on('latePayment', (intent) => report({ event: 'latePayment', ...summary(intent) }));
lightning.on('match.settled', (view) => report({ event: 'match', id: view.id, status: 'settled' }));
lightning.on('match.aborted', (view) => report({ event: 'match', id: view.id, status: 'aborted' }));
lightning.on('audit', (findings) =>
  report({ event: 'audit', findings: findings.map((f) => `${f.type}: ${f.message}`) }),
);

const SoakState = schema({ lightning: LightningState }, 'SoakState');

interface Op {
  seq: number;
  kind: 'reward' | 'fee' | 'spend' | 'match' | 'tab';
  amount: number;
  expiresIn?: number;
  /**
   * Numbers in [0, 1) the runner drew from its seed: the room's three choices for a match; for
   * a tab, one: a credit (under 0.5; under 0.8 too while the tab holds under 10 sats) or a
   * withdrawal.
   */
  dice?: number[];
}

interface Player {
  playerId: string;
  email: string;
  /** From the player's own account (here: how it joined), never from a room message. */
  lnAddress?: string;
}

/** The room's current match: opened through the room's helper or the server's API. */
interface Current {
  id: string;
  road: 'room' | 'api';
  /** The room's handle (road `room`), which keeps the match alive while the room lives. */
  handle: RoomMatch | null;
  entered: Set<string>;
}

/** What a match step did, for the runner's figures. */
type Did = 'open' | 'enter' | 'settle' | 'abort' | 'abandon' | 'wait';

const ENDED = new Set(['completed', 'expired', 'failed']);

/** Match claim codes live the least the API accepts: the runner jumps time past it. */
const CLAIM_EXPIRES_IN = 60;
/**
 * The least timeout the API accepts. A room keeps its matches alive; one opened through the
 * server's API is not, so it times out unless its round ends within it.
 */
const TIMEOUT_MS = 10_000;

function failure(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown };
  return typeof e.code === 'string' ? e.code : String(e.name ?? 'Error');
}

const rooms = new Set<SoakRoom>();

class SoakRoom extends Room {
  override autoDispose = false;
  override state = new SoakState();
  override plugins = definePlugins([
    lightning.plugin({
      lingerMs: Number(process.env.SOAK_LINGER_MS ?? 600_000),
      // A settlement whose presence message was lost reaches the room within a second.
      catchUpMs: 1_000,
    }),
  ]);

  #unreport: (() => void) | undefined;
  #current: Current | undefined;
  /** One match step at a time: two players' steps must not both open a match. */
  #steps: Promise<unknown> = Promise.resolve();

  override onCreate(): void {
    this.state.lightning = new LightningState();
    this.#unreport = reportRoom(this, this.plugins.lightning, summary);
    this.onMessage('op', (client, op: Op) => void this.#run(client, op));
    rooms.add(this);
  }

  override onDispose(): void {
    rooms.delete(this);
    this.#unreport?.();
  }

  override onJoin(client: Client, options: Partial<Player> = {}): void {
    client.userData = {
      playerId: options.playerId,
      email: options.email,
      lnAddress: options.lnAddress,
    };
  }

  async #run(client: Client, op: Op): Promise<void> {
    const helpers = this.plugins.lightning;
    const description = `${op.kind} ${op.seq} on ${name}`;
    try {
      if (op.kind === 'match') {
        const step = this.#steps.then(() => this.#matchStep(client, op));
        this.#steps = step.catch(() => {});
        const done = await step;
        client.send('op', { seq: op.seq, ok: true, ...done });
        return;
      }
      if (op.kind === 'tab') {
        const done = await this.#tabStep(client, op, description);
        client.send('op', {
          seq: op.seq,
          ok: true,
          id: done.id,
          status: done.status,
          did: done.did,
        });
        return;
      }
      const entry =
        op.kind === 'reward'
          ? await helpers.reward(client, {
              amountMsat: op.amount,
              description,
              expiresIn: op.expiresIn,
            })
          : op.kind === 'fee'
            ? (
                await helpers.chargeEntryFee(client, {
                  amountMsat: op.amount,
                  description,
                  expiresIn: op.expiresIn,
                })
              ).entry
            : await helpers.spendPoints(client, { amount: op.amount, description });
      client.send('op', { seq: op.seq, ok: true, id: entry.id, status: entry.status });
    } catch (err) {
      client.send('op', { seq: op.seq, ok: false, error: failure(err) });
    }
  }

  /**
   * A tab step, through the server's calls: a credit (keyed by the op, so a repeat is the first
   * credit; no room entry) or a withdrawal of the tab (all of it, up to the op's amount, and at
   * least the service's 10 sats: less is refused with nothing sent), its code on the player's
   * screen in this room.
   */
  async #tabStep(client: Client, op: Op, description: string) {
    const { playerId } = client.userData as Player;
    const [d0 = 0] = op.dice ?? [];
    const balance = d0 < 0.5 ? 0 : await lightning.tabs.balance(playerId);
    if (d0 < 0.5 || (balance < 10_000 && d0 < 0.8)) {
      const credit = await lightning.tabs.credit({
        playerId,
        amountMsat: op.amount,
        description,
        key: `op-${op.seq}`,
      });
      return { did: 'credit', id: credit.id, status: credit.status };
    }
    const withdrawal = await lightning.tabs.withdraw({
      playerId,
      roomId: this.roomId,
      amountMsat: Math.max(10_000, Math.min(balance, op.amount * 2)),
      description,
      expiresIn: op.expiresIn,
    });
    return { did: 'withdraw', id: withdrawal.id, status: withdrawal.status };
  }

  /** The next step of the room's match for this player: open, enter, or end it. */
  async #matchStep(
    client: Client,
    op: Op,
  ): Promise<{ did: Did; matchId: string; id?: string; status?: string }> {
    const [d0 = 0, d1 = 0, d2 = 0] = op.dice ?? [];
    const player = client.userData as Player;
    let current = this.#current;
    let did: Did = 'enter';
    if (!current) {
      current = await this.#open(op, d0, d1, d2);
      did = 'open';
    }
    const match = current;
    try {
      if (!match.entered.has(player.playerId)) {
        const options = player.lnAddress ? { lnAddress: player.lnAddress } : {};
        // A room match is entered through its handle mostly, now and then through the API.
        const fee =
          match.handle && d1 < 0.7
            ? (await match.handle.enter(client, options)).entry
            : await lightning.matches.enter({
                matchId: match.id,
                playerId: player.playerId,
                ...options,
              });
        match.entered.add(player.playerId);
        return { did, matchId: match.id, id: fee.id, status: fee.status };
      }
      // A player already in the match: once every fee is paid or gone, the round ends (settled
      // most often, now and then aborted or walked away from); while fees are still open the
      // player mostly waits, and now and then the game decides anyway.
      const view = await this.#view(match);
      const paid = view.players.filter((p) => p.feeStatus === 'completed').length;
      const open = view.players.filter((p) => !ENDED.has(p.feeStatus)).length;
      const ready = open === 0;
      if (ready && paid === 0) {
        await this.#abort(match, 'not enough players', d2);
        return { did: 'abort', matchId: match.id };
      }
      const [settle, abort, abandon] = ready ? [0.7, 0.85, 1] : [0.1, 0.2, 0.25];
      if (d0 < settle) return { did: await this.#settle(match, d1, d2), matchId: match.id };
      if (d0 < abort) {
        await this.#abort(match, 'the players left', d2);
        return { did: 'abort', matchId: match.id };
      }
      if (d0 < abandon) {
        match.handle?.stop();
        this.#current = undefined;
        return { did: 'abandon', matchId: match.id };
      }
      return { did: 'wait', matchId: match.id };
    } catch (err) {
      // Decided meanwhile (its timeout, say): the room moves on to a new match.
      if (err instanceof MatchClosedError && this.#current === match) this.#current = undefined;
      throw err;
    }
  }

  async #open(op: Op, d0: number, d1: number, d2: number): Promise<Current> {
    const road = d0 < 0.8 ? 'room' : 'api';
    const rake = d1 < 0.5 ? 0 : ([0.05, 0.1, 0.2][Math.floor(d2 * 3)] ?? 0.1);
    const terms = {
      entryFeeMsat: op.amount,
      rake,
      feeExpiresIn: op.expiresIn ?? 10,
      claimExpiresIn: CLAIM_EXPIRES_IN,
      // The road is in the description, for the figures.
      description: `match ${road} ${op.seq} on ${name}`,
    };
    if (road === 'room') {
      const handle = await this.plugins.lightning.openMatch({
        ...terms,
        timeoutMs: TIMEOUT_MS,
      });
      this.#current = { id: handle.id, road, handle, entered: new Set() };
    } else {
      const view = await lightning.matches.open({
        ...terms,
        roomId: this.roomId,
        timeoutMs: TIMEOUT_MS,
      });
      this.#current = { id: view.id, road, handle: null, entered: new Set() };
    }
    return this.#current;
  }

  /** Settles among the players who paid (one winner, or two at 2:1); aborts if nobody paid. */
  async #settle(match: Current, d1: number, d2: number): Promise<Did> {
    const view = await this.#view(match);
    const payers = view.players.filter((p) => p.feeStatus === 'completed').map((p) => p.playerId);
    if (payers.length === 0) {
      await this.#abort(match, 'not enough players', d2);
      return 'abort';
    }
    const first = payers[Math.floor(d2 * payers.length)] as string;
    const second = payers.find((p) => p !== first);
    const shares: Shares =
      second !== undefined && d1 < 0.5 ? { [first]: 2, [second]: 1 } : { [first]: 1 };
    if (match.handle && d2 < 0.7) await match.handle.settle(shares);
    else await lightning.matches.settle(match.id, shares);
    if (this.#current === match) this.#current = undefined;
    return 'settle';
  }

  async #abort(match: Current, reason: string, d2: number): Promise<void> {
    if (match.handle && d2 < 0.7) await match.handle.abort(reason);
    else await lightning.matches.abort(match.id, reason);
    if (this.#current === match) this.#current = undefined;
  }

  #view(match: Current): Promise<MatchView> {
    return match.handle ? match.handle.refresh() : lightning.matches.get(match.id);
  }

  /** Closing time: the current match is settled among its payers, or aborted. */
  async closeMatch(): Promise<Did | null> {
    const step = this.#steps.then(async () => {
      const match = this.#current;
      if (!match) return null;
      try {
        return await this.#settle(match, 1, 0);
      } catch (err) {
        if (err instanceof MatchClosedError && this.#current === match) this.#current = undefined;
        throw err;
      }
    });
    this.#steps = step.catch(() => {});
    return step;
  }
}

type Command =
  | { cmd: 'closeMatches' }
  | { cmd: 'resolve'; id: string; status: 'completed' | 'expired' | 'failed'; note: string }
  | { cmd: 'claims'; playerIds: string[] }
  | { cmd: 'clock'; offset: number }
  | { cmd: 'audit' };

await serveGameProcess<Command>('soak', SoakRoom, lightning, async (command) => {
  switch (command.cmd) {
    case 'closeMatches': {
      const done = await Promise.allSettled([...rooms].map((room) => room.closeMatch()));
      return done.map((d) => (d.status === 'fulfilled' ? d.value : `error ${failure(d.reason)}`));
    }
    case 'resolve':
      return (await lightning.operator.resolve(command.id, command.status, command.note)).status;
    case 'claims': {
      const lists = await Promise.all(command.playerIds.map((p) => lightning.books.claims(p)));
      return Object.fromEntries(
        command.playerIds.map((p, k) => [p, lists[k]?.map((c) => c.intentId) ?? []]),
      );
    }
    case 'clock':
      clock.setOffset(command.offset);
      return clock.offset;
    case 'audit':
      return (await lightning.books.audit()).findings.map((f) => `${f.type}: ${f.message}`);
  }
});
