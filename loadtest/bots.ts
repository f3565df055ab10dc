/**
 * The load test's players: real @colyseus/sdk clients. A table bot waits in the tables' queue
 * (joined through the matchmaker of one of the processes) until it is seated with three others
 * at a new `table` room (RedisDriver decides where it lives), enters
 * the room's match, pays its fee from the code on its own screen (the emulator's wallet, as the
 * dev wallet's "pay" does), and then waits for the end of its round: a payout code (it won),
 * a refund code (the round was called off), another winner named, or its fee closed; it claims
 * any code it gets and leaves. Some leave early (before or after paying: their table is
 * refunded); a bot whose round does not start within its patience leaves too. A tournament bot
 * joins the hall by its id, enters, pays, and waits for its payout code.
 *
 * Each bot says what happened to it and when (join, fee on screen, fee paid, settling heard,
 * code on screen): the figures come from these.
 *
 * Cost per bot: one screen (loadtest/screen.ts).
 */
import { resourceOf } from '../soak/players.js';
import type { Emulator } from '../src/emulator/index.js';
import { Gone, joinAny, joinQueued, type Screen, type Seen, Unseated } from './screen.js';

export type Outcome =
  | 'won'
  | 'lost'
  | 'refunded'
  | 'fee closed'
  | 'left early'
  | 'impatient'
  | 'refused'
  | 'dropped'
  | 'failed';

export interface BotStory {
  playerId: string;
  where: 'table' | 'hall';
  outcome: Outcome;
  /** ms (epoch) of each step reached. */
  joinStart: number;
  joinedAt?: number;
  /** `enter` sent, and its answer (a fee or a refusal) received. */
  enterSentAt?: number;
  enteredAt?: number;
  feeShownAt?: number;
  feePaidAt?: number;
  /** The room's broadcast just before its settle (its own clock: the same machine). */
  settlingAt?: number;
  /** The payout's or refund's code reached the screen. */
  codeShownAt?: number;
  /** The code was claimed at the emulator. */
  claimed?: boolean;
  error?: string;
}

export interface BotContext {
  emulator: Emulator;
  /** Give-up limits: a round that does not start, a step that does not come. */
  patienceMs: number;
  stepMs: number;
}

const ENDED = new Set(['completed', 'expired', 'failed']);

/** Sends `enter` and waits for the room's answer: the fee's id, or why it was refused. */
async function enter(
  screen: Screen,
  ms: number,
  story: BotStory,
): Promise<{ id?: string; error?: string }> {
  let answer: { id?: string; error?: string } | undefined;
  screen.room.onMessage('entered', (a: { id?: string; error?: string }) => {
    answer = a;
    story.enteredAt = Date.now();
    screen.poke();
  });
  story.enterSentAt = Date.now();
  story.enteredAt = undefined;
  screen.room.send('enter');
  return screen.until(() => answer, ms, 'answer to enter');
}

/** Pays the fee from the code on the screen, once shown; records when. */
async function payFee(screen: Screen, feeId: string, story: BotStory, ctx: BotContext) {
  const fee = await screen.until(
    () => screen.entries().find((e) => e.id === feeId && e.code !== ''),
    ctx.stepMs,
    'fee code on screen',
  );
  story.feeShownAt = Date.now();
  const paid = ctx.emulator.control.payStaticCharge(resourceOf(fee.code));
  if (paid.status !== 'OK') throw new Error(`paying ${feeId}: ${JSON.stringify(paid)}`);
  story.feePaidAt = Date.now();
}

/** Claims a payout or refund code at the emulator, as the player's wallet would. */
function claim(entry: Seen, story: BotStory, ctx: BotContext): void {
  story.codeShownAt ??= Date.now();
  story.claimed = ctx.emulator.control.claimWithdrawal(resourceOf(entry.code)).status === 'OK';
}

/** Listens for the room's `settling` broadcast (its time, and the winner for a table). */
function listenSettling(screen: Screen, story: BotStory): () => string | undefined {
  let winner: string | undefined;
  screen.room.onMessage('settling', (m: { at: number; winner?: string }) => {
    story.settlingAt = m.at;
    winner = m.winner;
    screen.poke();
  });
  return () => winner;
}

export interface TableBot {
  /** The processes' addresses; the bot starts with `first` and tries the next if one is down. */
  urls: () => readonly string[];
  first: number;
  /** The tables' queue: it forms each table and seats its players at once. */
  queueId: string;
  playerId: string;
  /** Leaves before the round starts: `unpaid` with its fee open, `paid` after paying. */
  leaves: 'no' | 'unpaid' | 'paid';
}

