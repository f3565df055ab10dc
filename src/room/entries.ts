/**
 * The room's entries: an intent's live copy in the room's LightningState, shown in its owner's
 * StateView only (a reward's code is a bearer secret), updated as settlements arrive, and
 * taken out `lingerMs` after it ended so the owner sees the outcome first.
 *
 * Cost: per entry one schema instance and one StateView add per connected owner client; only
 * @colyseus/schema's public API is used.
 */
import type { Client, Room } from '@colyseus/core';
import { StateView } from '@colyseus/schema';
import { ConfigurationError } from '../errors.js';
import { type Intent, type IntentKind, isTerminal } from '../ledger/intent.js';
import { KINDS } from '../server/kinds/index.js';
import type { RoomMap } from '../server/kinds/kind.js';
import { matchIdOf, purposeOf } from '../server/purpose.js';
import type { PluginSettings } from './options.js';
import {
  AddressPayment,
  type Entry,
  EntryFee,
  LightningState,
  PointSpend,
  Reward,
} from './state.js';

type EntryMap = {
  get(id: string): Entry | undefined;
  set(id: string, entry: Entry): unknown;
  delete(id: string): unknown;
  values(): Iterable<Entry>;
};

export class RoomEntries {
  readonly #room: Room;
  readonly #settings: PluginSettings;

  constructor(room: Room, settings: PluginSettings) {
    this.#room = room;
    this.#settings = settings;
  }

  /** The room's LightningState, or undefined when it has none (yet). */
  find(): LightningState | undefined {
    const state = this.#settings.state
      ? this.#settings.state(this.#room)
      : (this.#room.state as { lightning?: LightningState } | undefined)?.lightning;
    return state instanceof LightningState ? state : undefined;
  }

  /** The room's LightningState; checked before any money moves, so a room without one fails fast. */
  require(): LightningState {
    const state = this.find();
    if (!state) {
      throw new ConfigurationError(
        'state',
        `room ${this.#room.roomName ?? this.#room.constructor.name} has no LightningState: add \`lightning: LightningState\` to its state (schema({ ..., lightning: LightningState })), or pass the plugin options.state`,
      );
    }
    return state;
  }

  /** A player's entries in this room (open and lingering). */
  of(playerId: string): Entry[] {
    return this.all().filter((e) => e.playerId === playerId);
  }

  /** Every entry of the room, of every player. */
  all(): Entry[] {
    const state = this.find();
    return state ? ROOM_MAPS.flatMap((map) => [...(state[map] as EntryMap).values()]) : [];
  }

  /**
   * Shows a (re)joining client the entry maps, empty, and its own entries in them. Adding the
   * price (which every client sees anyway) to its view introduces the `.view()` maps without
   * another player's entry (adding a map would add every entry in it).
   */
  showTo(client: Client, playerId: string): void {
    const state = this.find();
    if (!state) return;
    client.view ??= new StateView();
    client.view.add(state.price);
    for (const entry of this.of(playerId)) client.view.add(entry);
  }

  /** The intent's entry in the state, if it is there. */
  get(intent: Pick<Intent, 'id' | 'kind'>): Entry | undefined {
    const state = this.find();
    return state ? mapOf(state, intent.kind).get(intent.id) : undefined;
  }

  /** A reading as an entry of no state, for an intent whose entry already left it. */
  copyOf(intent: Intent): Entry {
    const entry = newEntry(intent);
    write(entry, intent);
    return entry;
  }

  /**
   * Writes a reading into its entry, or puts a new entry in the state shown to its owner's
   * clients. Null when the reading changes nothing the entry shows: an older one (settlements
   * arrive out of order), one that would leave a terminal status, or a repeated delivery, and
   * for a kind that never appears in a room.
   */
  upsert(
    intent: Intent,
    state: LightningState,
    owner: (c: Client) => string | undefined,
  ): Entry | null {
    // A kind with no room map (a tab's credit) moves only the balance the room's tabs follow.
    if (KINDS[intent.kind].room === null) return null;
    const map = mapOf(state, intent.kind);
    const known = map.get(intent.id);
    if (known !== undefined) return update(known, intent) ? known : null;
    const entry = newEntry(intent);
    write(entry, intent);
    map.set(intent.id, entry);
    for (const client of this.#room.clients) {
      if (owner(client) !== intent.playerId) continue;
      client.view ??= new StateView();
      client.view.add(entry);
    }
    return entry;
  }

  /** Takes an ended entry out after `lingerMs`; its owner's client sees it deleted. */
  lingerThenRemove(intent: Intent): void {
    // Its kind and id only: the timer must not keep the whole intent alive for lingerMs.
    const { kind, id } = intent;
    this.#room.clock.setTimeout(() => {
      const state = this.find();
      if (state) mapOf(state, kind).delete(id);
    }, this.#settings.lingerMs);
  }
}

/** A newer reading into an entry; false when it shows nothing new (then only its time is kept). */
function update(entry: Entry, intent: Intent): boolean {
  if (intent.updatedAt < entry.updatedAt) return false;
  if (isTerminal(entry.status) && !isTerminal(intent.status)) return false;
  const same =
    entry.status === intent.status &&
    entry.expiresAt === (intent.expiresAt ?? 0) &&
    (!(entry instanceof Reward || entry instanceof EntryFee) ||
      entry.code === (intent.code ?? '')) &&
    (!(entry instanceof AddressPayment) || entry.lnAddress === lnAddressOf(intent));
  if (same) {
    entry.updatedAt = intent.updatedAt;
    return false;
  }
  write(entry, intent);
  return true;
}

/** The fields a reading changes: status, deadline, time, and the code or the address paid. */
function write(entry: Entry, intent: Intent): void {
  entry.status = intent.status;
  entry.expiresAt = intent.expiresAt ?? 0;
  entry.updatedAt = intent.updatedAt;
  if (entry instanceof Reward || entry instanceof EntryFee) {
    entry.code = intent.code ?? '';
  }
  if (entry instanceof AddressPayment) {
    entry.lnAddress = lnAddressOf(intent);
  }
}

function lnAddressOf(intent: Intent): string {
  const address = intent.meta.lnAddress;
  return typeof address === 'string' ? address : '';
}

/** The room map a kind's entries live in (its rules say which, kinds/). */
function roomMapOf(kind: IntentKind): RoomMap {
  const map = KINDS[kind].room;
  if (map === null) throw new Error(`a ${kind} never appears in a room as an entry`);
  return map;
}

function mapOf(state: LightningState, kind: IntentKind): EntryMap {
  return state[roomMapOf(kind)] as EntryMap;
}

/** The synced class of each room map's entries. */
const ENTRY_CLASS: Record<RoomMap, new () => Entry> = {
  rewards: Reward,
  entryFees: EntryFee,
  pointSpends: PointSpend,
  payments: AddressPayment,
};
const ROOM_MAPS = Object.keys(ENTRY_CLASS) as RoomMap[];

/**
 * A new entry, synced fields written in declared order, `status` first: Colyseus's value array
 * grows as fields are set, and a first write at a high index keeps it large for the entry's life.
 */
function newEntry(intent: Intent): Entry {
  const map = roomMapOf(intent.kind);
  const entry = new ENTRY_CLASS[map]();
  entry.status = intent.status;
  entry.amount = intent.amount;
  entry.unit = intent.unit;
  entry.description = intent.description;
  entry.expiresAt = intent.expiresAt ?? 0;
  entry.purpose = purposeOf(intent);
  entry.matchId = matchIdOf(intent);
  entry.kind = intent.kind as never;
  entry.id = intent.id;
  entry.playerId = intent.playerId;
  return entry;
}
