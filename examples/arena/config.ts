/** The arena's numbers, in one place; `startArena({ config })` may override any of them. */
export interface ArenaConfig {
  /** What each player pays to enter a round, in millisatoshis. */
  entryFeeMsat: bigint;
  /** The house keeps this share of the pot (0 to 0.5). */
  rake: number;
  minPlayers: number;
  maxPlayers: number;
  /**
   * How long the players of a round have to pay, in seconds (the service's minimum is 10).
   * A round not paid by then is called off and whoever paid is refunded.
   */
  feeExpiresIn: number;
  /** How long a prize or refund code can be claimed, in seconds (at least 60). */
  claimExpiresIn: number;
  /**
   * A round's match that nobody settles or aborts this long after its room stopped keeping
   * it alive (the process died) is aborted by the reconciler, every fee refunded. In ms.
   */
  matchTimeoutMs: number;
  /**
   * Messages one client may send per second; past it Colyseus drops the client. A human
   * clicking as fast as they can stays far below; a script sending thousands does not.
   */
  maxMessagesPerSecond: number;
  /**
   * New guests `POST /auth` makes for one address per minute (an IPv6 client: per /64); past
   * it, 429 with Retry-After. A player who brings a valid token is signed in again without
   * counting. Each guest is a new player to every per-player limit, and can be charged: this
   * (and `limits.maxOpenPerGame` of the library) is what bounds a script making guests.
   */
  signInsPerMinute: number;
  /**
   * Credited to a player's tab (docs/MATCHES.md) for each round they won, or played to the end
   * without clicking too early; they withdraw the tab as one code (the Withdraw button).
   */
  roundWonCreditMsat: bigint;
  roundSurvivedCreditMsat: bigint;
  /**
   * How long a player must have been in the room before a round credits their tab (the
   * plugin's `tabs.minTimeInRoomMs`, on the server's clock): a script that joins, plays one
   * round and leaves earns nothing.
   */
  minTimeInRoomMs: number;
  /**
   * Once every fee is in: "get ready" after `countdownMs`, then "GO!" after a random wait
   * between `goAfterMs.min` and `goAfterMs.max` (a click before it loses the round).
   */
  countdownMs: number;
  goAfterMs: { min: number; max: number };
  /** The shop: item -> price in points (USDZ minor units: 100 = 1.00). */
  shop: Readonly<Record<string, number>>;
  /** Points each new player gets on the emulator, to try the shop. */
  startingPoints: number;
}

export const arenaConfig: ArenaConfig = {
  entryFeeMsat: 100_000n, // 100 sats
  rake: 0.1,
  minPlayers: 2,
  maxPlayers: 4,
  feeExpiresIn: 120,
  claimExpiresIn: 600,
  matchTimeoutMs: 10 * 60_000,
  maxMessagesPerSecond: 20,
  signInsPerMinute: 5,
  roundWonCreditMsat: 10_000n, // 10 sats
  roundSurvivedCreditMsat: 5_000n,
  minTimeInRoomMs: 20_000,
  countdownMs: 3_000,
  goAfterMs: { min: 1_000, max: 3_000 },
  shop: { 'golden hat': 150, 'speed boots': 400, 'lucky charm': 900 },
  startingPoints: 1_000,
};