/** One table player's whole visit. Never throws: the story says how it ended. */
export async function playTable(bot: TableBot, ctx: BotContext): Promise<BotStory> {
  const story: BotStory = {
    playerId: bot.playerId,
    where: 'table',
    outcome: 'failed',
    joinStart: Date.now(),
  };
  let screen: Screen | undefined;
  try {
    // A table whose round was called off in the instant the bot took its seat refuses the
    // entry (LN_MATCH_CLOSED), and a table whose process died takes no seat: the player queues
    // again for another table.
    let entered: { id?: string; error?: string } = {};
    let winner: () => string | undefined = () => undefined;
    for (let attempt = 0; attempt < 3 && !entered.id; attempt++) {
      await screen?.leave();
      screen = undefined;
      try {
        screen = await joinQueued(
          bot.urls(),
          bot.first + attempt,
          bot.queueId,
          bot.playerId,
          ctx.patienceMs,
        );
      } catch (err) {
        if (err instanceof Unseated && attempt < 2) continue;
        // No table formed within its patience: it leaves, nothing charged.
        if (err instanceof Gone) {
          story.outcome = 'impatient';
          story.error = err.message;
          return story;
        }
        throw err;
      }
      story.joinedAt = Date.now();
      winner = listenSettling(screen, story);
      entered = await enter(screen, ctx.stepMs, story);
      if (entered.error !== 'LN_MATCH_CLOSED') break;
    }
    const s = screen as Screen;
    if (!entered.id) {
      story.outcome = 'refused';
      story.error = entered.error;
      return story;
    }
    const feeId = entered.id;
    if (bot.leaves === 'unpaid') {
      await s.until(() => s.entries().some((e) => e.id === feeId), ctx.stepMs, 'fee on screen');
      story.outcome = 'left early';
      return story;
    }
    await payFee(s, feeId, story, ctx);
    if (bot.leaves === 'paid') {
      story.outcome = 'left early';
      return story;
    }
    // The end of the round, as the screen and the room's broadcast show it.
    const mine = () => {
      const entries = s.entries();
      const code = entries.find((e) => e.kind === 'reward' && e.code !== '');
      if (code) return { code };
      const fee = entries.find((e) => e.id === feeId);
      if (fee && ENDED.has(fee.status) && fee.status !== 'completed') return { closed: true };
      const w = winner();
      if (w !== undefined && w !== bot.playerId) return { lost: true };
      return undefined;
    };
    let end: { code?: Seen; closed?: boolean; lost?: boolean };
    try {
      end = await s.until(mine, ctx.patienceMs, 'end of the round');
    } catch (err) {
      // The round never started (its table never filled): the player gives up and leaves.
      if (err instanceof Gone && !s.dropped && story.settlingAt === undefined) {
        story.outcome = 'impatient';
        return story;
      }
      throw err;
    }
    if (end.code) {
      claim(end.code, story, ctx);
      story.outcome = end.code.purpose === 'refund' ? 'refunded' : 'won';
    } else story.outcome = end.closed ? 'fee closed' : 'lost';
    return story;
  } catch (err) {
    story.outcome = screen?.dropped ? 'dropped' : 'failed';
    story.error = (err as Error).message;
    return story;
  } finally {
    await screen?.leave();
  }
}

/** A tournament entrant: joined, entered and paid; then waits for its payout. */
export class Entrant {
  readonly story: BotStory;
  readonly #screen: Screen;
  readonly #ctx: BotContext;
  #feeId = '';

  private constructor(screen: Screen, story: BotStory, ctx: BotContext) {
    this.#screen = screen;
    this.story = story;
    this.#ctx = ctx;
    listenSettling(screen, story);
  }

  static async join(
    urls: readonly string[],
    first: number,
    hallId: string,
    playerId: string,
    ctx: BotContext,
  ) {
    const story: BotStory = { playerId, where: 'hall', outcome: 'failed', joinStart: Date.now() };
    const screen = await joinAny(urls, first, hallId, playerId);
    story.joinedAt = Date.now();
    return new Entrant(screen, story, ctx);
  }

  /** Its payout's code, with the moment it reached the screen (watched from the payment on). */
  #code: Promise<Seen> | undefined;

  /** Enters and pays; resolves once its fee shows `completed` on its screen. */
  async enterAndPay(): Promise<void> {
    const s = this.#screen;
    const entered = await enter(s, this.#ctx.stepMs, this.story);
    if (!entered.id) throw new Error(`${this.story.playerId} refused: ${entered.error}`);
    this.#feeId = entered.id;
    await payFee(s, entered.id, this.story, this.#ctx);
    this.#code = s.until(
      () => s.entries().find((e) => e.kind === 'reward' && e.code !== ''),
      this.#ctx.patienceMs + this.#ctx.stepMs * 20,
      'payout code on screen',
    );
    this.#code.then(
      () => {
        this.story.codeShownAt = Date.now();
      },
      () => {},
    );
    await s.until(
      () => s.entries().some((e) => e.id === this.#feeId && e.status === 'completed'),
      this.#ctx.stepMs,
      'fee completed on screen',
    );
  }

  leave(): Promise<void> {
    return this.#screen.leave();
  }

  /**
   * Waits for its payout code (for at most `ms`, or until `lost` says its payout's create answer
   * was lost), claims it, leaves. Never throws.
   */
  async collect(ms: number, lost: Promise<void>): Promise<BotStory> {
    const s = this.#screen;
    try {
      if (!this.#code) throw new Error('never paid');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no payout code within ${ms} ms`)), ms);
        lost.then(() => reject(new Error('its payout waits for its deadline (answer lost)')));
      });
      const code = await Promise.race([this.#code, late]).finally(() => clearTimeout(timer));
      claim(code, this.story, this.#ctx);
      this.story.outcome = 'won';
    } catch (err) {
      this.story.outcome = s.dropped ? 'dropped' : 'failed';
      this.story.error = (err as Error).message;
    } finally {
      await s.leave();
    }
    return this.story;
  }
}
