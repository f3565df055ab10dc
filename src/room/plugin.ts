/**
 * The room plugin: money helpers for a Colyseus room, with live entries in its state that
 * only their owner can see.
 *
 * Usage:
 *
 *   class Arena extends Room<{ state: ArenaState }> {
 *     state = new ArenaState();                       // has `lightning: LightningState`
 *     plugins = definePlugins([lightning.plugin()]);
 *     onCreate() {
 *       this.plugins.lightning.onEntryFeePaid((fee) => this.markPaid(fee.playerId));
 *     }
 *     async payWinner(client: Client) {
 *       await this.plugins.lightning.reward(client, { amountMsat: 50_000, description: 'Win' });
 *     }
 *   }
 *
 * Footprint: one presence subscription per room; per entry one schema instance, added to its
 * owner's StateView; per settlement one ledger read. Nothing runs per message or per tick.
 *
 * What players observe: the owner's client gets the entry (with the QR `code` for rewards and
 * fees) and sees its `status` move from `pending` to `completed`/`expired`/`failed`; no other
 * client ever receives the entry. Ended entries leave the state after `lingerMs`.
 */
import { EventEmitter } from 'node:events';
import type { Client, Room } from '@colyseus/core';
import { RoomPlugin } from '@colyseus/core';
import { StateView } from '@colyseus/schema';
import { InvalidArgumentError } from '../api/errors.js';
import { parseInput } from '../api/inputs.js';
import { type Intent, type IntentStatus, isTerminal } from '../ledger/intent.js';
import type { LightningCore } from '../server/core.js';
import { roomChannel, type SettlementMessage } from '../server/settlement.js';
import {
  disclosureArgs,
  type EntryFeeArgs,
  emailArg,
  entryFeeArgs,
  type PurchaseArgs,
  purchaseArgs,
  type RewardArgs,
  rewardArgs,
  type SpendArgs,
  spendArgs,
  type WidgetArgs,
  widgetArgs,
} from './inputs.js';
import { type PlayerRef, playerOf } from './players.js';
import { type Entry, EntryFee, LightningState, PointSpend, Reward } from './state.js';
import { type PurchaseSession, WidgetAccess, type WidgetSession } from './widget-access.js';

export interface LightningPluginOptions {
  /** Where the room keeps its LightningState. Default: `room.state.lightning`. */
  state?: (room: Room) => LightningState | undefined;
  /**
   * Who a client is, as the ledger and the service know them. Default: `client.auth.id`, then
   * `client.userData.playerId`, then `client.sessionId` (which changes on every join: give
   * players a stable id so that a rejoining player gets their entries back).
   */
  playerId?: (client: Client) => string;
  /** The player's email, used to create their widget user. Default `auth.email`, `userData.email`. */
  email?: (client: Client) => string | undefined;
  /** The service's widget user id of a player. Default: created by reference_id, then cached. */
  widgetUser?: (client: Client, playerId: string) => Promise<string>;
  /** How long an ended entry stays in the state so its owner sees the outcome. Default 30,000 ms. */
  lingerMs?: number;
}

type Kind = 'reward' | 'entryFee' | 'spend';
type Listener = (entry: Entry, intent: Intent) => void;

export class LightningPlugin extends RoomPlugin {
  override readonly pluginName = 'lightning' as const;
  protected override order = { onJoin: 'after' as const };

  readonly #core: LightningCore;
  readonly #options: LightningPluginOptions;
  readonly #events = new EventEmitter();
  readonly #waiters = new Map<string, ((entry: Entry) => void)[]>();
  /** Entries whose end was announced: a repeated delivery must not fire the hooks again. */
  readonly #ended = new Set<string>();
  readonly #widget: WidgetAccess;
  #channel: string | undefined;
  #attached: Promise<void> | undefined;
  #onMessage = (message: unknown) => void this.#deliver(message as SettlementMessage);

