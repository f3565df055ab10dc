/**
 * Where each player of a room joined from, for the region gate: the address `clientAddress`
 * reads (server/client-address.ts), never a header the client merely sent. The socket first,
 * where `lightning.attach(server)` sees the upgrade (any onAuth, static too); else the context
 * of the plugin's onAuth, whose `ip` Colyseus may take from client-sent headers.
 *
 * Footprint, bounded whatever joins fail: a context address lives with its Client (WeakMap); a
 * socket's only for a reserved seat, at most MAX_PENDING; players' at most MAX_PLAYERS.
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
