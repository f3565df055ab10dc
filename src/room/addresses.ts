/**
 * Where each player of a room joined from, for the region gate: the client address of
 * `clientAddress` (server/client-address.ts), never a header the client merely sent.
 *
 * Two sources, the socket first:
 *   - `lightning.attach(server)` sees each websocket's upgrade, socket and all, for every room
 *     however it authenticates (a static onAuth too, which Colyseus lets skip the instance one);
 *   - otherwise the context Colyseus gives the plugin's onAuth, which runs after the room's own
 *     onAuth accepted the client. Colyseus's `context.ip` prefers client-sent headers
 *     (X-Real-IP, X-Forwarded-For) to the socket, so it is the socket's peer only when no header
 *     of the request could have supplied it; behind proxies the headers are read as
 *     `clientAddress` says.
 *
 * Footprint, bounded whatever joins fail: an address noted in onAuth lives with its Client
 * object (a WeakMap: a failed join, whose onLeave never runs, leaves nothing); a socket's
 * address is kept only for a session with a seat reserved in this room, at most MAX_PENDING,
 * until its join; a player's, at most MAX_PLAYERS per room, the oldest forgotten. Each value is
 * an address of at most 45 characters, or null.
 */
import type { AuthContext, Client } from '@colyseus/core';

const MAX_PENDING = 1_000;
const MAX_PLAYERS = 10_000;

export class AddressBook {
  readonly #noted = new WeakMap<Client, string | null>();
  readonly #seen = new Map<string, string | null>();
  readonly #players = new Map<string, string | null>();

  /** The address read from Colyseus's context, once the room's own onAuth accepted `client`. */
  noteContext(client: Client, address: string | null): void {
    this.#noted.set(client, address);
  }

  /** The address of a socket that will join as `sessionId` (its seat is reserved). */
  noteSocket(sessionId: string, address: string | null): void {
    this.#seen.delete(sessionId);
    this.#seen.set(sessionId, address);
    if (this.#seen.size > MAX_PENDING) this.#seen.delete(this.#seen.keys().next().value as string);
  }

  /** `client` joined as `playerId`: its address (the socket's, else the context's) is theirs. */
  joined(client: Client, playerId: string): string | null {
    const seen = this.#seen.get(client.sessionId);
    this.#seen.delete(client.sessionId);
    const address = seen !== undefined ? seen : (this.#noted.get(client) ?? null);
    this.#players.delete(playerId);
    this.#players.set(playerId, address);
    if (this.#players.size > MAX_PLAYERS) {
      this.#players.delete(this.#players.keys().next().value as string);
    }
    return address;
  }

  /** The player's address; undefined when they never joined this room (or were forgotten). */
  of(playerId: string): string | null | undefined {
    return this.#players.get(playerId);
  }
}

/**
 * The socket's peer as Colyseus's auth context gives it: `context.ip`, unless a header of the
 * request could have supplied that string (Colyseus reads X-Real-IP, X-Forwarded-For and
 * others before the socket), in which case the peer is unknown.
 */
export function contextPeer(context: AuthContext | undefined): string | null {
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
