/**
 * Benchmark 11, players' tabs (issue 34): how many requests the payments service gets per
 * 1,000 sats paid to 100 players, when each small payment is its own claim code (`reward`)
 * and when the payments are credits to each player's tab, withdrawn once (`tabs.credit`,
 * `tabs.withdraw`). Each player earns `EARNINGS` payments of `SATS` sats and claims every
 * code it is given, through the emulator's control (a wallet's claim is not the game's
 * request). Both subjects run side by side in one run: one game server and one emulator each,
 * the players interleaved (player i paid both ways before player i + 1). Counted: every
 * request to the service's API (`/v0/...`) each emulator received, once every code is claimed
 * and every claim's callback re-read (the reconciler off: only what the payments themselves
 * cost). Goal: at least 10 times fewer with tabs.
 */
import { Room } from '@colyseus/core';
import type { Emulator } from '../src/emulator/index.js';
import type { Intent } from '../src/ledger/intent.js';
import { eventually } from '../test/support/eventually.js';
import { type Game, startGame } from '../test/support/game.js';
import { int, type Row, ratio } from './support/table.js';

const PLAYERS = 100;
/** Payments per player, and their size: a kill's worth, as the example game pays. */
const EARNINGS = 20;
const SATS = 10;
const GOAL = 10;

class EmptyRoom extends Room {}

/** The service's API requests an emulator received (its LNURL and control routes aside). */
function apiRequests(emulator: Emulator): number {
  return emulator.control.count('*', /^\/v0\//);
}

export async function benchTabs(): Promise<Row[]> {
  const games: Game[] = [];
  try {
    const perReward = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
    games.push(perReward);
    const withTabs = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
    games.push(withTabs);
    const completed = new Map<Game, number>([
      [perReward, 0],
      [withTabs, 0],
    ]);
    for (const game of games) {
      game.lightning.on('settled', (intent: Intent) => {
        if (intent.status === 'completed') completed.set(game, (completed.get(game) ?? 0) + 1);
      });
    }
    const claim = (game: Game, intent: Intent) =>
      game.emulator.control.claimWithdrawal(intent.remoteId as string);
    const started = performance.now();
    for (let p = 0; p < PLAYERS; p++) {
      const playerId = `player-${p}`;
      for (let e = 0; e < EARNINGS; e++) {
        const reward = await perReward.lightning.reward({
          playerId,
          amountMsat: SATS * 1000,
          description: 'kill',
        });
        claim(perReward, reward);
        await withTabs.lightning.tabs.credit({
          playerId,
          amountMsat: SATS * 1000,
          description: 'kill',
          key: `kill-${e}`,
        });
      }
      const withdrawal = await withTabs.lightning.tabs.withdraw({
        playerId,
        amountMsat: EARNINGS * SATS * 1000,
        description: 'cash out',
      });
      claim(withTabs, withdrawal);
    }
    // Every claim's callback re-read and applied: the last requests either way.
    await eventually(() => completed.get(perReward) === PLAYERS * EARNINGS, 60_000, 'rewards');
    await eventually(() => completed.get(withTabs) === PLAYERS, 60_000, 'withdrawals');
    const seconds = (performance.now() - started) / 1000;
    const paidSats = PLAYERS * EARNINGS * SATS;
    const per1000 = (game: Game) => (apiRequests(game.emulator) * 1000) / paidSats;
    const rewards = per1000(perReward);
    const tabs = per1000(withTabs);
    const subject = `${int(paidSats)} sats to ${PLAYERS} players, ${EARNINGS} x ${SATS} sats each`;
    return [
      {
        bench: '11 tabs',
        subject: `${subject}, one claim code per payment (limit)`,
        value: `${rewards.toFixed(1)} requests per 1,000 sats`,
        detail: `${int(apiRequests(perReward.emulator))} service requests, ${int(PLAYERS * EARNINGS)} codes`,
      },
      {
        bench: '11 tabs',
        subject: `${subject}, credited to tabs, one withdrawal each`,
        value: `${tabs.toFixed(1)} requests per 1,000 sats`,
        limit: `${rewards.toFixed(1)}, a code each`,
        ratio: ratio(rewards / tabs),
        goal: { text: `>= ${GOAL}x fewer`, met: rewards / tabs >= GOAL },
        detail: `${int(apiRequests(withTabs.emulator))} service requests, ${PLAYERS} codes; ${seconds.toFixed(1)} s for both`,
      },
    ];
  } finally {
    for (const game of games.reverse()) await game.stop();
  }
}
