/**
 * What the room plugin needs from the server, and nothing more: the money operations, a read
 * of one intent, the five widget calls it makes to the service, presence to hear other
 * processes' settlements on, and a way to be handed the moves this process applies to the
 * room's intents. The server's public face implements it; the plugin never sees the engine or
 * the API client behind it.
 *
 * Every call takes what a parse returns (`Parsed...`, `...Body`): the room parses its helpers'
 * arguments once and fills in what it knows to be valid (the player, the room), and nothing
 * behind the host parses them again. A game's unparsed input does not type-check here.
 */
import type { Intent } from '../ledger/intent.js';
import type { PaymentsPort, RegionSupport } from '../port/port.js';
import type { HeaderReader } from '../server/client-address.js';
import type { LightningLogger } from '../server/logger.js';
import type { ParsedEnter, ParsedOpenMatch, Shares } from '../server/match/terms.js';
import type { MatchView } from '../server/match/view.js';
import type {
  ParsedAddressPayment,
  ParsedEntryFee,
  ParsedReward,
  ParsedSpend,
} from '../server/operations/inputs.js';
import type { PriceReading } from '../server/price.js';
import type { PresenceLike } from '../server/settlement.js';

/**
 * What a room does with matches; the server's Matches implements it. `shares` and `reason` as
 * `sharesInput` and `reasonInput` (server/match/terms.ts) return them.
 */
export interface MatchCalls {
  open(args: ParsedOpenMatch): Promise<MatchView>;
  enter(args: ParsedEnter): Promise<Intent>;
  settle(matchId: string, shares: Shares): Promise<MatchView>;
  abort(matchId: string, reason: string): Promise<MatchView>;
  view(matchId: string): Promise<MatchView>;
  keepAlive(matchId: string): Promise<void>;
}

/**
 * The payments port's calls a room makes for its players' widget (room/widget-access.ts), in
 * the game's words; nothing else of the provider reaches the room. Each takes what a parse
 * returns (an email as `z.email()` returns it); a user id is checked where it goes into a path.
 */
export type WidgetCalls = Pick<
  PaymentsPort,
  'makeWidgetUser' | 'openWidget' | 'openPurchase' | 'acceptDisclosures' | 'updateEmail'
>;

export interface PluginHost {
  /** Resolves once the server is running (emulator started, ledger open). */
  ready(): Promise<unknown>;
  reward(args: ParsedReward): Promise<Intent>;
  payAddress(args: ParsedAddressPayment): Promise<Intent>;
  chargeEntryFee(args: ParsedEntryFee): Promise<Intent>;
  spendPoints(args: ParsedSpend): Promise<Intent>;
  /** Whether the service serves the region of `ip` (cached; see server/regions.ts). */
  regionOf(ip: string): Promise<RegionSupport>;
  /**
   * The client's address for these headers and this socket peer (null when the transport hides
   * it), as `clientAddress` says to read it; null when it cannot be told.
   */
  clientAddress(headers: HeaderReader | undefined, peer: string | null): string | null;
  /**
   * Calls `sink` with the session id and address of each websocket upgrade for room `roomId`
   * that `lightning.attach(server)` sees; returns the function that stops it.
   */
  watchConnections(
    roomId: string,
    sink: (sessionId: string, address: string | null) => void,
  ): () => void;
  /** The match operations (server/match/matches.ts). */
  matches(): Promise<MatchCalls>;
  /** The intent as the ledger holds it now. */
  intent(id: string): Promise<Intent | null>;
  /** The room's open intents (creating, pending, unknown) as the ledger holds them now. */
  openIntents(roomId: string): Promise<Intent[]>;
  /** The widget calls; each one fails before `ready()`. */
  readonly widget: WidgetCalls;
  webhookUrl(source: 'ramp' | 'widget'): string;
  readonly logger: LightningLogger;
  /**
   * Says `message` once per `key` for the life of the server, outside production only: a
   * development warning that names the fix (a player with no stable id, a room without state).
   */
  devWarn(key: string, message: string): void;
  /**
   * Settlements for rooms of other processes are published on the room's presence from now on;
   * returns the presence the room should subscribe on (the same one, or the matchmaker's).
   */
  attachPresence(presence: PresenceLike | undefined): PresenceLike | undefined;
  /**
   * Every move this process applies to an intent of `roomId` is given to `deliver` in hand, and
   * none is published (only other processes' moves come on presence); only after `ready()`.
   * Returns the function that stops it.
   */
  hostRoom(roomId: string, deliver: (intent: Intent) => void): () => void;
  /** The fiat currency of `state.lightning.price` ('USD'), or '' when the game did not turn it on. */
  readonly currency: string;
  /** The price as last read; null with fiat off or before the first answer. */
  price(): PriceReading | null;
  /** Calls `listener` with each new price (nothing with fiat off); only after `ready()`. */
  onPrice(listener: (price: PriceReading) => void): () => void;
}
