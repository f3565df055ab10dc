/**
 * Runs the bots: table players through a pool (at most `concurrency` visits at once, so that a
 * 2-core machine is not asked to open thousands of sockets in one instant), the tournament's
 * entrants beside them. Calls `onHalfway` once half of the table players are done (the runner
 * kills a process then).
 */
import type { BotContext, BotStory, TableBot } from './bots.js';
import { Entrant, playTable } from './bots.js';

/** Runs `work` over `items`, `concurrency` at a time; results in the items' order. */
export async function pool<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T, at);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

export async function playTables(
  bots: readonly TableBot[],
  concurrency: number,
  ctx: BotContext,
  onHalfway: () => void,
): Promise<BotStory[]> {
  let done = 0;
  return pool(bots, concurrency, async (bot) => {
    const story = await playTable(bot, ctx);
    if (++done === Math.ceil(bots.length / 2)) onHalfway();
    return story;
  });
}

export interface Tournament {
  entrants: BotStory[];
  /** What the hall's settle answered. */
  settle: { at: number; payouts: number; ms: number } | null;
  error?: string;
}

/**
 * The tournament: every entrant joins the hall (through any process's matchmaker), enters and
 * pays; once each has paid (or failed to), `settle` is asked; then each waits for its code, or
 * until `lost` (polled each second) names it: a player whose payout's create answer was lost
 * (the SIGKILL) gets no code before its deadline, so waiting longer shows nothing.
 */
export async function playTournament(
  urls: () => readonly string[],
  hallId: string,
  winners: number,
  ctx: BotContext,
  settle: () => Promise<{ at: number; payouts: number; ms: number }>,
  collectMs: number,
  lost: () => Promise<ReadonlySet<string>>,
): Promise<Tournament> {
  const ids = Array.from({ length: winners }, (_, i) => `t${i}`);
  const paid: Entrant[] = [];
  const failed: BotStory[] = [];
  await pool(ids, 100, async (playerId, i) => {
    let entrant: Entrant | undefined;
    try {
      entrant = await Entrant.join(urls(), i, hallId, playerId, ctx);
      await entrant.enterAndPay();
      paid.push(entrant);
    } catch (err) {
      const story = entrant?.story ?? { playerId, where: 'hall', joinStart: Date.now() };
      failed.push({ ...story, outcome: 'failed', error: (err as Error).message });
      await entrant?.leave();
    }
  });
  let answer: Tournament['settle'] = null;
  let error: string | undefined;
  try {
    answer = await settle();
  } catch (err) {
    error = (err as Error).message;
  }
  const given = new Map<string, () => void>();
  const collecting = Promise.all(
    paid.map((e) =>
      e.collect(
        answer ? collectMs : 1,
        new Promise<void>((resolve) => given.set(e.story.playerId, resolve)),
      ),
    ),
  );
  let done = false;
  const watch = (async () => {
    while (!done) {
      await new Promise((r) => setTimeout(r, 1_000));
      for (const playerId of done ? [] : await lost()) given.get(playerId)?.();
    }
  })();
  const collected = await collecting.finally(() => {
    done = true;
  });
  await watch;
  return { entrants: [...collected, ...failed], settle: answer, ...(error ? { error } : {}) };
}
