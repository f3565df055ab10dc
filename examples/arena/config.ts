/** The arena's numbers, in one place; `startArena({ config })` may override any of them. */
export interface ArenaConfig {
  /** What each player pays to enter a round, in millisatoshis. */
  entryFeeMsat: bigint;
  /** The house keeps this share of the pot. */
  rake: number;
  minPlayers: number;
  maxPlayers: number;
  /** How long a player has to pay the entry fee, in seconds (the service's minimum is 10). */
  feeExpiresIn: number;
  /** How long the winner has to claim the prize, in seconds. */
  rewardExpiresIn: number;
  /**
   * Messages one client may send per second; past it Colyseus drops the client. A human
   * clicking as fast as they can stays far below; a script sending thousands does not.
   */
  maxMessagesPerSecond: number;
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
  feeExpiresIn: 300,
  rewardExpiresIn: 600,
  maxMessagesPerSecond: 20,
  shop: { 'golden hat': 150, 'speed boots': 400, 'lucky charm': 900 },
  startingPoints: 1_000,
};
