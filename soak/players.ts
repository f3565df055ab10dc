/**
 * The soak's players: real @colyseus/sdk clients, each in one room of one game process. A
 * player asks its room for money movements and match steps by message and waits for the
 * answer; its wallet watches the entries that reach its own screen (its StateView), and pays or
 * claims some of them from the code it was shown, as a phone wallet scanning the QR code would
 * (LNURL decoded, then the emulator's wallet calls). A match's claim codes (payouts, refunds)
 * live a minute or more: the late ones are claimed only once the runner has moved time past
 * their deadline (`actAfterDeadline`). Everything a player sees is kept for the invariants: a
 * player must never see another player's entry.
 *
 * Cost per player: one WebSocket and its decoded state; the wallet is one shared poll.
 */
import { ColyseusSDK, type Room as SdkRoom } from '@colyseus/sdk';
import { decodeLnurl, type Emulator } from '../src/emulator/index.js';
import type { Random } from './random.js';

export type OpKind = 'reward' | 'fee' | 'spend' | 'match' | 'tab';

export interface OpResult {
  seq: number;
  kind: OpKind;
  ok: boolean;
  id?: string;
  status?: string;
  /** An error code (LN_...) or why no answer came (`no answer`, `left`). */
  error?: string;
  /** A match step: what the room did (open, enter, settle, abort, abandon), and in which match. */
  did?: string;
  matchId?: string;
  ms: number;
}

/**
 * An entry as a player's client decodes it, with its id (its key in the map) and its kind (the
 * map it is in: the entry syncs its `purpose`, not its kind, since issue 25).
 */
export interface SeenEntry {
  id: string;
  kind: string;
  status: string;
  code?: string;
  description: string;
  /** epoch ms, 0 when none. */
  expiresAt: number;
}

type EntryMap = {
  forEach(cb: (value: Omit<SeenEntry, 'id' | 'kind'>, key: string) => void): void;
};
interface ClientState {
  lightning?: {
    rewards?: EntryMap;
    entryFees?: EntryMap;
    pointSpends?: EntryMap;
    payments?: EntryMap;
  };
}

/** What the wallet did with a code, for the figures. */
export interface WalletAct {
  kind: 'claim' | 'pay';
  resourceId: string;
  intentId: string;
  ok: boolean;
  reason?: string;
  /** Acted after the entry's deadline, on purpose. */
  late: boolean;
  second: boolean;
  /** A match's fee, payout or refund. */
  match: boolean;
}

let seqs = 0;

export class Player {
  readonly playerId: string;
  /** From the player's account: their match payouts and refunds are paid to it. */
  readonly lnAddress: string | undefined;
  readonly node: string;
  readonly roomId: string;
  readonly room: SdkRoom;
  /** False once the connection dropped (its process was killed, say). */
  connected = true;
  readonly #waiting = new Map<number, (answer: Omit<OpResult, 'ms' | 'kind'>) => void>();
  /** Entries whose code the wallet has already decided about. */
  readonly decided = new Set<string>();

  private constructor(
    playerId: string,
    lnAddress: string | undefined,
    node: string,
    room: SdkRoom,
  ) {
    this.playerId = playerId;
    this.lnAddress = lnAddress;
    this.node = node;
    this.roomId = room.roomId;
    this.room = room;
    room.reconnection.enabled = false;
    room.onMessage('op', (answer: Omit<OpResult, 'ms' | 'kind'>) => {
      this.#waiting.get(answer.seq)?.(answer);
      this.#waiting.delete(answer.seq);
    });
    const gone = () => {
      this.connected = false;
      for (const [seq, resolve] of this.#waiting) resolve({ seq, ok: false, error: 'left' });
      this.#waiting.clear();
    };
    room.onLeave(gone);
    room.onDrop(gone);
  }

  static async join(
    url: string,
    node: string,
    roomId: string,
    playerId: string,
    lnAddress?: string,
  ) {
    const sdk = new ColyseusSDK(url.replace(/^http/, 'ws'));
    const room = await sdk.joinById(roomId, {
      playerId,
      email: emailOf(playerId),
      ...(lnAddress ? { lnAddress } : {}),
    });
    return new Player(playerId, lnAddress, node, room);
  }

  /** Sends one op and resolves with its answer (never rejects); `dice` for a match step. */
  op(
    kind: OpKind,
    amount: number,
    expiresIn: number,
    timeoutMs: number,
    dice: number[] = [],
  ): Promise<OpResult> {
    const seq = ++seqs;
    const started = performance.now();
    return new Promise<OpResult>((resolve) => {
      const done = (answer: Omit<OpResult, 'ms' | 'kind'>) => {
        clearTimeout(timer);
        resolve({ ...answer, kind, ms: performance.now() - started });
      };
      const timer = setTimeout(() => {
        this.#waiting.delete(seq);
        done({ seq, ok: false, error: 'no answer' });
      }, timeoutMs);
      if (!this.connected) return done({ seq, ok: false, error: 'left' });
      this.#waiting.set(seq, done);
      this.room.send('op', { seq, kind, amount, expiresIn, dice });
    });
  }

  /** Every entry on this player's screen now. */
  entries(): SeenEntry[] {
    const lightning = (this.room.state as ClientState | undefined)?.lightning;
    const all: SeenEntry[] = [];
    const maps = [
      ['reward', lightning?.rewards],
      ['entryFee', lightning?.entryFees],
      ['spend', lightning?.pointSpends],
      ['payment', lightning?.payments],
    ] as const;
    for (const [kind, map] of maps) {
      map?.forEach((entry, id) => {
        all.push({
          id,
          kind,
          status: entry.status,
          code: entry.code,
          description: entry.description,
          expiresAt: entry.expiresAt,
        });
      });
    }
    return all;
  }

  async leave(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    await this.room.leave(true).catch(() => {});
  }
}

export function emailOf(playerId: string): string {
  return `${playerId}@soak.example`;
}

export interface WalletOptions {
  /** Share of codes the player pays or claims. */
  payRate: number;
  /** Share of those paid or claimed after their deadline (must change nothing). */
  lateRate: number;
  /** Share of fees paid a second time (the one slot is taken: refused). */
  secondRate: number;
  /** The longest wait before acting on a code, ms. */
  maxDelayMs: number;
  /** Entries' lifetime, ms (for the late acts). */
  expiresInMs: number;
  /** Share of a match's fees paid after their deadline (of those paid). */
  matchLateRate: number;
  /** Share of a match's claim codes claimed after their deadline (of those claimed). */
  potLateRate: number;
}

/** A match's fee, payout or refund: the game names its matches `match ...` (game-server.ts). */
export function isMatchEntry(entry: Pick<SeenEntry, 'description'>): boolean {
  return entry.description.startsWith('match ');
}

/**
 * The players' wallets: acts on codes that reached their owners' screens. Also records which
 * entries each player saw (a client does not receive an entry's owner: the run checks them
 * against the ledger, `foreignSightings`).
 */
export class Wallets {
  readonly acts: WalletAct[] = [];
  /** Each entry id a player's screen showed, by that player id. */
  readonly sightings = new Map<string, Set<string>>();
  readonly #emulator: Emulator;
  readonly #random: Random;
  readonly #options: WalletOptions;
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Claims of match codes kept for after their deadline. */
  #afterDeadline: (() => void)[] = [];

