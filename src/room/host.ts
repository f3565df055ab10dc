/**
 * What the room plugin needs from the server, and nothing more (face/room-host.ts implements
 * it). Every call takes what the room's one parse returned: nothing behind it parses again.
 */
import type { Intent } from '../ledger/intent.js';
import type { PaymentsPort, RegionSupport } from '../port/port.js';
import type { HeaderReader } from '../server/client-address.js';
import type { LightningLogger } from '../server/logger.js';
import type { ParsedEnter, ParsedOpenMatch, Shares } from '../server/match/terms.js';
import type { MatchView } from '../server/match/view.js';
import type {
  ParsedAddressPayment,
  ParsedCredit,
  ParsedEntryFee,
  ParsedReward,
  ParsedSpend,
  ParsedWithdrawal,
} from '../server/operations/inputs.js';
import type { PriceReading } from '../server/price.js';
import type { PresenceLike } from '../server/settlement.js';

/** What a room does with matches; the server's Matches implements it. */
export interface MatchCalls {
  open(args: ParsedOpenMatch): Promise<MatchView>;
  enter(args: ParsedEnter): Promise<Intent>;
  settle(matchId: string, shares: Shares): Promise<MatchView>;
  abort(matchId: string, reason: string): Promise<MatchView>;
  view(matchId: string): Promise<MatchView>;
  keepAlive(matchId: string): Promise<void>;
}

/** What a room's money helpers start, once the server runs; the server's MoneyOperations. */
export interface MoneyCalls {
  reward(args: ParsedReward): Promise<Intent>;
  payAddress(args: ParsedAddressPayment): Promise<Intent>;
  chargeEntryFee(args: ParsedEntryFee): Promise<Intent>;
  spendPoints(args: ParsedSpend): Promise<Intent>;
  credit(args: ParsedCredit, admit?: () => void): Promise<Intent>;
  withdraw(args: ParsedWithdrawal): Promise<Intent>;
  /** The msats in a player's tab now, as the journal holds them. */
  tab(playerId: string): Promise<number>;
}

/** The payments port's calls a room makes for its players' widget. */
export type WidgetCalls = Pick<
  PaymentsPort,
  'makeWidgetUser' | 'openWidget' | 'openPurchase' | 'acceptDisclosures' | 'updateEmail'
>;

export interface PluginHost {
  /** Resolves once the server is running (emulator started, ledger open). */
  ready(): Promise<unknown>;
  /** The money operations, handed down once (after `ready()`): a helper calls them directly. */
  money(): MoneyCalls;
  /** Whether the service serves the region of `ip` (cached; see server/regions.ts). */
  regionOf(ip: string): Promise<RegionSupport>;
  /** The client's address for these headers and socket peer, as `clientAddress` reads it. */
  clientAddress(headers: HeaderReader | undefined, peer: string | null): string | null;
  /** Calls `sink` with each websocket upgrade for `roomId` that `lightning.attach` sees. */
  watchConnections(
    roomId: string,
    sink: (sessionId: string, address: string | null) => void,
  ): () => void;
  /** The match operations (server/match/matches.ts). */
  matches(): Promise<MatchCalls>;
  /** The intent as the ledger holds it now. */
  intent(id: string): Promise<Intent | null>;
  /** The room's open intents (held, queued, creating, pending, unknown) as the ledger holds them now. */
  openIntents(roomId: string): Promise<Intent[]>;
  /** The widget calls; each one fails before `ready()`. */
  readonly widget: WidgetCalls;
  webhookUrl(source: 'ramp' | 'widget'): string;
  readonly logger: LightningLogger;
  /** The server's clock (the `clock` option), epoch ms: what the room's own rules measure by. */
  now(): number;
  /** Says `message` once per `key`, outside production only: a warning that names the fix. */
  devWarn(key: string, message: string): void;
  /** Whether this process runs in production (NODE_ENV=production), read at each call. */
  inProduction(): boolean;
  /** Publishes other processes' settlements on this presence; returns the one to subscribe on. */
  attachPresence(presence: PresenceLike | undefined): PresenceLike | undefined;
  /** Hands `deliver` every move this process applies to an intent of `roomId` (after `ready()`). */
  hostRoom(roomId: string, deliver: (intent: Intent) => void): () => void;
  /** The fiat currency of `state.lightning.price` ('USD'), or '' when the game did not turn it on. */
  readonly currency: string;
  /** The price as last read; null with fiat off or before the first answer. */
  price(): PriceReading | null;
  /** Calls `listener` with each new price (nothing with fiat off); only after `ready()`. */
  onPrice(listener: (price: PriceReading) => void): () => void;
}
