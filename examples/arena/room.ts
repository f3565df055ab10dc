/**
 * A reaction duel for 2 to 4 players, paid in sats, one match per round. When at least two
 * players want to play, a round opens: a match (`openMatch`) holds their entry fees in escrow,
 * each pays (a QR code, or the dev wallet on the emulator), and once all have paid
 * (`onFunded`) a countdown runs and "GO!" appears after a random delay. The first click after
 * GO wins the pot minus the rake (`settle`), a claim code only the winner sees; a click
 * before GO is out. Everyone sees the pot, the rake and who paid (`state.lightning.matches`).
 *
 * A round is called off (`abort`), and every paid fee refunded as a claim code only its
 * player sees, when a player of the round leaves before GO, or when not everyone paid by the
 * deadline (then those who did not pay sit out until they press Play). Refunds are the
 * match's job, exactly once: a fee paid after the deadline or into a round already decided is
 * refunded too, and a round whose process died is aborted by the reconciler. Leaving after GO
 * forfeits. A shop spends in-game points (shop.ts).
 *
 * Limits, because every message may move money:
 * - who a player is comes from the signed token of `POST /auth` (auth.ts), never from the
 *   join options;
 * - a client that sends more than `maxMessagesPerSecond` messages is dropped (Colyseus);
 * - one round at a time, and one fee per player per round (`match.enter` returns the open or
 *   paid one): `again` only says that its player wants to play;
 * - one purchase in flight per player (shop.ts).
 *
 * Costs: per round one match (a ledger record kept alive by the plugin) and one timer on the
 * server's clock; per movement of a player's money one history read (history.ts); per player
 * one widget user create, remembered across joins (widget-users.ts).
 */
import { createHash } from 'node:crypto';
import { type AuthContext, type Client, definePlugins, Room } from '@colyseus/core';
import {
  type Clock,
  InsufficientFundsError,
  type Lightning,
  type MatchView,
  type RoomMatch,
  TimeInRoomError,
} from 'colyseus-lightning';
import { z } from 'zod';
import type { ArenaAuth } from './auth.js';
import { systemClock, timerAt } from './clock.js';
import { type ArenaConfig, arenaConfig } from './config.js';
import type { MoneyHistory } from './history.js';
import type { PlayerNames } from './operator.js';
import { Shop } from './shop.js';
import { ArenaState, Player } from './state.js';
import { WidgetUsers } from './widget-users.js';

/** What a client may say when it joins: a display name. Anything else (a playerId) is ignored. */
const joinOptions = z.object({ name: z.string().trim().optional().catch(undefined) }).catch({});

export interface ArenaRoomOptions {
  lightning: Lightning;
  auth: ArenaAuth;
  history: MoneyHistory;
  /** Where the names players choose are kept, for the operator's console (operator.ts). */
  names?: PlayerNames;
  /** The server's clock (the one given to createLightning): pay deadlines run on it. */
  clock?: Clock;
  config?: ArenaConfig;
  /** Where the room's own lines go. Default console.log. */
  log?: (line: string) => void;
  /** Runs on each join with the player's widget user (the emulator grants points here). */
  onPlayerJoined?: (playerId: string, userId: string) => Promise<void>;
}

/**
 * The public name of a player's seat. The player id stays on the server: it is the player's
 * name at the payment service and in the ledger, and nobody else needs it.
 */
export function seatOf(playerId: string): string {
  return createHash('sha256').update(playerId).digest('hex').slice(0, 16);
}

const idOf = (client: Client) => (client.auth as { id: string }).id;

/** One round: its match, who plays it, and how it ends (once). */
interface Round {
  match: RoomMatch;
  roster: Set<string>;
  /** Each player's fee in this round, once charged. */
  fees: Map<string, string>;
  out: Set<string>;
  /** Cancels the timer that is armed (the pay deadline, then the countdown's). */
  cancel: () => void;
  over: boolean;
}