  constructor(emulator: Emulator, random: Random, options: WalletOptions) {
    this.#emulator = emulator;
    this.#random = random;
    this.#options = options;
  }

  /** Looks at every player's screen once. */
  look(players: Iterable<Player>): void {
    for (const player of players) {
      if (!player.connected) continue;
      for (const entry of player.entries()) {
        const seen = this.sightings.get(player.playerId) ?? new Set<string>();
        this.sightings.set(player.playerId, seen);
        seen.add(entry.id);
        if (entry.kind === 'spend' || entry.kind === 'payment') continue;
        if (!entry.code || player.decided.has(entry.id)) continue;
        // A code first seen on an ended entry is not one a player would scan.
        if (entry.status !== 'pending') continue;
        player.decided.add(entry.id);
        this.#decide(entry);
      }
    }
  }

  #decide(entry: SeenEntry): void {
    const r = this.#random;
    const o = this.#options;
    if (!r.chance(o.payRate)) return;
    const match = isMatchEntry(entry);
    const late = r.chance(
      !match ? o.lateRate : entry.kind === 'reward' ? o.potLateRate : o.matchLateRate,
    );
    const resourceId = resourceOf(entry.code as string);
    const act = (second: boolean) => this.#act(entry, resourceId, late, second);
    if (late && match && entry.kind === 'reward') {
      // A match's code lives a minute or more: claimed once time has passed its deadline.
      this.#afterDeadline.push(() => act(false));
      return;
    }
    const delay = late ? o.expiresInMs + r.int(200, 1_500) : r.int(0, o.maxDelayMs);
    this.#later(delay, () => {
      act(false);
      if (entry.kind === 'entryFee' && r.chance(o.secondRate))
        this.#later(r.int(0, 300), () => act(true));
    });
  }

  #act(entry: SeenEntry, resourceId: string, late: boolean, second: boolean): void {
    const control = this.#emulator.control;
    const result =
      entry.kind === 'reward'
        ? control.claimWithdrawal(resourceId)
        : control.payStaticCharge(resourceId);
    this.acts.push({
      kind: entry.kind === 'reward' ? 'claim' : 'pay',
      resourceId,
      intentId: entry.id,
      ok: result.status === 'OK',
      ...(result.status === 'OK' ? {} : { reason: (result as { reason?: string }).reason }),
      late,
      second,
      match: isMatchEntry(entry),
    });
  }

  /** Time has passed the match codes' deadlines: the late claims are made now (refused). */
  actAfterDeadline(): number {
    const due = this.#afterDeadline;
    this.#afterDeadline = [];
    for (const act of due) act();
    return due.length;
  }

  #later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
  }

  /** Acts still waiting (late ones run past the ops). */
  get waiting(): number {
    return this.#timers.size;
  }

  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}

/** The resource id behind an LNURL code: `/lnurl/withdraw/<id>` or `/lnurl/pay/<id>`. */
export function resourceOf(code: string): string {
  const url = new URL(decodeLnurl(code));
  const id = url.pathname.split('/').at(-1);
  if (!id) throw new Error(`no resource in ${url.href}`);
  return id;
}

/** The entries some player saw that the ledger says are another player's (or no one's). */
export function foreignSightings(
  wallets: Wallets,
  intents: readonly { id: string; kind: string; playerId: string }[],
): string[] {
  const byId = new Map(intents.map((i) => [i.id, i]));
  const found: string[] = [];
  for (const [viewer, ids] of wallets.sightings) {
    for (const id of ids) {
      const intent = byId.get(id);
      if (intent?.playerId !== viewer) {
        found.push(
          `${viewer} saw ${intent?.kind ?? 'entry'} ${id} of ${intent?.playerId ?? 'nobody'}`,
        );
      }
    }
  }
  return found;
}
