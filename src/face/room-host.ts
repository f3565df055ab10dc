/**
 * The room plugin's host (room/host.ts) over what the server runs on. It hands a room the
 * server's money operations once it runs (what a room passes them was parsed by the room); the
 * face's own money helpers call the same operations once they parsed their input.
 */
import type { Intent } from '../ledger/intent.js';
import type { PaymentsPort } from '../port/port.js';
import type { MatchCalls, MoneyCalls, PluginHost, WidgetCalls } from '../room/host.js';
import type {
  ClientAddresses,
  ConnectionAddresses,
  HeaderReader,
} from '../server/client-address.js';
import type { Engine } from '../server/engine.js';
import type { LightningLogger } from '../server/logger.js';
import type { Matches } from '../server/match/matches.js';
import type { MoneyOperations } from '../server/operations/money.js';
import type { Settings } from '../server/options.js';
import { asPlayer, type OutboundScheduler } from '../server/outbound.js';
import type { PriceFeed, PriceReading } from '../server/price.js';
import type { RegionCache } from '../server/regions.js';
import type { Rooms } from '../server/rooms.js';
import type { PresenceLike } from '../server/settlement.js';
import { need, type Reach } from './reach.js';

/** What a room reaches, of what the server runs on. */
export interface RoomParts {
  engine: Engine;
  money: MoneyOperations;
  port: PaymentsPort;
  outbound: OutboundScheduler | null;
  rooms: Rooms;
  webhookUrl(source: 'ramp' | 'widget'): string;
  matches: Matches;
  regions: RegionCache;
  /** Null unless `fiat` is set. */
  price: PriceFeed | null;
}

/** The five widget calls, each one call of the payments port, in its player's turn. */
class RoomWidget implements WidgetCalls {
  readonly #reach: Reach<RoomParts>;

  constructor(reach: Reach<RoomParts>) {
    this.#reach = reach;
  }

  #port(): PaymentsPort {
    return need(this.#reach, 'service.api').port;
  }

  // Each waits in its player's turn: server/outbound.ts.
  #forPlayer<T>(playerId: string | undefined, work: () => Promise<T>): Promise<T> {
    return playerId === undefined
      ? work()
      : asPlayer(need(this.#reach, 'service.api').outbound, playerId, work);
  }

  async makeWidgetUser(order: Parameters<WidgetCalls['makeWidgetUser']>[0]) {
    return this.#forPlayer(order.playerId, () => this.#port().makeWidgetUser(order));
  }

  async openWidget(order: Parameters<WidgetCalls['openWidget']>[0]) {
    return this.#forPlayer(order.playerId, () => this.#port().openWidget(order));
  }

  async openPurchase(order: Parameters<WidgetCalls['openPurchase']>[0]) {
    return this.#forPlayer(order.playerId, () => this.#port().openPurchase(order));
  }

  async acceptDisclosures(userId: string, typeIds: readonly number[]) {
    return this.#port().acceptDisclosures(userId, typeIds);
  }

  async updateEmail(userId: string, email: string) {
    return this.#port().updateEmail(userId, email);
  }
}

export class RoomHost implements PluginHost {
  readonly #reach: Reach<RoomParts>;
  readonly #addresses: ClientAddresses;
  readonly #connections: ConnectionAddresses;
  readonly #said = new Set<string>();
  readonly logger: LightningLogger;
  readonly currency: string;
  readonly widget: WidgetCalls;

  constructor(
    reach: Reach<RoomParts>,
    settings: Settings,
    addresses: ClientAddresses,
    connections: ConnectionAddresses,
  ) {
    this.#reach = reach;
    this.#addresses = addresses;
    this.#connections = connections;
    this.logger = settings.logger;
    this.currency = settings.fiat?.currency ?? '';
    this.widget = new RoomWidget(reach);
  }

  async #engine(): Promise<Engine> {
    return (await this.#reach.start()).engine;
  }

  devWarn(key: string, message: string): void {
    if (process.env.NODE_ENV === 'production' || this.#said.has(key)) return;
    this.#said.add(key);
    this.logger.warn(message);
  }

  ready(): Promise<unknown> {
    return this.#reach.start();
  }

  money(): MoneyCalls {
    return need(this.#reach, 'plugin').money;
  }

  async matches(): Promise<MatchCalls> {
    return (await this.#reach.start()).matches;
  }

  async regionOf(ip: string) {
    return (await this.#reach.start()).regions.support(ip);
  }

  clientAddress(headers: HeaderReader | undefined, peer: string | null): string | null {
    return this.#addresses.of(headers, peer);
  }

  watchConnections(
    roomId: string,
    sink: (sessionId: string, address: string | null) => void,
  ): () => void {
    return this.#connections.watch(roomId, sink);
  }

  async intent(id: string): Promise<Intent | null> {
    return (await this.#engine()).ledger.get(id);
  }

  async openIntents(roomId: string): Promise<Intent[]> {
    return (await this.#engine()).ledger.openByRoom(roomId);
  }

  webhookUrl(source: 'ramp' | 'widget'): string {
    return need(this.#reach, 'webhookUrl').webhookUrl(source);
  }

  attachPresence(presence: PresenceLike | undefined): PresenceLike | undefined {
    const rooms = need(this.#reach, 'presence').rooms;
    if (presence) rooms.usePresence(presence);
    return rooms.presence();
  }

  hostRoom(roomId: string, deliver: (intent: Intent) => void): () => void {
    return need(this.#reach, 'hostRoom').rooms.host(roomId, deliver);
  }

  price(): PriceReading | null {
    return this.#reach.now()?.price?.current ?? null;
  }

  onPrice(listener: (price: PriceReading) => void): () => void {
    return need(this.#reach, 'price').price?.onPrice(listener) ?? (() => {});
  }
}
