/**
 * A match whose `players` have all paid their fees, made through a Lightning that no rate
 * limits (the set-up of the rate tests and of `npm run bench:rate`): the match, its fees paid at
 * the emulator and read back, so that another process sharing the ledger can settle it.
 */
import type { Emulator } from '../../src/emulator/index.js';
import type { Lightning } from '../../src/lightning.js';

export const FEE_MSAT = 20_000;

export interface PaidMatch {
  matchId: string;
  /** One equal share per player. */
  shares: Record<string, number>;
}

export async function openPaidMatch(
  lightning: Lightning,
  emulator: Emulator,
  players: number,
  name: string,
): Promise<PaidMatch> {
  const match = await lightning.matches.open({ entryFeeMsat: FEE_MSAT, description: name });
  const ids = Array.from({ length: players }, (_, i) => `${name}-p${i}`);
  const shares: Record<string, number> = {};
  // In batches: the emulator and the ledger, not the rate, are what the set-up waits on.
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(
      ids.slice(i, i + 50).map(async (playerId) => {
        const fee = await lightning.matches.enter({ matchId: match.id, playerId });
        emulator.control.payStaticCharge(fee.remoteId as string);
        const read = await lightning.books.refresh(fee.id);
        if (read?.status !== 'completed') throw new Error(`fee of ${playerId} is ${read?.status}`);
        shares[playerId] = 1;
      }),
    );
  }
  return { matchId: match.id, shares };
}
