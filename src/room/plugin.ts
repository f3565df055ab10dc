/**
 * The room plugin: money helpers for a Colyseus room, with live entries in its state that
 * only their owner can see.
 *
 * Usage:
 *
 *   // rooms/Arena.ts                                (lightning.ts: export const lightning = createLightning())
 *   export class Arena extends Room<{ state: ArenaState }> {   // ArenaState has `lightning: LightningState`
 *     state = new ArenaState();
 *     plugins = definePlugins([lightning.plugin()]);
 *     onCreate() { this.plugins.lightning.onEntryFeePaid((fee) => this.markPaid(fee.playerId)); }
 *     payWinner(client: Client) { return this.plugins.lightning.reward(client, { amountMsat: 50_000, description: 'Win' }); }
 *   }
 *
 * Footprint: one presence subscription per room; per entry one schema instance in its owner's
 * StateView; per move one write of the entry (another process's move costs one ledger read);
 * with `immediatePush`, one patch per event-loop turn that changed entries. Nothing per tick.
 * Only the owner's client ever receives an entry; ended entries leave after `lingerMs`.
 */
import type { Client } from '@colyseus/core';
import { ErrorCode, RoomPlugin, ServerError } from '@colyseus/core';
import {
  InsufficientFundsError,
  NotSignedInError,
  SIGN_IN_FIX,
  WithdrawalTooSmallError,
} from '../errors.js';
import { type Intent, isTerminal } from '../ledger/intent.js';
import { parseInput } from '../parse.js';
import { touchesTab } from '../server/kinds/index.js';
import { isMatch } from '../server/kinds/match.js';
import { roomChannel, type SettlementMessage } from '../server/settlement.js';
import { RegionGate } from './addresses.js';
import { RoomEntries } from './entries.js';
import { RoomHooks, type RoomListener } from './hooks.js';
import type { MoneyCalls, PluginHost } from './host.js';
import {
  disclosureArgs,
  type EntryFeeArgs,
  emailArg,
  entryFeeArgs,
  type MatchArgs,
  matchArgs,
  type PayAddressArgs,
  type PurchaseArgs,
  payAddressArgs,
  purchaseArgs,
  type RewardArgs,
  rewardArgs,
  type SpendArgs,
  spendArgs,
  type TabCreditArgs,
  tabCreditArgs,
  type WidgetArgs,
  type WithdrawArgs,
  widgetArgs,
  withdrawArgs,
} from './inputs.js';
import { type MatchEntryOptions, RoomMatch } from './match.js';
import {
  type LightningPluginOptions,
  type PluginSettings,
  resolvePluginOptions,
} from './options.js';
import { clientOf, defaultPlayerId, type PlayerRef, playerOf, recordableId } from './players.js';
import type {
  AddressPayment,
  ChargedEntryFee,
  Entry,
  EntryFee,
  PointSpend,
  Reward,
  Tab,
} from './state.js';
import { RoomTabs } from './tabs.js';
import { type PurchaseSession, WidgetAccess, type WidgetSession } from './widget-access.js';

/** How long after its entry left the state a room still remembers that an intent ended. */
const ENDED_MEMORY_MS = 5 * 60_000;

export class LightningPlugin extends RoomPlugin {
  override readonly pluginName = 'lightning' as const;
  // onAuth after the room's own: a client the room refuses costs the gate nothing.
  protected override order = { onJoin: 'after' as const, onAuth: 'after' as const };

  readonly #host: PluginHost;
  readonly #settings: PluginSettings;
  readonly #widget: WidgetAccess;
  /** Ends this room applied (no hook fires twice), in end order with a forget time: no timer. */
  readonly #ended = new Map<string, number>();
  #hooks: RoomHooks;
  #entries: RoomEntries | undefined;
  #tabs: RoomTabs | undefined;
  /** Players whose automatic withdrawal is under way: one at a time each. */
  readonly #withdrawing = new Set<string>();
  /** What the room stops following when it goes: the feed, the hand-over, the price, sockets. */
  readonly #offs: (() => void)[] = [];
  /** Resolves, once attached, with the money operations the host hands down. */
  #attached: Promise<MoneyCalls> | undefined;
  /** With `regionGate` only. */
  readonly #gate: RegionGate | null;
  /** Kept alive while the room lives, aborted when it goes. */
  readonly #matches = new Map<string, RoomMatch>();
  #pushPending = false;
  #catchingUp = false;
  #disposed = false;

