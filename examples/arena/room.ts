/**
 * A reaction duel for 2 to 4 players, paid in sats. Each player pays the entry fee (a QR
 * code, or the dev wallet on the emulator); when at least two have paid and nobody here is
 * still paying, a countdown runs and "GO!" appears after a random delay; the first click after
 * GO wins the pot minus the rake, as a reward whose QR code only the winner sees. A click
 * before GO is out. A shop spends in-game points (shop.ts).
 *
 * Limits, because every message may move money:
 * - who a player is comes from the signed token of `POST /auth` (auth.ts), never from the
 *   join options;
 * - a client that sends more than `maxMessagesPerSecond` messages is dropped (Colyseus);
 * - a player has at most one open entry fee, and none once paid: `again` (and joining again)
 *   while one is open returns that one, so a flood charges once and nobody pays twice;
 * - one purchase in flight per player (shop.ts).
 *
 * A player who leaves unpaid leaves the round: it starts without them once the others have
 * paid. Their fee stays payable until it expires; paid meanwhile, it is their entry when they
 * come back; paid after it expired, the server's `latePayment` event reports it; paid after
 * the room closed, or paid for a round that never ran, it is logged as owed (owed.ts).
 */
import { createHash } from 'node:crypto';
import { type AuthContext, type Client, definePlugins, Room } from '@colyseus/core';
import type { EntryFee, Lightning } from 'colyseus-lightning';
import { z } from 'zod';
import type { ArenaAuth } from './auth.js';
import { type ArenaConfig, arenaConfig } from './config.js';
import type { OwedBook } from './owed.js';
import { Shop } from './shop.js';
import { ArenaState, Player } from './state.js';

/** What a client may say when it joins: a display name. Anything else (a playerId) is ignored. */
const joinOptions = z.object({ name: z.string().trim().optional().catch(undefined) }).catch({});

