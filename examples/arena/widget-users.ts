/**
 * Each player's widget user at the service, created once and remembered: a player who joins
 * again (another tab, another round, a rejoin after a drop) costs no call. Every call to the
 * service takes a token of the game's rate, and a player's calls wait in that player's turn;
 * a create on every join let one player who joins and leaves in a loop spend the turn on calls
 * that learn nothing new (the service answers a repeat with the same user).
 *
 * Footprint: one entry per player seen, at most `max` (the player unseen longest is forgotten
 * first, and created again, idempotently, if they come back). A create that fails is not kept.
 */
export class WidgetUsers {
  readonly #create: (playerId: string, email: string) => Promise<string>;
  readonly #max: number;
  readonly #ids = new Map<string, Promise<string>>();

  constructor(create: (playerId: string, email: string) => Promise<string>, max = 10_000) {
    this.#create = create;
    this.#max = max;
  }

  /** The player's widget user id: remembered, or created (once, however many ask at once). */
  of(playerId: string, email: string): Promise<string> {
    const known = this.#ids.get(playerId);
    if (known) {
      // Seen again: the last to be forgotten.
      this.#ids.delete(playerId);
      this.#ids.set(playerId, known);
      return known;
    }
    const made = this.#create(playerId, email);
    this.#ids.set(playerId, made);
    made.catch(() => {
      if (this.#ids.get(playerId) === made) this.#ids.delete(playerId);
    });
    for (const oldest of this.#ids.keys()) {
      if (this.#ids.size <= this.#max) break;
      this.#ids.delete(oldest);
    }
    return made;
  }
}
