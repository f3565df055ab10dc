/**
 * `lightning.books`: what the game's money adds up to and where each msat went (the journal,
 * docs/OPERATING.md). Nothing here moves money but `refresh`, which works as a callback does.
 */
import { z } from 'zod';
import type { Intent } from '../ledger/intent.js';
import {
  accounts,
  isAccountsCursor,
  type JournalPage,
  type JournalQuery,
} from '../ledger/journal.js';
import type { LedgerView } from '../ledger/store.js';
import { parseInput } from '../parse.js';
import type { AuditReport } from '../server/audit.js';
import type { Balances } from '../server/balances.js';
import { isClaimCode } from '../server/kinds/index.js';
import { pageFields } from '../server/operations/inputs.js';
import { intentIdInput } from '../server/operator.js';
import { type EntryPurpose, purposeOf } from '../server/purpose.js';
import type { Runtime } from '../server/runtime.js';
import { need, type Reach } from './reach.js';

type BookParts = Pick<Runtime, 'engine' | 'checks' | 'auditor' | 'audit' | 'view'>;

/** A player's tab: what the game owes them in credits not yet withdrawn (docs/MATCHES.md). */
export interface TabBalance {
  playerId: string;
  /** msats, a decimal string; below zero only if the ledger lost its rule (the audit says). */
  balanceMsat: string;
}

export interface TabsPage {
  /** Largest first; tabs at zero are left out. */
  tabs: TabBalance[];
  /** Pass as `after` for the next page; null when this page is the last. */
  next: string | null;
}

/** A page of tabs: `after` is the `next` of an earlier page, `limit` 1 to 1,000 (100). */
export const tabsQuery = z
  .strictObject({
    after: z
      .string()
      .max(300)
      .refine(isAccountsCursor, 'must be the `next` of an earlier page')
      .optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .default({});

/** A claim code waiting for its player (a reward, a match's payout or refund). */
export interface Claim {
  intentId: string;
  amountMsat: string;
  description: string;
  /** The LNURL to show as a QR code; a bearer secret: show it to its player only. */
  code: string;
  uri: string | null;
  /** epoch ms */
  expiresAt: number | null;
  roomId: string | null;
  /** The match it pays out of, if any. */
  matchId: string | null;
  /** `payout` (a match's winnings), `refund` (a match's fee back) or `reward`, as in the room. */
  purpose: EntryPurpose;
}

const claimsInput = z.string().min(1, 'must not be empty').max(255);

const journalQuery = z
  .strictObject({
    playerId: z.string().min(1).max(255).optional(),
    matchId: z.string().min(1).max(255).optional(),
    intentId: z.string().min(1).max(255).optional(),
    ...pageFields,
  })
  .default({});

export class LightningBooks {
  readonly #reach: Reach<BookParts>;

  /** Made by `createLightning`. */
  constructor(reach: Reach<BookParts>) {
    this.#reach = reach;
  }

  /** What the game's money adds up to (escrow, owed, in flight, house, cover), in msat strings. */
  async balances(): Promise<Balances> {
    return (await this.#reach.start()).auditor.balances();
  }

  /** The journal's entries, oldest first, a page at a time (pass `next` as `after`). */
  async journal(query?: JournalQuery): Promise<JournalPage> {
    const parsed = parseInput(journalQuery, query, 'query');
    return (await this.#reach.start()).engine.ledger.journal(parsed as JournalQuery);
  }

  /** Players' tabs, largest first, a page at a time (pass `next` as `after`). */
  async tabs(query?: z.input<typeof tabsQuery>): Promise<TabsPage> {
    const { after, limit } = parseInput(tabsQuery, query, 'query');
    const { ledger } = (await this.#reach.start()).engine;
    const page = await ledger.accounts({
      class: 'tab',
      ...(after === undefined ? {} : { after }),
      ...(limit === undefined ? {} : { limit }),
    });
    const tabs = page.accounts.map((a) => ({
      playerId: a.account.slice(TAB.length),
      balanceMsat: a.balance,
    }));
    return { tabs, next: page.next };
  }

  /** Runs the live audit now; new findings are also logged and emitted (`audit`). */
  async audit(): Promise<AuditReport> {
    return (await this.#reach.start()).audit();
  }

  /** The claim codes waiting for a player, for a lobby where they are signed in (their secret). */
  async claims(playerId: string): Promise<Claim[]> {
    const id = parseInput(claimsInput, playerId, 'playerId');
    const open = await (await this.#reach.start()).engine.ledger.openByPlayer(id);
    return open
      .flatMap((i) =>
        isClaimCode(i) && i.status === 'pending' && i.code !== null ? [{ ...i, code: i.code }] : [],
      )
      .map((i) => ({
        intentId: i.id,
        amountMsat: i.amount,
        description: i.description,
        code: i.code,
        uri: i.uri,
        expiresAt: i.expiresAt,
        roomId: i.roomId,
        matchId: i.groupId,
        purpose: purposeOf(i),
      }));
  }

  /** Re-checks an intent now (a player pressed "I paid"), through the same path as callbacks. */
  async refresh(id: string): Promise<Intent | null> {
    const { engine, checks } = await this.#reach.start();
    const intent = await engine.ledger.get(parseInput(intentIdInput, id, 'id'));
    return intent ? checks.check(intent) : null;
  }

  /** The ledger's reads, once `ready()` resolved; every write goes through the engine. */
  get ledger(): LedgerView {
    return need(this.#reach, 'books.ledger').view;
  }
}

/** `tab:`: a tab's account is this and its player. */
const TAB = accounts.tab('');