export function arenaRoom(options: ArenaRoomOptions) {
  const { lightning, auth, history, names, onPlayerJoined } = options;
  // The service creates one widget user per reference_id (a repeat returns it).
  const widgetUsers = new WidgetUsers(
    async (playerId, email) =>
      (await lightning.service.api.widgetUsers.create({ reference_id: playerId, email })).id,
  );
  const config = options.config ?? arenaConfig;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? console.log;

  return class Arena extends Room<{ state: ArenaState }> {
    override maxClients = config.maxPlayers;
    override maxMessagesPerSecond = config.maxMessagesPerSecond;
    override state = new ArenaState();
    override plugins = definePlugins([
      lightning.plugin({ tabs: { minTimeInRoomMs: config.minTimeInRoomMs } }),
    ]);

    #round: Round | undefined;
    #opening = false;
    readonly #idBySeat = new Map<string, string>();
    /** Items bought and rounds won, per player: a seat that leaves and comes back shows them. */
    readonly #items = new Map<string, string[]>();
    readonly #wins = new Map<string, number>();
    /** Players who let a round's fee go unpaid: they sit out until they press Play. */
    readonly #sittingOut = new Set<string>();
    /** The latest history read asked for, per player: an older read that ends later is dropped. */
    readonly #historyReads = new Map<string, number>();
    #stopHistory: (() => void) | undefined;
    #shop: Shop | undefined;
    #disposed = false;

    override messages = {
      click: (client: Client) => this.#click(client),
      buy: (client: Client, item: unknown) => this.#shop?.buy(client, idOf(client), item),
      again: (client: Client) => this.#again(client),
      withdraw: (client: Client) => this.#withdraw(client),
    };

    override onAuth(_client: Client, _options: unknown, context: AuthContext) {
      return { id: auth.verify(context.token) };
    }

    override onCreate() {
      this.state.phase = 'waiting';
      this.state.entryFeeMsat = config.entryFeeMsat.toString();
      this.state.matchId = '';
      this.state.lastMatchId = '';
      this.state.payBy = 0;
      this.state.winner = '';
      this.state.prizeMsat = '';
      this.state.result = '';
      this.#shop = new Shop({
        lightning,
        roomId: this.roomId,
        prices: config.shop,
        spend: (client, amount, description) =>
          this.plugins.lightning.spendPoints(client, { amount, description }),
        grant: (playerId, item) => {
          this.#items.set(playerId, [...(this.#items.get(playerId) ?? []), item]);
          this.#seat(playerId)?.items.push(item);
        },
        tell: (playerId, message) => this.#tell(playerId, 'shop', message),
      });
      this.plugins.lightning.onSettled((_entry, intent) => this.#shop?.settled(intent));
      // A fee paid: show it, and start the round if it was the last one missing.
      this.plugins.lightning.onEntryFeePaid(() => {
        if (this.#round) void this.#maybeStart(this.#round);
      });
      this.#stopHistory = history.onChange((playerId) => void this.#sendHistory(playerId));
    }

    override async onJoin(client: Client, options: unknown) {
      const playerId = idOf(client);
      const { name } = joinOptions.parse(options ?? {});
      client.userData = { email: `${seatOf(playerId)}@players.arena.example` };
      const seat = seatOf(playerId);
      this.#idBySeat.set(seat, playerId);
      client.send('seat', seat);
      let player = this.state.players.get(seat);
      if (!player) {
        player = new Player();
        player.name = 'player';
        player.playing = false;
        player.paid = false;
        player.out = false;
        player.wins = this.#wins.get(playerId) ?? 0;
        for (const item of this.#items.get(playerId) ?? []) player.items.push(item);
        this.state.players.set(seat, player);
      }
      if (name) player.name = name.slice(0, 20);
      names?.set(playerId, player.name);
      // Coming back is wanting to play.
      this.#sittingOut.delete(playerId);
      player.ready = true;
      if (onPlayerJoined) {
        // Created once per player and remembered: a join again makes no call (widget-users.ts).
        await onPlayerJoined(playerId, await widgetUsers.of(playerId, client.userData.email));
      }
      // Codes still to claim, from this room or one that has closed since: in the history.
      for (const claim of await lightning.books.claims(playerId))
        history.note(playerId, claim.intentId);
      await this.#sendHistory(playerId);
      void this.#maybeOpen();
    }

    override onLeave(client: Client) {
      const playerId = idOf(client);
      if (this.clients.some((c) => idOf(c) === playerId)) return; // another tab is still here
      const name = this.#seat(playerId)?.name ?? 'a player';
      this.state.players.delete(seatOf(playerId));
      const round = this.#round;
      if (!round?.roster.has(playerId) || round.over) return;
      if (this.state.phase === 'go') {
        // After GO, leaving forfeits: the others play on.
        round.out.add(playerId);
        void this.#lastStanding(round);
      } else {
        void this.#callOff(round, `${name} left before GO`);
      }
    }

    override onDispose() {
      // The plugin aborts a match that is still open: whoever paid is refunded.
      this.#disposed = true;
      this.#round?.cancel();
      this.#shop?.close();
      this.#stopHistory?.();
    }

    // ---- rounds --------------------------------------------------------------------------

    /** Connected players who want to play, in the order they sat down. */
    #wanting(): string[] {
      const here = new Set(this.clients.map(idOf));
      return [...this.state.players.keys()]
        .map((seat) => this.#idBySeat.get(seat) ?? '')
        .filter((id) => here.has(id) && !this.#sittingOut.has(id));
    }

    /** Opens a round when none is open and enough players want one. */
    async #maybeOpen(): Promise<void> {
      if (this.#round || this.#opening || this.#disposed) return;
      if (this.#wanting().length < config.minPlayers) return;
      this.#opening = true;
      // The roster is fixed from this moment on: the match is funded once each of them paid.
      const roster = this.#wanting().slice(0, config.maxPlayers);
      let match: RoomMatch;
      try {
        match = await this.plugins.lightning.openMatch({
          entryFeeMsat: config.entryFeeMsat,
          rake: config.rake,
          feeExpiresIn: config.feeExpiresIn,
          claimExpiresIn: config.claimExpiresIn,
          timeoutMs: config.matchTimeoutMs,
          description: 'Arena round',
          players: roster,
        });
      } catch (err) {
        log(`[arena] could not open a round: ${(err as Error).message}`);
        return;
      } finally {
        this.#opening = false;
      }
      // Every player of the roster is still here once the match is open, or the round is off.
      const here = new Set(this.#wanting());
      if (this.#disposed || !roster.every((id) => here.has(id))) {
        await this.#decide(match, () => match.abort('not enough players'));
        return void this.#maybeOpen();
      }
      const payBy = clock.now() + config.feeExpiresIn * 1000;
      const round: Round = {
        match,
        roster: new Set(roster),
        fees: new Map(),
        out: new Set(),
        cancel: timerAt(clock, payBy, () => void this.#deadline(round)),
        over: false,
      };
      this.#round = round;
      this.#forgetDecidedMatches(match.id, this.state.lastMatchId);
      this.state.matchId = match.id;
      this.state.payBy = payBy;
      this.state.phase = 'paying';
      for (const [seat, p] of this.state.players) {
        p.playing = round.roster.has(this.#idBySeat.get(seat) ?? '');
        p.paid = false;
        p.out = false;
      }
      match.onFunded(() => void this.#maybeStart(round));
      await Promise.all(roster.map((playerId) => this.#enter(round, playerId)));
    }

    /** Charges one player's fee into the round's match (once: a repeat returns the same fee). */
    async #enter(round: Round, playerId: string): Promise<void> {
      const client = this.clients.find((c) => idOf(c) === playerId);
      if (!client || round.over) return; // gone already: their leaving called the round off
      try {
        const { entry, settled } = await round.match.enter(client);
        round.fees.set(playerId, entry.id);
        history.note(playerId, entry.id);
        // The player's dot turns paid on every screen at once, not only once all paid.
        void settled.then(() => this.#maybeStart(round));
      } catch (err) {
        if (round.over) return;
        log(`[arena] no entry fee for player ${playerId}: ${(err as Error).message}`);
        await this.#callOff(round, 'an entry fee could not be created');
      }
    }

    /**
     * Shows who paid, and starts the countdown once the match is funded: every player of its
     * roster (`players`) paid.
     */
    async #maybeStart(round: Round): Promise<void> {
      if (round.over || this.state.phase !== 'paying') return;
      const view = await round.match.refresh().catch(() => round.match.view);
      if (round.over || this.#round !== round || this.state.phase !== 'paying') return;
      const paid = paidIn(view);
      for (const id of round.roster) {
        const p = this.#seat(id);
        if (p) p.paid = paid.has(id);
      }
      if (!view.funded) return;
      round.cancel();
      this.state.payBy = 0;
      this.state.phase = 'countdown';
      this.state.winner = '';
      this.state.prizeMsat = '';
      this.state.result = '';
      const ready = this.clock.setTimeout(() => {
        this.state.phase = 'ready';
        const go = this.clock.setTimeout(
          () => {
            if (!round.over) this.state.phase = 'go';
          },
          config.goAfterMs.min + Math.random() * (config.goAfterMs.max - config.goAfterMs.min),
        );
        round.cancel = () => go.clear();
      }, config.countdownMs);
      round.cancel = () => ready.clear();
    }

    /** The pay deadline: whoever has not paid sits out, and the round is called off. */
    async #deadline(round: Round): Promise<void> {
      if (round.over || this.state.phase !== 'paying') return;
      const view = await round.match.refresh().catch(() => round.match.view);
      if (round.over || this.state.phase !== 'paying') return;
      const paid = paidIn(view);
      const late = [...round.roster].filter((id) => !paid.has(id));
      if (late.length === 0) return this.#maybeStart(round);
      for (const id of late) {
        this.#sittingOut.add(id);
        const p = this.#seat(id);
        if (p) p.ready = false;
      }
      const names = late.map((id) => this.#seat(id)?.name ?? 'a player');
      await this.#callOff(round, `${names.join(' and ')} did not pay in time`);
    }

    /** Ends the round without a winner: the match refunds every paid fee. */
    async #callOff(round: Round, reason: string): Promise<void> {
      if (round.over) return;
      this.#end(round);
      this.state.phase = 'waiting';
      this.state.winner = '';
      this.state.prizeMsat = '';
      this.state.result = `Round called off: ${reason}.`;
      log(`[arena] round ${round.match.id} called off: ${reason}`);
      await this.#decide(round.match, () => round.match.abort(reason));
      void this.#maybeOpen();
    }

    async #click(client: Client) {
      const playerId = idOf(client);
      const round = this.#round;
      const player = this.#seat(playerId);
      if (!round || !player || !round.roster.has(playerId) || round.out.has(playerId)) return;
      if (this.state.phase === 'ready' || this.state.phase === 'countdown') {
        round.out.add(playerId); // too early
        player.out = true;
        await this.#lastStanding(round);
        return;
      }
      if (this.state.phase === 'go') await this.#finish(round, playerId);
    }

    /** Everyone else is out (too early, or gone after GO): the last one standing wins. */
    async #lastStanding(round: Round): Promise<void> {
      const left = [...round.roster].filter((id) => !round.out.has(id));
      if (left.length === 1) await this.#finish(round, left[0] as string);
    }

    /** Pays the pot minus the rake to the winner, once. */
    async #finish(round: Round, winnerId: string): Promise<void> {
      if (round.over) return;
      this.#end(round);
      this.state.phase = 'finished';
      this.state.winner = seatOf(winnerId);
      this.state.prizeMsat = '';
      const name = this.#seat(winnerId)?.name ?? 'a player';
      this.state.result = `${name} won the round.`;
      this.#wins.set(winnerId, (this.#wins.get(winnerId) ?? 0) + 1);
      const winner = this.#seat(winnerId);
      if (winner) winner.wins = this.#wins.get(winnerId) ?? 0;
      void this.#creditRound(round, winnerId);
      const view = await this.#decide(round.match, () => round.match.settle({ [winnerId]: 1 }));
      const prize = view?.payouts.find((p) => p.playerId === winnerId)?.amountMsat;
      if (prize && this.state.winner === seatOf(winnerId)) {
        this.state.prizeMsat = prize;
        this.state.result = `${name} won ${Number(prize) / 1000} sats.`;
      } else if (!view) {
        // The ledger failed us: the reconciler finishes a decided match, or refunds an open one.
        this.state.result = `${name} won; the payout is delayed (it will be paid, or every fee refunded).`;
      }
      void this.#maybeOpen();
    }

    /**
     * Credits the tab of each player of a won round still standing: the winner, and whoever
     * played it to the end. Once per round and player (the key), whatever calls it again.
     */
    async #creditRound(round: Round, winnerId: string): Promise<void> {
      for (const playerId of round.roster) {
        const client = this.clients.find((c) => idOf(c) === playerId);
        if (!client || (round.out.has(playerId) && playerId !== winnerId)) continue;
        const won = playerId === winnerId;
        try {
          await this.plugins.lightning.credit(client, {
            amountMsat: won ? config.roundWonCreditMsat : config.roundSurvivedCreditMsat,
            description: won ? 'Round won' : 'Round survived',
            key: `round:${round.match.id}`,
          });
        } catch (err) {
          // Not in the room long enough yet, or the ledger failed: no credit this round. The
          // error's own message names the player id, which stays on the server.
          log(`[arena] no credit for ${playerId}: ${(err as Error).message}`);
          this.#tell(
            playerId,
            'tab',
            err instanceof TimeInRoomError
              ? `Rounds credit your tab after ${Math.ceil(err.minMs / 1000)} s in the arena.`
              : 'This round could not be credited to your tab.',
          );
        }
      }
    }

    /** Withdraw: the player's whole tab as one claim code, shown to them only. */
    async #withdraw(client: Client): Promise<void> {
      const playerId = idOf(client);
      try {
        const entry = await this.plugins.lightning.withdraw(client, {
          description: 'Arena tab',
          expiresIn: config.claimExpiresIn,
        });
        history.note(playerId, entry.id);
      } catch (err) {
        log(`[arena] no withdrawal for ${playerId}: ${(err as Error).message}`);
        this.#tell(
          playerId,
          'tab',
          err instanceof InsufficientFundsError
            ? 'Your tab is empty: win or survive a round first.'
            : 'Your tab could not be withdrawn now: try again.',
        );
      }
    }

    /** The round is over (won or called off): nobody plays it any more. */
    #end(round: Round): void {
      round.over = true;
      round.cancel();
      if (this.#round === round) this.#round = undefined;
      this.state.matchId = '';
      this.state.lastMatchId = round.match.id;
      this.state.payBy = 0;
      for (const p of this.state.players.values()) {
        p.playing = false;
        p.paid = false;
      }
    }

    /**
     * Settles or aborts, retried a few times if the ledger fails (both are idempotent). If it
     * still fails, the room stops keeping the match alive, so the reconciler aborts it after
     * its timeout and every paid fee is refunded.
     */
    async #decide(
      match: RoomMatch,
      move: () => Promise<MatchView>,
      attempt = 1,
    ): Promise<MatchView | undefined> {
      try {
        return await move();
      } catch (err) {
        log(`[arena] deciding match ${match.id} (attempt ${attempt}): ${(err as Error).message}`);
        if (attempt >= 3 || this.#disposed) {
          match.stop();
          return undefined;
        }
        await new Promise<void>((resolve) => this.clock.setTimeout(resolve, 2_000 * attempt));
        return this.#decide(match, move, attempt + 1);
      }
    }

    /**
     * The state keeps the round on screen and the one before, and nothing older that is
     * decided: every client receives the whole map on join, and a long-lived room would
     * otherwise send every round it ever played.
     */
    #forgetDecidedMatches(...keep: string[]): void {
      const matches = this.state.lightning.matches;
      for (const [id, m] of matches) {
        const decided = m.status === 'settled' || m.status === 'aborted';
        if (decided && !keep.includes(id)) matches.delete(id);
      }
    }

    // ---- players -------------------------------------------------------------------------

    /** Play: wants to play the next round (after sitting one out). Answers with their fee. */
    #again(client: Client) {
      const playerId = idOf(client);
      const player = this.#seat(playerId);
      if (!player) return;
      this.#sittingOut.delete(playerId);
      player.ready = true;
      const round = this.#round;
      client.send('fee', {
        paid: player.paid,
        fee: round?.roster.has(playerId) ? (round.fees.get(playerId) ?? null) : null,
      });
      void this.#maybeOpen();
    }

    /** Sends the player's money history to their own clients (the newest read wins). */
    async #sendHistory(playerId: string): Promise<void> {
      if (!this.clients.some((c) => idOf(c) === playerId)) return;
      const read = (this.#historyReads.get(playerId) ?? 0) + 1;
      this.#historyReads.set(playerId, read);
      const rows = await history.of(playerId);
      if (this.#historyReads.get(playerId) !== read) return;
      this.#tell(playerId, 'history', rows);
    }

    #tell(playerId: string, type: string, message: unknown): void {
      for (const c of this.clients) if (idOf(c) === playerId) c.send(type, message);
    }

    #seat(playerId: string): Player | undefined {
      return this.state.players.get(seatOf(playerId));
    }
  };
}

/** The players whose fee in this match is paid. */
function paidIn(view: MatchView): Set<string> {
  return new Set(view.players.filter((p) => p.feeStatus === 'completed').map((p) => p.playerId));
}
