/** The arena's numbers, in one place. */
export const arenaConfig = {
  /** What each player pays to enter a round, in millisatoshis (100 sats). */
  entryFeeMsat: 100_000n,
  /** The house keeps this share of the pot. */
  rake: 0.1,
  minPlayers: 2,
  maxPlayers: 4,
  /** How long a player has to pay the entry fee, in seconds. */
  feeExpiresIn: 300,
  /** How long the winner has to claim the prize, in seconds. */
  rewardExpiresIn: 600,
  /** The shop: item -> price in points (USDZ minor units: 100 = 1.00). */
  shop: { 'golden hat': 150, 'speed boots': 400, 'lucky charm': 900 } as Record<string, number>,
  /** Points each new player gets on the emulator, to try the shop. */
  startingPoints: 1_000,
};