  /** Use `lightning.plugin(options)`. */
  constructor(host: PluginHost, options: LightningPluginOptions = {}) {
    super();
    this.#host = host;
    this.#settings = resolvePluginOptions(options);
    this.#widget = new WidgetAccess(host, this.#settings);
    this.#hooks = new RoomHooks(host.logger);
    this.#gate = this.#settings.regionGate ? new RegionGate(host) : null;
    if (this.#gate) this.onAuth = this.#gate.noteAuth;
  }

  // ---- money helpers: each parses its arguments once; nothing behind the host parses again

  /** Pays a player a reward they claim with a wallet; resolves with its entry, `pending`. */
  async reward(player: PlayerRef, args: RewardArgs): Promise<Reward> {
    const input = parseInput(rewardArgs, args, 'reward');
    const { playerId, money } = await this.#payer(player);
    const intent = await money.reward({ ...input, playerId, roomId: this.#roomId() });
    return this.#entryOf(intent) as Reward;
  }

  /**
   * Pays a player straight to their Lightning address, once; resolves with its entry once the
   * service took it. A lost answer rejects (AmbiguousResultError): `unknown`, never sent again.
   */
  async payAddress(player: PlayerRef, args: PayAddressArgs): Promise<AddressPayment> {
    const input = parseInput(payAddressArgs, args, 'payAddress');
    const { playerId, money } = await this.#payer(player);
    const intent = await money.payAddress({ ...input, playerId, roomId: this.#roomId() });
    return this.#entryOf(intent) as AddressPayment;
  }

  /** Charges a player an entry fee; `settled` resolves with its entry once it ended. */
  async chargeEntryFee(player: PlayerRef, args: EntryFeeArgs): Promise<ChargedEntryFee> {
    const input = parseInput(entryFeeArgs, args, 'chargeEntryFee');
    const { playerId, money } = await this.#payer(player);
    return this.#charged(
      await money.chargeEntryFee({ ...input, playerId, roomId: this.#roomId() }),
    );
  }

  /** Spends a player's points, once; InsufficientPointsError when they are short. */
  async spendPoints(client: Client, args: SpendArgs): Promise<PointSpend> {
    const input = parseInput(spendArgs, args, 'spendPoints');
    const { playerId, money } = await this.#payer(clientOf(client));
    const userId = await this.#widget.userId(client, playerId);
    const roomId = this.#roomId();
    const intent = await money.spendPoints({ ...input, playerId, userId, roomId });
    return this.#entryOf(intent) as PointSpend;
  }

  /**
   * Credits the player's tab (docs/MATCHES.md): recorded at once, with no service call; under a
   * `key` already used for the player, the first credit stands. Refused (TimeInRoomError)
   * before the client has been in the room `tabs.minTimeInRoomMs`. Resolves with the player's
   * tab, its balance read after the credit.
   */
  async credit(client: Client, args: TabCreditArgs): Promise<Tab> {
    const input = parseInput(tabCreditArgs, args, 'credit');
    const joined = clientOf(client);
    const { playerId, money } = await this.#payer(joined);
    const admit = () =>
      this.#roomTabs().admit(joined, playerId, this.#settings.tabs.minTimeInRoomMs);
    await money.credit({ ...input, playerId, roomId: this.#roomId() }, admit);
    const tab = await this.#roomTabs().after(playerId);
    const line = this.#settings.tabs.withdrawAtMsat;
    if (line !== null && BigInt(tab.balance) >= BigInt(line)) this.#withdrawAll(playerId, 'line');
    return tab;
  }

  /**
   * Turns the player's tab, or `amountMsat` of it, into one claim code only they see (their
   * `rewards` entry, resolved `pending`). Less than asked: InsufficientFundsError; a tab under
   * `tabs.minWithdrawalMsat` (an empty one too): WithdrawalTooSmallError; nothing recorded or
   * sent. A code that ends unclaimed returns to the tab, and the balance the player sees follows.
   */
  async withdraw(player: PlayerRef, args?: WithdrawArgs): Promise<Reward> {
    const input = parseInput(withdrawArgs, args, 'withdraw');
    const { playerId, money } = await this.#payer(player);
    const intent = await money.withdraw({ ...input, playerId, roomId: this.#roomId() });
    await this.#roomTabs().latest(playerId);
    return this.#entryOf(intent) as Reward;
  }

  /**
   * Opens a match: entry fees in escrow, paid out (`settle`) or refunded (`abort`) once; every
   * client sees it in `state.lightning.matches`. It lives while the room does.
   */
  async openMatch(args: MatchArgs): Promise<RoomMatch> {
    const input = parseInput(matchArgs, args, 'openMatch');
    const entries = this.#roomEntries();
    entries.require();
    await this.#attach('helper');
    const calls = await this.#host.matches();
    const view = await calls.open({ ...input, roomId: this.#roomId() });
    const match = new RoomMatch(
      view,
      {
        calls,
        enter: (m, client, options) => this.#enterMatch(m, client, options),
        state: () => entries.find(),
        clock: this.room.clock,
        lingerMs: this.#settings.lingerMs,
        onGone: (id) => this.#matches.delete(id),
        onError: (message) => this.#host.logger.warn(`room ${this.room.roomId}: ${message}`),
      },
      input.timeoutMs,
    );
    this.#matches.set(match.id, match);
    return match;
  }

  /** Opens the service's widget for this player: sent to that client only (`lightning:widget`). */
  async openWidget(client: Client, args?: WidgetArgs): Promise<WidgetSession> {
    const input = parseInput(widgetArgs, args, 'openWidget');
    return this.#widget.openWidget(client, this.room.roomId, input);
  }

  /** Opens a purchase (ramp) session for this player: sent to that client only. */
  async openPurchase(client: Client, args?: PurchaseArgs): Promise<PurchaseSession> {
    const input = parseInput(purchaseArgs, args, 'openPurchase');
    return this.#widget.openPurchase(client, this.room.roomId, input);
  }

  /** Records the player's acceptance of disclosures (2 terms, 3 privacy, 6 EFT), server-side. */
  async acceptDisclosures(client: Client, typeIds: readonly number[]) {
    return this.#widget.acceptDisclosures(client, parseInput(disclosureArgs, typeIds, 'typeIds'));
  }

  /** Changes the email the widget sends this player's one-time codes to. */
  async updateEmail(client: Client, email: string) {
    return this.#widget.updateEmail(client, parseInput(emailArg, email, 'email'));
  }

  // ---- room hooks -----------------------------------------------------------------------

  /** Any entry of this room reached `completed`, `expired` or `failed`. */
  onSettled(listener: RoomListener): () => void {
    return this.#hooks.on('settled', listener);
  }
  /** A reward was claimed by its player. */
  onRewardClaimed(listener: (entry: Reward, intent: Intent) => void): () => void {
    return this.#hooks.on('reward.completed', listener as RoomListener);
  }
  /** An entry fee was paid. */
  onEntryFeePaid(listener: (entry: EntryFee, intent: Intent) => void): () => void {
    return this.#hooks.on('entryFee.completed', listener as RoomListener);
  }
  /** A reward or entry fee expired unclaimed or unpaid. */
  onExpired(listener: RoomListener): () => void {
    return this.#hooks.on('expired', listener);
  }

  /** The player's entries in this room (open and lingering). */
  entriesOf(player: PlayerRef): Entry[] {
    return this.#roomEntries().of(this.#playerId(player));
  }

  // ---- lifecycle ------------------------------------------------------------------------

  protected override async onCreate(): Promise<void> {
    // A room with nowhere to show its entries fails at creation; one that assigns its state in
    // its own onCreate (which runs after this) is checked by the helpers.
    if (this.room.state !== undefined) {
      try {
        this.#roomEntries().require();
      } catch (err) {
        // Colyseus tells only the joining client: the developer reads the server's log.
        this.#host.logger.error(
          `room ${this.room.roomName} not created: ${(err as Error).message}`,
        );
        // A numeric code: the client reads this message, not "seat reservation expired".
        throw new ServerError(ErrorCode.APPLICATION_ERROR, (err as Error).message);
      }
    }
    if (this.#gate) this.#offs.push(this.#gate.watch(this.room));
    await this.#attach('onCreate');
  }

  protected override onJoin(client: Client): void {
    this.#gate?.joined(client, this.#playerId(client));
    // After the room's own onJoin: its view and the identity it set are the ones used here.
    this.#showPrice();
    const playerId = this.#playerId(client);
    this.#roomEntries().showTo(client, playerId);
    const tabs = this.#roomTabs();
    tabs.joined(client);
    tabs.showTo(client, playerId);
    // A tab earned before (another room, another session) shows once read.
    void this.#attached?.then(() => tabs.refresh(playerId)).catch(() => {});
  }

  protected override onLeave(client: Client): void {
    const playerId = this.#ownerOf(client);
    const tabs = this.#roomTabs();
    const last = playerId !== undefined && !tabs.present(playerId, client);
    tabs.left(client, playerId);
    if (last && this.#settings.tabs.withdrawOnLeave) this.#withdrawAll(playerId, 'leave');
  }

  protected override onDispose(): void {
    this.#disposed = true;
    for (const off of this.#offs.splice(0)) off();
    this.#hooks.clear();
    // Nobody is left to play an open match: refund it now rather than at its timeout.
    for (const match of this.#matches.values()) {
      match.stop();
      if (match.view.status !== 'open') continue;
      void this.#host
        .matches()
        .then((calls) => calls.abort(match.id, 'room disposed'))
        .catch((err: Error) =>
          this.#host.logger.warn(
            `aborting match ${match.id} of disposed room ${this.room.roomId}: ${err.message} (the reconciler aborts it after its timeout)`,
          ),
        );
    }
    this.#matches.clear();
  }

  // ---- internals ------------------------------------------------------------------------

  #roomEntries(): RoomEntries {
    this.#entries ??= new RoomEntries(this.room, this.#settings);
    return this.#entries;
  }

  #roomTabs(): RoomTabs {
    this.#tabs ??= new RoomTabs({
      room: this.room,
      state: () => this.#roomEntries().find(),
      owner: this.#ownerOf,
      read: (playerId) => this.#host.money().tab(playerId),
      now: () => this.#host.now(),
      changed: () => {
        if (this.#settings.immediatePush) this.#pushSoon();
      },
      warn: (message) => this.#host.logger.warn(`room ${this.room.roomId}: ${message}`),
    });
    return this.#tabs;
  }

  /**
   * The player's whole tab out as one code, on its own (`tabs.withdrawOnLeave`,
   * `tabs.withdrawAtMsat`): once at a time per player; a failure is logged, the tab kept.
   */
  #withdrawAll(playerId: string, why: 'leave' | 'line'): void {
    if (this.#withdrawing.has(playerId)) return;
    this.#withdrawing.add(playerId);
    this.withdraw(playerId)
      .catch((err: Error) => {
        // Nothing to withdraw yet (under the minimum, or drawn by another call meanwhile).
        if (err instanceof InsufficientFundsError || err instanceof WithdrawalTooSmallError) return;
        this.#host.logger.warn(
          `room ${this.room.roomId}: withdrawing the tab of ${playerId} (${why}): ${err.message}`,
        );
      })
      .finally(() => this.#withdrawing.delete(playerId));
  }

  /**
   * Starts the server if needed and subscribes to the room's settlement channel, once. The
   * helpers call it too: Colyseus 0.18 skips plugin hooks on the first instance of a room class
   * that defines `onUncaughtException`.
   */
  #attach(from: 'onCreate' | 'helper'): Promise<MoneyCalls> {
    if (this.#attached) return this.#attached;
    if (from === 'helper') {
      this.#host.logger.warn(
        `room ${this.room.roomId}: the lightning plugin's onCreate did not run (a room with onUncaughtException, Colyseus 0.18); rejoining players of this room will not get their entries back`,
      );
    }
    // This process's moves are handed over (hostRoom), never published: a message on the room's
    // channel is another process's move, and names only the intent: it is read back.
    const channel = roomChannel(this.room.roomId);
    const onMessage = (m: unknown) => void this.#readAndDeliver((m as SettlementMessage).id);
    this.#attached = this.#host.ready().then(async () => {
      const money = this.#host.money();
      if (this.#disposed) return money;
      const presence = this.#host.attachPresence(this.room.presence as never);
      this.#offs.push(
        this.#host.hostRoom(this.room.roomId, (intent) => void this.#deliver(intent)),
        this.#host.onPrice(() => this.#showPrice()),
        () => presence?.unsubscribe(channel, onMessage),
      );
      this.#showPrice();
      await presence?.subscribe(channel, onMessage);
      return money;
    });
    if (this.#settings.catchUpMs > 0) {
      this.room.clock.setInterval(() => this.#catchUpRound(), this.#settings.catchUpMs);
    }
    return this.#attached;
  }

  /** Rounds never overlap: over a slow ledger they wait rather than pile up. */
  #catchUpRound(): void {
    if (this.#catchingUp) return;
    this.#catchingUp = true;
    this.#catchUp()
      .catch((err: Error) =>
        this.#host.logger.warn(`catching up room ${this.room.roomId}: ${err.message}`),
      )
      .finally(() => {
        this.#catchingUp = false;
      });
  }

  /**
   * Presence messages are fire and forget (one sent during a Redis restart is gone): the room
   * reads its open entries and matches back now and then, and delivers what changed.
   */
  async #catchUp(): Promise<void> {
    const open = this.#roomEntries()
      .all()
      .filter((entry) => !isTerminal(entry.status));
    // One read of the room's open intents; only an entry no longer among them is read alone.
    const stillOpen =
      open.length === 0
        ? new Map<string, Intent>()
        : await this.#host.openIntents(this.room.roomId).then(
            (intents) => new Map(intents.map((i) => [i.id, i])),
            () => undefined,
          );
    if (stillOpen === undefined) return; // the ledger is unreachable: the next round tries again
    for (const entry of open) {
      const intent =
        stillOpen.get(entry.id) ?? (await this.#host.intent(entry.id).catch(() => null));
      if (intent && (intent.status !== entry.status || intent.updatedAt > entry.updatedAt)) {
        await this.#deliver(intent);
      }
    }
    for (const match of this.#matches.values()) {
      if (match.view.status !== 'settled' && match.view.status !== 'aborted') {
        await match.refresh().catch(() => {});
      }
    }
  }

  #playerId(player: PlayerRef): string {
    return playerOf(player, this.#settings.playerId);
  }

  /**
   * The player a money helper moves money for. One the default rule tells only by its session
   * id would be paid under an id that changes on every join: refused in production
   * (NotSignedInError, nothing recorded), said once with the fix elsewhere.
   */
  #payerId(player: PlayerRef): string {
    const playerId = recordableId(this.#playerId(player), 'player');
    if (
      typeof player !== 'string' &&
      this.#settings.playerId === defaultPlayerId &&
      playerId === player.sessionId
    ) {
      if (this.#host.inProduction()) throw new NotSignedInError(this.room.roomId, playerId);
      this.#host.devWarn(
        'player-without-auth',
        `room ${this.room.roomId}: client ${playerId} is not signed in (no client.auth), so money moves under its session id, which changes on every join: a rejoining player loses their entries and per-player limits count each session apart (in production this is refused, NotSignedInError). ${SIGN_IN_FIX}`,
      );
    }
    return playerId;
  }

  /** The room's id as the ledger records it (a game may set its own). */
  #roomId(): string {
    return recordableId(this.room.roomId, 'roomId');
  }

  /** The player id of a connected client, or undefined when options.playerId cannot tell. */
  #ownerOf = (client: Client): string | undefined => {
    try {
      return this.#playerId(client);
    } catch {
      return undefined;
    }
  };

  /**
   * The entry of the intent a helper's call returned, its moves handed over already. A reading
   * without a move (the open intent holding the create's key) is delivered now; one that ended
   * and left the state is given as a copy.
   */
  #entryOf(intent: Intent): Entry {
    const entries = this.#roomEntries();
    const shown = entries.get(intent);
    if (shown && shown.status === intent.status && shown.updatedAt >= intent.updatedAt) {
      return shown;
    }
    void this.#deliver(intent);
    return entries.get(intent) ?? entries.copyOf(intent);
  }

  /**
   * An entry's end: its hooks, once however often the end is delivered, then its linger. The
   * ends old enough that no delivery of them can still come are forgotten first.
   */
  #end(entry: Entry, intent: Intent): void {
    if (this.#ended.has(intent.id)) return;
    const now = this.room.clock.currentTime;
    for (const [old, forgetAt] of this.#ended) {
      if (forgetAt > now) break;
      this.#ended.delete(old);
    }
    this.#ended.set(intent.id, now + this.#settings.lingerMs + ENDED_MEMORY_MS);
    this.#hooks.ended(entry, intent);
    this.#roomEntries().lingerThenRemove(intent);
  }

  /** The checks every money helper makes before it moves money: the player it moves it for. */
  async #payer(player: PlayerRef): Promise<{ playerId: string; money: MoneyCalls }> {
    const playerId = this.#payerId(player);
    this.#roomEntries().require();
    const money = await this.#attach('helper');
    await this.#gate?.admit(playerId, this.room.roomId);
    return { playerId, money };
  }

  /** A fee as chargeEntryFee resolves: the entry holds the latest status, not the create's. */
  #charged(intent: Intent): ChargedEntryFee {
    const entry = this.#entryOf(intent) as EntryFee;
    const settled = isTerminal(entry.status)
      ? Promise.resolve(entry)
      : (this.#hooks.waitFor(intent.id) as Promise<EntryFee>);
    return { entry, settled };
  }

  /** The fee of `client` in `match`, shown to its owner, as chargeEntryFee resolves. */
  async #enterMatch(
    match: RoomMatch,
    client: Client,
    options: MatchEntryOptions,
  ): Promise<ChargedEntryFee> {
    const { playerId } = await this.#payer(client);
    const calls = await this.#host.matches();
    const charged = this.#charged(await calls.enter({ matchId: match.id, playerId, ...options }));
    void match.refresh().catch(() => {});
    return charged;
  }

  /**
   * Sends the room's patch once this turn's settlements are applied (setImmediate coalesces a
   * burst); patches are deltas, so the next tick sends nothing twice.
   */
  #pushSoon(): void {
    if (this.#pushPending || this.#disposed) return;
    this.#pushPending = true;
    setImmediate(() => {
      this.#pushPending = false;
      if (this.#disposed) return;
      try {
        this.room.broadcastPatch();
      } catch (err) {
        this.#host.logger.warn(
          `immediate patch of room ${this.room.roomId}: ${(err as Error).message} (the next tick sends it)`,
        );
      }
    });
  }

  /** Writes the fiat price as last read into the state; unchanged values write nothing. */
  #showPrice(): void {
    const state = this.#roomEntries().find();
    if (!state) return;
    const now = this.#host.price();
    const price = state.price;
    if (price.currency !== this.#host.currency) price.currency = this.#host.currency;
    if (now === null) return;
    if (price.btcPrice !== now.btcPrice) price.btcPrice = now.btcPrice;
    if (price.at !== now.at) price.at = now.at;
  }

  /** A move another process applied: the message is only a pointer, the ledger says what. */
  async #readAndDeliver(id: string): Promise<void> {
    const intent = await this.#host.intent(id).catch((err: Error) => {
      this.#host.logger.warn(`delivering ${id} to room ${this.room.roomId}: ${err.message}`);
      return null;
    });
    if (intent) await this.#deliver(intent);
  }

  /**
   * The one way a reading gets into the room (hand-over, message, catch-up): its entry if new,
   * its match, the hooks on its first end. Synchronous up to the write, so a handed-over
   * intent is on its entry when `apply` returns.
   */
  async #deliver(intent: Intent): Promise<void> {
    try {
      if (intent.roomId !== this.room.roomId) return;
      if (intent.groupId !== null) {
        // A match's own record is its group: it refreshes the view, as a member's move does.
        const match = this.#matches.get(intent.groupId);
        if (isMatch(intent)) {
          await match?.refresh();
          return;
        }
        if (match) void match.refresh().catch(() => {});
      }
      if (touchesTab(intent)) void this.#roomTabs().refresh(intent.playerId);
      if (this.#ended.has(intent.id)) return;
      const entries = this.#roomEntries();
      const state = entries.find();
      if (!state) return;
      const entry = entries.upsert(intent, state, this.#ownerOf);
      if (entry === null) return;
      if (this.#settings.immediatePush) this.#pushSoon();
      if (isTerminal(intent.status)) this.#end(entry, intent);
    } catch (err) {
      this.#host.logger.warn(
        `delivering ${intent.id} to room ${this.room.roomId}: ${(err as Error).message}`,
      );
    }
  }
}
