/**
 * The region gate (`regionGate: true`): refuses a money helper to a player the service would
 * refuse, before anything is sent, by the address their client joined from as `clientAddress`
 * reads it (server/client-address.ts), never a header the client merely sent. The socket first,
 * where `lightning.attach(server)` sees the upgrade (any onAuth, static too); else the context
 * of the plugin's onAuth, whose `ip` Colyseus may take from client-sent headers.
 *
 * Footprint, bounded whatever joins fail: a context address lives with its Client (WeakMap); a
 * socket's only for a reserved seat, at most MAX_PENDING; players' at most MAX_PLAYERS.
 */
import type { AuthContext, Client, Room } from '@colyseus/core';
import { RegionRefusedError } from '../errors.js';
import type { PluginHost } from './host.js';

const MAX_PENDING = 1_000;
const MAX_PLAYERS = 10_000;

export class RegionGate {
  readonly #host: Pick<PluginHost, 'clientAddress' | 'regionOf' | 'watchConnections'>;
  readonly #noted = new WeakMap<Client, string | null>();
  readonly #seen = new Map<string, string | null>();
  readonly #players = new Map<string, string | null>();

  constructor(host: Pick<PluginHost, 'clientAddress' | 'regionOf' | 'watchConnections'>) {
    this.#host = host;
  }

  /**
   * The plugin's onAuth: runs after the room's own accepted the client and only reads its
   * address (Colyseus decides which plugins have onAuth once per room class). A static onAuth
   * skips it; `lightning.attach(server)` then gives the sockets' addresses.
   */
  noteAuth = (client: Client, _options: unknown, context: AuthContext): void => {
    this.#noted.set(client, this.#host.clientAddress(context?.headers, contextPeer(context)));
  };

  /** Notes the room's sockets; only a reserved seat's, so a stranger's cannot fill the book. */
  watch(room: Room): () => void {
    return this.#host.watchConnections(room.roomId, (sessionId, address) => {
      if (!room.hasReservedSeat(sessionId)) return;
      this.#seen.delete(sessionId);
      this.#seen.set(sessionId, address);
      if (this.#seen.size > MAX_PENDING)
        this.#seen.delete(this.#seen.keys().next().value as string);
    });
  }

  /** `client` joined as `playerId`: its address (the socket's, else the context's) is theirs. */
  joined(client: Client, playerId: string): void {
    // Our onAuth makes Colyseus call the room's default onAuth, whose `true` would become auth.
    if (client.auth === true) client.auth = undefined;
    const seen = this.#seen.get(client.sessionId);
    this.#seen.delete(client.sessionId);
    const address = seen !== undefined ? seen : (this.#noted.get(client) ?? null);
    this.#players.delete(playerId);
    this.#players.set(playerId, address);
    if (this.#players.size > MAX_PLAYERS) {
      this.#players.delete(this.#players.keys().next().value as string);
    }
    // Asked now, so that the player's first helper call does not wait for the answer.
    if (address !== null) void this.#host.regionOf(address).catch(() => {});
  }

  /** Refuses a player the service would refuse (RegionRefusedError): nothing is sent. */
  async admit(playerId: string, roomId: string): Promise<void> {
    const ip = this.#players.get(playerId);
    if (ip === undefined || ip === null) {
      const room = `room ${roomId}`;
      throw new RegionRefusedError(
        playerId,
        null,
        null,
        ip === undefined
          ? `player ${playerId} has not joined ${room} (regionGate: its address is unknown); nothing was sent`
          : `player ${playerId} joined ${room} with no address the gate can trust (regionGate): behind proxies, set clientAddress.proxies; with a static onAuth, or a client sending forwarding headers to a game with no proxy, use lightning.attach(server), which sees the socket; nothing was sent`,
      );
    }
    const support = await this.#host.regionOf(ip);
    if (!support.isSupported) {
      throw new RegionRefusedError(playerId, support.ipCountry ?? null, support.ipRegion ?? null);
    }
  }
}

/**
 * The socket's peer as Colyseus's auth context gives it: `context.ip`, unless a header of the
 * request could have supplied that string (Colyseus reads X-Real-IP, X-Forwarded-For and
 * others before the socket), in which case the peer is unknown.
 */
function contextPeer(context: AuthContext | undefined): string | null {
  const ip = context?.ip;
  if (typeof ip !== 'string' || ip === '') return null;
  try {
    for (const [name, value] of context?.headers ?? []) {
      // Host names this server, never the client (`127.0.0.1` for a local game on port 80).
      if (name !== 'host' && value.split(',')[0]?.trim() === ip) return null;
    }
  } catch {
    return null;
  }
  return ip;
}
