/**
 * A reaction duel for 2 to 4 players, paid in sats. Each player pays the entry fee (a QR
 * code, or the dev wallet on the emulator); when everyone in the room has paid, a countdown
 * runs and "GO!" appears after a random delay; the first click after GO wins the pot minus
 * the rake, as a reward whose QR code only the winner sees. A click before GO is out.
 * A shop spends in-game points.
 */
import { createHash } from 'node:crypto';
import { type Client, definePlugins, Room } from '@colyseus/core';
import { InsufficientPointsError, type Lightning } from 'colyseus-lightning';
import { arenaConfig } from './config.js';
import { ArenaState, Player } from './state.js';

export interface ArenaJoinOptions {
  name?: string;
  /** A stable id the browser keeps, so a reload gets its entries back. */
  playerId?: string;
}

/**
 * The public name of a player's seat. The player id itself stays on the server: whoever knows
 * it could join as that player and receive their prize code.
 */
export function seatOf(playerId: string): string {
  return createHash('sha256').update(playerId).digest('hex').slice(0, 16);
}

export function arenaRoom(
  lightning: Lightning,
  onPlayerJoined?: (playerId: string, userId: string) => Promise<void>,
) {
  return class Arena extends Room<{ state: ArenaState }> {
    override maxClients = arenaConfig.maxPlayers;
    override state = new ArenaState();
    override plugins = definePlugins([lightning.plugin()]);

    readonly #playerBySeat = new Map<string, string>();

    override messages = {
      click: (client: Client) => this.#click(client),
      buy: (client: Client, item: unknown) => this.#buy(client, item),
      again: (client: Client) => this.#chargeFee(client),
    };

    override onCreate() {
      this.state.phase = 'waiting';
      this.state.entryFeeMsat = arenaConfig.entryFeeMsat.toString();
      this.plugins.lightning.onEntryFeePaid((fee) => {
        const player = this.state.players.get(seatOf(fee.playerId));
        if (player) player.paid = true;
        this.#maybeStart();
      });
    }

    override onAuth(_client: Client, options: ArenaJoinOptions) {
      const id = typeof options.playerId === 'string' ? options.playerId.slice(0, 64) : '';
      return { id: /^[\w-]{8,64}$/.test(id) ? id : crypto.randomUUID() };
    }

    override async onJoin(client: Client, options: ArenaJoinOptions) {
      const playerId = (client.auth as { id: string }).id;
      client.userData = { playerId, email: `${playerId}@players.arena.example` };
      const seat = seatOf(playerId);
      this.#playerBySeat.set(seat, playerId);
      client.send('seat', seat);
      let player = this.state.players.get(seat);
      if (!player) {
        player = new Player();
        player.name = (options.name ?? 'player').slice(0, 20) || 'player';
        player.paid = false;
        player.out = false;
        player.wins = 0;
        this.state.players.set(seat, player);
      }
      if (onPlayerJoined) {
        // The service creates a widget user once per reference_id; a repeat returns it.
        const user = await lightning.api.widgetUsers.create({
          reference_id: playerId,
          email: client.userData.email,
        });
        await onPlayerJoined(playerId, user.id);
      }
      const open = this.plugins.lightning
        .entriesOf(client)
        .some((e) => e.kind === 'entryFee' && e.status === 'pending');
      if (!player.paid && !open) await this.#chargeFee(client);
    }

    override onLeave(client: Client) {
      const seat = seatOf((client.auth as { id: string }).id);
      const player = this.state.players.get(seat);
      // Keep paid players (their fee is in the pot); forget the others.
      if (player && !player.paid) this.state.players.delete(seat);
    }

    async #chargeFee(client: Client) {
      const player = this.state.players.get(seatOf((client.auth as { id: string }).id));
      if (!player || player.paid || this.state.phase === 'countdown' || this.state.phase === 'go')
        return;
      await this.plugins.lightning.chargeEntryFee(client, {
        amountMsat: arenaConfig.entryFeeMsat,
        description: 'Arena entry fee',
        successMessage: 'You are in. Good luck!',
        expiresIn: arenaConfig.feeExpiresIn,
      });
    }

    #maybeStart() {
      if (this.state.phase !== 'waiting' && this.state.phase !== 'finished') return;
      const players = [...this.state.players.values()];
      const paid = players.filter((p) => p.paid);
      if (paid.length < arenaConfig.minPlayers || paid.length !== players.length) return;
      for (const p of players) p.out = false;
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
      const seat = seatOf((client.auth as { id: string }).id);
      const player = this.state.players.get(seat);
      if (!player?.paid || player.out) return;
      if (this.state.phase === 'ready' || this.state.phase === 'countdown') {
        player.out = true; // too early
        const left = [...this.state.players.entries()].filter(([, p]) => p.paid && !p.out);
        if (left.length === 1) await this.#finish(left[0]?.[0] as string);
        return;
      }
      if (this.state.phase === 'go') await this.#finish(seat);
    }

    async #finish(winnerSeat: string) {
      this.state.phase = 'finished';
      this.state.winner = winnerSeat;
      const paid = [...this.state.players.values()].filter((p) => p.paid);
      const pot = arenaConfig.entryFeeMsat * BigInt(paid.length);
      const prize = (pot * BigInt(Math.round((1 - arenaConfig.rake) * 1000))) / 1000n;
      this.state.prizeMsat = prize.toString();
      for (const p of paid) p.paid = false;
      const winner = this.state.players.get(winnerSeat);
      if (winner) winner.wins += 1;
      await this.plugins.lightning.reward(this.#playerBySeat.get(winnerSeat) as string, {
        amountMsat: prize,
        description: `Arena prize: won against ${paid.length - 1}`,
        expiresIn: arenaConfig.rewardExpiresIn,
      });
      // Everyone still here may enter the next round.
      for (const c of this.clients) await this.#chargeFee(c);
    }

    async #buy(client: Client, item: unknown) {
      const price = typeof item === 'string' ? arenaConfig.shop[item] : undefined;
      if (price === undefined) return client.send('shop', { ok: false, message: 'No such item.' });
      try {
        await this.plugins.lightning.spendPoints(client, {
          amount: price,
          description: `shop: ${item}`,
        });
        this.state.players
          .get(seatOf((client.auth as { id: string }).id))
          ?.items.push(item as string);
        client.send('shop', { ok: true, message: `You bought the ${item}.` });
      } catch (err) {
        const message =
          err instanceof InsufficientPointsError
            ? `Not enough points for the ${item} (${price}).`
            : 'The shop is closed for a moment; nothing was spent.';
        client.send('shop', { ok: false, message });
      }
    }
  };
}