  constructor(core: LightningCore, options: LightningPluginOptions = {}) {
    super();
    this.#core = core;
    this.#options = options;
    this.#widget = new WidgetAccess(core, options);
  }

  // ---- money helpers --------------------------------------------------------------------

  /**
   * Pays a player a reward they claim with a wallet (a withdrawal request whose `internalId` is
   * the player id). Resolves with the entry once created (`pending`), not once claimed.
   */
  async reward(player: PlayerRef, args: RewardArgs): Promise<Reward> {
    const input = parseInput(rewardArgs, args, 'reward');
    const playerId = this.#playerId(player);
    const state = this.#state();
    await this.#attach('helper');
    const intent = await this.#core.reward({ ...input, playerId, roomId: this.room.roomId });
    return this.#upsert(intent, state) as Reward;
  }

  /**
   * Charges a player an entry fee (a static charge for exactly that amount, one payment).
   * `settled` resolves with the entry once it is paid (`completed`), or ends `expired`/`failed`:
   * gate play on `(await settled).status === 'completed'`.
   */
  async chargeEntryFee(
    player: PlayerRef,
    args: EntryFeeArgs,
  ): Promise<{ entry: EntryFee; settled: Promise<EntryFee> }> {
    const input = parseInput(entryFeeArgs, args, 'chargeEntryFee');
    const playerId = this.#playerId(player);
    const state = this.#state();
    await this.#attach('helper');
    const intent = await this.#core.chargeEntryFee({
      ...input,
      playerId,
      roomId: this.room.roomId,
    });
    const entry = this.#upsert(intent, state) as EntryFee;
    // A settlement delivered before this line already ended the entry: read the entry, which
    // holds the latest status, rather than the intent as the create call returned it.
    const settled = isTerminal(entry.status as IntentStatus)
      ? Promise.resolve(entry)
      : new Promise<EntryFee>((resolve) => this.#wait(intent.id, (e) => resolve(e as EntryFee)));
    return { entry, settled };
  }

  /**
   * Spends a player's points (deplete, keyed so it applies once however often it is retried).
   * Resolves with the completed entry; throws InsufficientPointsError when their balance is
   * short (nothing is debited).
   */
  async spendPoints(client: Client, args: SpendArgs): Promise<PointSpend> {
    const input = parseInput(spendArgs, args, 'spendPoints');
    const playerId = this.#playerId(client);
    const state = this.#state();
    await this.#attach('helper');
    const userId = await this.#widget.userId(client, playerId);
    const intent = await this.#core.spendPoints({
      ...input,
      playerId,
      userId,
      roomId: this.room.roomId,
    });
    return this.#upsert(intent, state) as PointSpend;
  }

  /** Opens the service's widget for this player: sent to that client only (`lightning:widget`). */
  async openWidget(client: Client, args?: WidgetArgs): Promise<WidgetSession> {
    const input = parseInput(widgetArgs, args, 'openWidget');
    const playerId = this.#playerId(client);
    const session = await this.#widget.openWidget(client, playerId, this.room.roomId, input);
    client.send('lightning:widget', session);
    return session;
  }

  /** Opens a purchase (ramp) session for this player: sent to that client only (`lightning:purchase`). */
  async openPurchase(client: Client, args?: PurchaseArgs): Promise<PurchaseSession> {
    const input = parseInput(purchaseArgs, args, 'openPurchase');
    const playerId = this.#playerId(client);
    const session = await this.#widget.openPurchase(client, playerId, this.room.roomId, input);
    client.send('lightning:purchase', session);
    return session;
  }

  /** Records the player's acceptance of disclosures (2 terms, 3 privacy, 6 EFT), server-side. */
  async acceptDisclosures(client: Client, typeIds: readonly number[]) {
    const ids = parseInput(disclosureArgs, typeIds, 'typeIds');
    return this.#widget.acceptDisclosures(client, this.#playerId(client), ids);
  }

  /** Changes the email the widget sends this player's one-time codes to. */
  async updateEmail(client: Client, email: string) {
    const address = parseInput(emailArg, email, 'email');
    return this.#widget.updateEmail(client, this.#playerId(client), address);
  }

  // ---- room hooks -----------------------------------------------------------------------

  /** Any entry of this room reached `completed`, `expired` or `failed`. */
  onSettled(listener: Listener): () => void {
    return this.#on('settled', listener);
  }
  /** A reward was claimed by its player. */
  onRewardClaimed(listener: (entry: Reward, intent: Intent) => void): () => void {
    return this.#on('reward.completed', listener as Listener);
  }
  /** An entry fee was paid. */
  onEntryFeePaid(listener: (entry: EntryFee, intent: Intent) => void): () => void {
    return this.#on('entryFee.completed', listener as Listener);
  }
  /** A reward or entry fee expired unclaimed or unpaid. */
  onExpired(listener: Listener): () => void {
    return this.#on('expired', listener);
  }

  /** The player's entries in this room (open and lingering). */
  entriesOf(player: PlayerRef): Entry[] {
    const playerId = this.#playerId(player);
    const state = this.#findState();
    return state ? entriesIn(state).filter((e) => e.playerId === playerId) : [];
  }

  protected override async onCreate(): Promise<void> {
    await this.#attach('onCreate');
  }

  protected override onJoin(client: Client): void {
    // Runs after the room's own onJoin, so a view the room created is kept, not replaced, and
    // the identity the room set (userData, auth) is the one read here.
    const mine = this.entriesOf(client);
    if (mine.length === 0) return;
    client.view ??= new StateView();
    for (const entry of mine) client.view.add(entry);
  }

  protected override onDispose(): void {
    if (this.#channel) this.#core.presence()?.unsubscribe(this.#channel, this.#onMessage);
    this.#events.removeAllListeners();
    this.#waiters.clear();
  }

  // ---- internals ------------------------------------------------------------------------

  /**
   * Subscribes to the room's settlement channel, once. Normally from onCreate; the helpers
   * call it too because Colyseus 0.18 skips plugin hooks on the first instance of a room class
   * that defines `onUncaughtException` (its constructor binds the room's own hooks before the
   * plugin wrappers are installed): settlements must reach the room all the same.
   */
  #attach(from: 'onCreate' | 'helper'): Promise<void> {
    if (this.#attached) return this.#attached;
    if (from === 'helper') {
      this.#core.logger.warn(
        `room ${this.room.roomId}: the lightning plugin's onCreate did not run (a room with onUncaughtException, Colyseus 0.18); rejoining players of this room will not get their entries back`,
      );
    }
    const presence = this.room.presence;
    if (presence) this.#core.usePresence(presence as never);
    this.#channel = roomChannel(this.room.roomId);
    const subscribed = (this.#core.presence() ?? presence)?.subscribe(
      this.#channel,
      this.#onMessage,
    );
    this.#attached = Promise.resolve(subscribed).then(() => undefined);
    return this.#attached;
  }

  #on(event: string, listener: Listener): () => void {
    this.#events.on(event, listener);
    return () => this.#events.off(event, listener);
  }

  #playerId(player: PlayerRef): string {
    return playerOf(player, this.#options.playerId);
  }

  #findState(): LightningState | undefined {
    const state = this.#options.state
      ? this.#options.state(this.room)
      : (this.room.state as { lightning?: LightningState } | undefined)?.lightning;
    return state instanceof LightningState ? state : undefined;
  }

  /** The room's LightningState; checked before any money moves, so a room without one fails fast. */
  #state(): LightningState {
    const state = this.#findState();
    if (!state) {
      throw new InvalidArgumentError(
        'state',
        "the room has no LightningState: add `lightning: LightningState` to the room's state, or pass options.state",
      );
    }
    return state;
  }

  /** Puts the intent's entry in the state (or updates it) and shows it to its owner only. */
  #upsert(intent: Intent, state: LightningState): Entry {
    const kind = intent.kind as Kind;
    const map = mapOf(state, kind) as {
      get(id: string): Entry | undefined;
      set(id: string, e: Entry): unknown;
    };
    let entry = map.get(intent.id);
    const isNew = entry === undefined;
    if (!entry) {
      entry =
        kind === 'reward' ? new Reward() : kind === 'entryFee' ? new EntryFee() : new PointSpend();
      entry.id = intent.id;
      entry.kind = intent.kind;
      entry.playerId = intent.playerId;
      entry.amount = intent.amount;
      entry.unit = intent.unit;
      entry.description = intent.description;
      entry.createdAt = intent.createdAt;
    }
    // Settlements may arrive out of order (a create answer after its own callback): an older
    // reading never overwrites a newer one, and a terminal status is never left.
    const stale =
      intent.updatedAt < entry.updatedAt ||
      (!isNew && isTerminal(entry.status as IntentStatus) && !isTerminal(intent.status));
    if (stale) return entry;
    entry.status = intent.status;
    entry.expiresAt = intent.expiresAt ?? 0;
    entry.updatedAt = intent.updatedAt;
    if (entry instanceof Reward || entry instanceof EntryFee) {
      entry.code = intent.code ?? '';
      entry.uri = intent.uri ?? '';
    }
    if (isNew) {
      map.set(intent.id, entry);
      for (const client of this.room.clients) {
        if (this.#ownerOf(client) !== intent.playerId) continue;
        client.view ??= new StateView();
        client.view.add(entry);
      }
    }
    return entry;
  }

  /** The player id of a connected client, or undefined when options.playerId cannot tell. */
  #ownerOf(client: Client): string | undefined {
    try {
      return this.#playerId(client);
    } catch {
      return undefined;
    }
  }

  async #deliver(message: SettlementMessage): Promise<void> {
    try {
      const intent = await this.#core.ledger.get(message.id);
      if (!intent || intent.roomId !== this.room.roomId) return;
      const state = this.#findState();
      if (!state) return;
      if (this.#ended.has(intent.id)) return;
      const entry = this.#upsert(intent, state);
      if (!isTerminal(intent.status)) return;
      this.#ended.add(intent.id);
      const waiters = this.#waiters.get(intent.id) ?? [];
      this.#waiters.delete(intent.id);
      for (const resolve of waiters) resolve(entry);
      this.#emit('settled', entry, intent);
      this.#emit(`${intent.kind}.${intent.status}`, entry, intent);
      if (intent.status === 'expired') this.#emit('expired', entry, intent);
      this.room.clock.setTimeout(() => this.#remove(intent), this.#options.lingerMs ?? 30_000);
    } catch (err) {
      this.#core.logger.warn(
        `delivering ${message.id} to room ${this.room.roomId}: ${(err as Error).message}`,
      );
    }
  }

  /** Takes an ended entry out of the state; its owner's client sees it deleted. */
  #remove(intent: Intent): void {
    const state = this.#findState();
    if (!state) return;
    mapOf(state, intent.kind as Kind).delete(intent.id);
  }

  #emit(event: string, entry: Entry, intent: Intent): void {
    try {
      this.#events.emit(event, entry, intent);
    } catch (err) {
      this.#core.logger.error(`a room '${event}' listener threw: ${(err as Error).message}`);
    }
  }

  #wait(id: string, resolve: (entry: Entry) => void): void {
    const list = this.#waiters.get(id) ?? [];
    list.push(resolve);
    this.#waiters.set(id, list);
  }
}

function mapOf(state: LightningState, kind: Kind) {
  return kind === 'reward'
    ? state.rewards
    : kind === 'entryFee'
      ? state.entryFees
      : state.pointSpends;
}

function entriesIn(state: LightningState): Entry[] {
  return [...state.rewards.values(), ...state.entryFees.values(), ...state.pointSpends.values()];
}
