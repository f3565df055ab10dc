/**
 * A duel for two players, paid in sats. The first two players in a room each owe an entry fee
 * into one match (`openMatch({ seats: 2 })`), charged as they join; once both paid (`onFunded`:
 * the roster paid, never "every fee so far") the button lights up, and the first click wins the
 * pot minus the rake (`settle`): a claim code only the winner receives. A player who leaves
 * before both paid, or a fee that expires unpaid, calls the duel off (`abort`): whoever paid
 * gets a refund code. Leaving after the start forfeits. One duel per room.
 *
 * Who a player is: the name they signed in with at `POST /login`, verified by the room's
 * static onAuth (login.ts), as the README's game does: `client.auth.id`, never a join option.
 * A reload that signs in again keeps the player and the codes waiting for them.
 *
 * Costs: one match per room, kept alive by the plugin while the room lives; nothing per click
 * but a phase check.
 */
import { type Client, definePlugins, Room } from '@colyseus/core';
import { type SchemaType, schema, t } from '@colyseus/schema';
import { type Lightning, LightningState, type MatchView, type RoomMatch } from 'colyseus-lightning';
import type { DuelLogin } from './login.js';

const idOf = (client: Client) => (client.auth as { id: string }).id;

export const DuelState = schema(
  {
    /** paying (fees open) -> playing (both paid) -> won, or off (called off, fees refunded). */
    phase: t.string(),
    /** The duel's match in `lightning.matches` (its pot, rake and who paid, for everyone). */
    matchId: t.string(),
    /** The winner's player id (the name they signed in with), once won. */
    winner: t.string(),
    lightning: LightningState,
  },
  'DuelState',
);
export type DuelState = SchemaType<typeof DuelState>;

export interface DuelRoomOptions {
  lightning: Lightning;
  /** Checks each join's token (login.ts). */
  login: DuelLogin;
  /** Each player's stake, in millisatoshis (at least 10,000). Default 100,000 (100 sats). */
  entryFeeMsat?: bigint;
  /** The house's share of the pot, 0 to 0.5. Default 0.1. */
  rake?: number;
  /** Seconds each player has to pay. Default 120. */
  feeExpiresIn?: number;
  /** Where the room's own lines go. Default console.log. */
  log?: (line: string) => void;
}

export function duelRoom(options: DuelRoomOptions) {
  const { lightning, login, entryFeeMsat = 100_000n, rake = 0.1, feeExpiresIn = 120 } = options;
  const log = options.log ?? console.log;

  return class Duel extends Room<{ state: DuelState }> {
    override maxClients = 2;
    override maxMessagesPerSecond = 10; // a client that floods the room is dropped
    override state = new DuelState();
    override plugins = definePlugins([lightning.plugin()]);
    #match: Promise<RoomMatch> | undefined;

    override messages = { click: (client: Client) => this.#win(idOf(client)) };

    /** Signed in as @colyseus/auth's JWT check signs in: the token's player, or no join. */
    static override async onAuth(token: string) {
      return { id: login.verify(token) };
    }

    override onCreate() {
      this.state.phase = 'paying';
      this.state.matchId = '';
      this.state.winner = '';
      // A fee that expired unpaid frees its seat: this duel will not be funded any more.
      this.plugins.lightning.onExpired((entry) => {
        if (entry.kind === 'entryFee') void this.#callOff('a fee was not paid in time');
      });
    }

    override async onJoin(client: Client) {
      // Opened once, by the first join; a second join waits for the same match. One that could
      // not be opened is opened again by the next join (this join is refused: nothing charged).
      this.#match ??= this.#open().catch((err: unknown) => {
        this.#match = undefined;
        throw err;
      });
      const match = await this.#match;
      // One fee per player (a repeat returns it): its code reaches this client only.
      await match.enter(client);
    }

    override onLeave(client: Client) {
      if (this.state.phase === 'paying') void this.#callOff('a player left');
      else if (this.state.phase === 'playing') {
        const other = this.clients.find((c) => idOf(c) !== idOf(client));
        if (other) void this.#win(idOf(other)); // leaving after the start forfeits
      }
    }

    async #open(): Promise<RoomMatch> {
      const match = await this.plugins.lightning.openMatch({
        entryFeeMsat,
        rake,
        feeExpiresIn,
        seats: 2,
        description: 'Duel',
      });
      this.state.matchId = match.id;
      match.onFunded(() => {
        if (this.state.phase === 'paying') this.state.phase = 'playing';
      });
      // However it was decided (here, by its timeout, by an operator), no one new sits down.
      match.onClosed(() => this.lock());
      return match;
    }

    /** The first click once both paid wins the pot minus the rake, once. */
    async #win(playerId: string): Promise<void> {
      if (this.state.phase !== 'playing' || !this.#match) return;
      this.state.phase = 'won';
      this.state.winner = playerId;
      this.lock();
      const match = await this.#match;
      await this.#decide(match, () => match.settle({ [playerId]: 1 }));
    }

    /** No duel: the match refunds every paid fee and closes every open one. */
    async #callOff(reason: string): Promise<void> {
      if (this.state.phase !== 'paying') return;
      this.state.phase = 'off';
      this.lock();
      const match = await this.#match;
      if (match) await this.#decide(match, () => match.abort(reason));
    }

    /**
     * Settles or aborts, tried up to three times (both are idempotent: a repeat returns the
     * decision that stands). If the ledger still fails, the room stops keeping the match alive,
     * so the reconciler finishes it after its timeout: a decided match pays out, an open one
     * refunds every fee.
     */
    async #decide(match: RoomMatch, move: () => Promise<MatchView>, attempt = 1): Promise<void> {
      try {
        await move();
      } catch (err) {
        log(`[duel] deciding match ${match.id} (attempt ${attempt}): ${(err as Error).message}`);
        if (attempt >= 3) return match.stop();
        await new Promise<void>((resolve) => this.clock.setTimeout(resolve, 1_000 * attempt));
        return this.#decide(match, move, attempt + 1);
      }
    }
  };
}
