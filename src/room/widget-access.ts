/**
 * The widget side of a player: their widget user (made by player id, which the service treats
 * idempotently, then remembered per process), sessions, disclosures and email. A session's
 * token goes to the one client it belongs to, never into shared state. What this adds to a
 * parsed call (the game's email, a widget user id) is checked here.
 */
import type { Client } from '@colyseus/core';
import { InvalidArgumentError } from '../errors.js';
import { parseInput } from '../parse.js';
import type { PurchaseSession, WidgetSession } from '../port/port.js';
import type { PluginHost } from './host.js';
import { emailArg, type ParsedPurchaseArgs, type ParsedWidgetArgs } from './inputs.js';
import type { PluginSettings } from './options.js';
import { clientOf, playerOf, recordableId } from './players.js';

/** What `openWidget` sends to the player's client as `lightning:widget`; `openPurchase`'s. */
export type { PurchaseSession, WidgetSession } from '../port/port.js';

/** Widget user ids per player, shared by every room of the process. */
const userIds = new WeakMap<PluginHost, Map<string, Promise<string>>>();
/** Players whose widget user id a process remembers, the one unseen longest forgotten first. */
const REMEMBERED_USERS = 10_000;

export class WidgetAccess {
  readonly #host: PluginHost;
  readonly #settings: PluginSettings;

  constructor(host: PluginHost, settings: PluginSettings) {
    this.#host = host;
    this.#settings = settings;
  }

  /** The player's email as the game tells it (`options.email`), checked; undefined: none. */
  email(client: Client): string | undefined {
    const email = this.#settings.email(client);
    if (email === undefined || email === '') return undefined;
    return parseInput(emailArg, email, 'email');
  }

  userId(client: Client, playerId: string): Promise<string> {
    if (this.#settings.widgetUser) {
      return this.#settings.widgetUser(client, playerId).then((id) => recordableId(id, 'userId'));
    }
    const cache = userIds.get(this.#host) ?? new Map<string, Promise<string>>();
    userIds.set(this.#host, cache);
    const known = cache.get(playerId);
    if (known) {
      cache.delete(playerId);
      cache.set(playerId, known);
      return known;
    }
    const email = this.email(client);
    if (!email) {
      return Promise.reject(
        new InvalidArgumentError(
          'email',
          'this player has no email to create their widget user with: set client.userData.email, or pass options.email or options.widgetUser',
        ),
      );
    }
    const created = this.#host.widget
      .makeWidgetUser({ playerId, email })
      .then((user) => recordableId(user.id, 'userId'));
    cache.set(playerId, created);
    created.catch(() => {
      if (cache.get(playerId) === created) cache.delete(playerId);
    });
    for (const oldest of cache.keys()) {
      if (cache.size <= REMEMBERED_USERS) break;
      cache.delete(oldest);
    }
    return created;
  }

  /** Opens a widget session for the client's player and sends it to that client only. */
  async openWidget(
    client: unknown,
    roomId: string,
    args: ParsedWidgetArgs,
  ): Promise<WidgetSession> {
    const { to, playerId } = await this.#ready(client);
    const email = this.email(to);
    if (!email) {
      throw new InvalidArgumentError(
        'email',
        'a widget session needs the player email: set client.userData.email, or pass options.email',
      );
    }
    const metadata = { ...args.metadata, roomId, playerId };
    const webhookUrl = this.#host.webhookUrl('widget');
    const session = await this.#host.widget.openWidget({ email, playerId, webhookUrl, metadata });
    to.send('lightning:widget', session);
    return session;
  }

  /** Opens a purchase (ramp) session for the client's player and sends it to that client only. */
  async openPurchase(
    client: unknown,
    roomId: string,
    args: ParsedPurchaseArgs,
  ): Promise<PurchaseSession> {
    const { to, playerId } = await this.#ready(client);
    const email = args.email ?? this.email(to);
    if (!email)
      throw new InvalidArgumentError('email', 'a purchase session needs the player email');
    const { destination, quoteCurrency, baseCurrency } = args;
    const session = await this.#host.widget.openPurchase({
      email,
      webhookUrl: this.#host.webhookUrl('ramp'),
      playerId,
      metadata: { roomId, playerId },
      destination,
      quoteCurrency,
      baseCurrency,
    });
    to.send('lightning:purchase', session);
    return session;
  }

  async acceptDisclosures(client: unknown, typeIds: readonly number[]) {
    const { to, playerId } = await this.#ready(client);
    return this.#host.widget.acceptDisclosures(await this.userId(to, playerId), typeIds);
  }

  async updateEmail(client: unknown, email: string) {
    const { to, playerId } = await this.#ready(client);
    return this.#host.widget.updateEmail(await this.userId(to, playerId), email);
  }

  /** The connected client a widget helper acts for and its player, once the server runs. */
  async #ready(client: unknown): Promise<{ to: Client; playerId: string }> {
    const to = clientOf(client);
    const playerId = recordableId(playerOf(to, this.#settings.playerId), 'player');
    await this.#host.ready();
    return { to, playerId };
  }
}
