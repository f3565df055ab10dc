/**
 * The room plugin's host (room/host.ts) over what the server runs on. It hands a room the
 * server's money operations once it runs (what a room passes them was parsed by the room); the
 * face's own money helpers call the same operations once they parsed their input.
 */
import type { Clock } from '../clock.js';
import type { Intent } from '../ledger/intent.js';
import type { MatchCalls, MoneyCalls, PluginHost, WidgetCalls } from '../room/host.js';
import type {
  ClientAddresses,
  ConnectionAddresses,
  HeaderReader,
} from '../server/client-address.js';
import type { LightningLogger } from '../server/logger.js';
import type { Settings } from '../server/options.js';
import { asPlayer } from '../server/outbound.js';
import type { PriceReading } from '../server/price.js';
import type { Runtime } from '../server/runtime.js';
import type { PresenceLike } from '../server/settlement.js';
import { need, type Reach } from './reach.js';

type RoomParts = Pick<
  Runtime,
  | 'engine'
  | 'money'
  | 'port'
  | 'outbound'
  | 'rooms'
  | 'webhookUrl'
  | 'matches'
  | 'regions'
  | 'price'
  | 'metrics'
>;

/** The five widget calls, each one call of the payments port, in its player's turn. */
function widgetCalls(reach: Reach<RoomParts>): WidgetCalls {
  const port = () => need(reach, 'service.api').port;
  // A player's session waits in their turn (server/outbound.ts).
  const turn = <T>(playerId: string, work: () => Promise<T>) =>
    asPlayer(need(reach, 'service.api').outbound, playerId, work);
  return {
    makeWidgetUser: async (order) => turn(order.playerId, () => port().makeWidgetUser(order)),
    openWidget: async (order) => turn(order.playerId, () => port().openWidget(order)),
    openPurchase: async (order) => turn(order.playerId, () => port().openPurchase(order)),
    acceptDisclosures: async (userId, typeIds) => port().acceptDisclosures(userId, typeIds),
    updateEmail: async (userId, email) => port().updateEmail(userId, email),
  };
}

export class RoomHost implements PluginHost {
  readonly #reach: Reach<RoomParts>;
  readonly #addresses: ClientAddresses;
  readonly #connections: ConnectionAddresses;
  readonly #said = new Set<string>();
  readonly #clock: Clock;
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
    this.#clock = settings.clock;
    this.currency = settings.fiat?.currency ?? '';
    this.widget = widgetCalls(reach);
  }

  async #engine() {
    return (await this.#reach.start()).engine;
  }

  now(): number {
    return this.#clock.now();
  }

  devWarn(key: string, message: string): void {
    if (this.inProduction() || this.#said.has(key)) return;
    this.#said.add(key);
    this.logger.warn(message);
  }

  inProduction(): boolean {
    return process.env.NODE_ENV === 'production';
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