export interface ArenaRoomOptions {
  lightning: Lightning;
  auth: ArenaAuth;
  owed: OwedBook;
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

/** An entry fee of one player: being created (no id yet), or waiting to be paid. */
interface OpenFee {
  id: string | null;
  entry: Promise<EntryFee | null>;
}

export function arenaRoom(options: ArenaRoomOptions) {
  const { lightning, auth, owed, onPlayerJoined } = options;
  const config = options.config ?? arenaConfig;
  const log = options.log ?? console.log;

  return class Arena extends Room<{ state: ArenaState }> {
    override maxClients = config.maxPlayers;
    override maxMessagesPerSecond = config.maxMessagesPerSecond;
    override state = new ArenaState();
    override plugins = definePlugins([lightning.plugin()]);

    /** Paid and not yet played: the pot of the next round (or of the one running). */
    readonly #paid = new Set<string>();
    /** At most one open fee per player. */
    readonly #fees = new Map<string, OpenFee>();
    /** Who plays the round that is running. */
    readonly #roster = new Set<string>();
    readonly #idBySeat = new Map<string, string>();
    /** Items bought and rounds won, per player: a seat that leaves and comes back shows them. */
    readonly #items = new Map<string, string[]>();
    readonly #wins = new Map<string, number>();
    #shop: Shop | undefined;
    #disposed = false;

    override messages = {
      click: (client: Client) => this.#click(client),
      buy: (client: Client, item: unknown) => this.#shop?.buy(client, idOf(client), item),
      again: (client: Client) => this.#again(client),
    };

    override onAuth(_client: Client, _options: unknown, context: AuthContext) {
      return { id: auth.verify(context.token) };
    }

    override onCreate() {
      this.state.phase = 'waiting';
      this.state.entryFeeMsat = config.entryFeeMsat.toString();
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
        tell: (playerId, message) => {
          for (const c of this.clients) if (idOf(c) === playerId) c.send('shop', message);
        },
      });
      this.plugins.lightning.onEntryFeePaid((fee) => this.#feePaid(fee));
      this.plugins.lightning.onSettled((_entry, intent) => this.#shop?.settled(intent));
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
        player.paid = this.#paid.has(playerId);
        player.playing = this.#roster.has(playerId);
        player.out = false;
        player.wins = this.#wins.get(playerId) ?? 0;
        for (const item of this.#items.get(playerId) ?? []) player.items.push(item);
        this.state.players.set(seat, player);
      }
      if (name) player.name = name.slice(0, 20);
      if (onPlayerJoined) {
        // The service creates a widget user once per reference_id; a repeat returns it.
        const user = await lightning.api.widgetUsers.create({
          reference_id: playerId,
          email: client.userData.email,
        });
        await onPlayerJoined(playerId, user.id);
      }
      await this.#chargeFee(playerId);
    }

    override onLeave(client: Client) {
      const playerId = idOf(client);
      if (this.clients.some((c) => idOf(c) === playerId)) return; // another tab is still here
      // A paid player keeps their seat (their fee is in the pot); the others leave the round,
      // which must not wait for them.
      if (!this.#paid.has(playerId)) this.state.players.delete(seatOf(playerId));
      this.#maybeStart();
    }

    override async onDispose() {
      this.#disposed = true;
      this.#shop?.close();
      for (const playerId of this.#paid) {
        owed.owe(playerId, config.entryFeeMsat, 'paid an entry fee; the room closed first');
      }
      await Promise.all(
        [...this.#fees.values()].map((fee) => (fee.id ? owed.orphan(fee.id) : undefined)),
      );
    }

    // ---- entry fees ----------------------------------------------------------------------

    /** The player's open fee, or a new one; null once paid (or when none could be opened). */
    #chargeFee(playerId: string): Promise<EntryFee | null> {
      if (this.#paid.has(playerId)) return Promise.resolve(null);
      const open = this.#fees.get(playerId);
      if (open) return open.entry;
      const fee: OpenFee = { id: null, entry: Promise.resolve(null) };
      fee.entry = this.plugins.lightning
        .chargeEntryFee(playerId, {
          amountMsat: config.entryFeeMsat,
          description: 'Arena entry fee',
          successMessage: 'You are in. Good luck!',
          expiresIn: config.feeExpiresIn,
        })
        .then(
          ({ entry, settled }) => {
            fee.id = entry.id;
            if (this.#disposed) void owed.orphan(entry.id);
            void settled.then(() => this.#feeEnded(playerId, fee));
            return entry;
          },
          (err: Error) => {
            log(`[arena] no entry fee for player ${playerId}: ${err.message}`);
            this.#feeEnded(playerId, fee);
            return null;
          },
        );
      this.#fees.set(playerId, fee);
      return fee.entry;
    }

    async #again(client: Client) {
      const playerId = idOf(client);
      const entry = await this.#chargeFee(playerId);
      client.send('fee', { paid: this.#paid.has(playerId), fee: entry?.id ?? null });
    }

    #feePaid(fee: EntryFee) {
      const playerId = fee.playerId;
      if (this.#paid.has(playerId)) {
        // One open fee per player makes this impossible; should it ever happen, it is owed.
        owed.owe(playerId, fee.amount, `entry fee ${fee.id} was a second fee for one round`);
        return;
      }
      this.#paid.add(playerId);
      const player = this.#seat(playerId);
      if (player) player.paid = true;
      else
        log(`[arena] player ${playerId} paid entry fee ${fee.id} after leaving: theirs on return`);
      this.#maybeStart();
    }

    /** The fee was paid, expired or failed: the player may be charged again (once paid, later). */
    #feeEnded(playerId: string, fee: OpenFee) {
      if (this.#fees.get(playerId) === fee) this.#fees.delete(playerId);
      this.#maybeStart();
    }

    // ---- rounds --------------------------------------------------------------------------

    #maybeStart() {
      if (this.state.phase !== 'waiting' && this.state.phase !== 'finished') return;
      const seated = [...this.state.players.keys()].map((seat) => this.#idBySeat.get(seat) ?? '');
      const paid = seated.filter((id) => this.#paid.has(id));
      if (paid.length < config.minPlayers) return;
      // Wait for whoever is here with a fee still open; nobody else (a player who let their
      // fee expire sits this round out until they pay again).
      if (seated.some((id) => !this.#paid.has(id) && this.#fees.has(id))) return;
      for (const id of paid) this.#roster.add(id);
      for (const [seat, p] of this.state.players) {
        p.out = false;
        p.playing = this.#roster.has(this.#idBySeat.get(seat) ?? '');
      }
      this.state.winner = '';
      this.state.phase = 'countdown';
      this.clock.setTimeout(() => {
        this.state.phase = 'ready';
        this.clock.setTimeout(
          () => {
            if (this.state.phase === 'ready') this.state.phase = 'go';
          },
          1_000 + Math.random() * 2_000,
        );
      }, 3_000);
    }

    async #click(client: Client) {
      const playerId = idOf(client);
      const player = this.#seat(playerId);
      if (!player || !this.#roster.has(playerId) || player.out) return;
      if (this.state.phase === 'ready' || this.state.phase === 'countdown') {
        player.out = true; // too early
        const left = [...this.#roster].filter((id) => !this.#seat(id)?.out);
        if (left.length === 1) await this.#finish(left[0] as string);
        return;
      }
      if (this.state.phase === 'go') await this.#finish(playerId);
    }

    async #finish(winnerId: string) {
      this.state.phase = 'finished';
      this.state.winner = seatOf(winnerId);
      const roster = [...this.#roster];
      this.#roster.clear();
      const pot = config.entryFeeMsat * BigInt(roster.length);
      const prize = (pot * BigInt(Math.round((1 - config.rake) * 1000))) / 1000n;
      this.state.prizeMsat = prize.toString();
      this.#wins.set(winnerId, (this.#wins.get(winnerId) ?? 0) + 1);
      const winner = this.#seat(winnerId);
      if (winner) winner.wins = this.#wins.get(winnerId) ?? 0;
      for (const id of roster) {
        this.#paid.delete(id);
        const player = this.#seat(id);
        if (!player) continue;
        player.paid = false;
        player.playing = false;
        if (!this.clients.some((c) => idOf(c) === id)) this.state.players.delete(seatOf(id));
      }
      try {
        await this.plugins.lightning.reward(winnerId, {
          amountMsat: prize,
          description: `Arena prize: won against ${roster.length - 1}`,
          expiresIn: config.rewardExpiresIn,
        });
      } catch (err) {
        owed.owe(winnerId, prize, `the prize could not be created (${(err as Error).message})`);
      }
      // Everyone still here may enter the next round; who paid during this one is in already.
      await Promise.all(this.clients.map((c) => this.#chargeFee(idOf(c))));
      this.#maybeStart();
    }

    #seat(playerId: string): Player | undefined {
      return this.state.players.get(seatOf(playerId));
    }
  };
}
