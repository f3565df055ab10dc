/**
 * What the console reads, over the ledger's public reads alone. Intents and matches are found
 * by time through the journal (an intent is in a range when its money moved in it; a match
 * through its group's entries). Cost: one journal page of up to 1,000 entries per page read,
 * one `get` per intent the first time; an export keeps the ids it wrote, so each is written once.
 */
import type { Intent, IntentKind, IntentStatus } from '../ledger/intent.js';
import type { JournalEntry, JournalPage, JournalQuery } from '../ledger/journal.js';
import type { OperatorAction, OperatorLogPage, OperatorLogQuery } from '../ledger/operator-log.js';
import type { LedgerView } from '../ledger/store.js';
import type { Alert } from '../server/alert-kinds.js';
import type { Balances } from '../server/balances.js';
import type { PayoutPause, SettledStatus } from '../server/events.js';
import { isClaimCode } from '../server/kinds/index.js';
import type { MatchView } from '../server/match/view.js';
import type { Refusal, RefusalCount } from '../server/refusals.js';

/** A page of players' tabs, largest first (`lightning.books.tabs`). */
export interface TabsPage {
  tabs: { playerId: string; balanceMsat: string }[];
  next: string | null;
}

/** The operator's calls the console makes (`lightning.operator`). */
export interface ConsoleOperator {
  unknowns(limit?: number): Promise<Intent[]>;
  held(limit?: number): Promise<Intent[]>;
  readonly paused: PayoutPause | null;
  alerts(): Alert[];
  resolve(id: string, status: SettledStatus, note: string, by: string): Promise<Intent>;
  pause(by: string, why: string): Promise<OperatorAction>;
  resume(by: string): Promise<OperatorAction>;
  reissue(id: string, by: string): Promise<Intent>;
  approve(id: string, by: string): Promise<Intent>;
  reject(id: string, by: string, why: string): Promise<Intent>;
  block(playerId: string, by: string, why: string): Promise<OperatorAction>;
  unblock(playerId: string, by: string): Promise<OperatorAction>;
  log(query: OperatorLogQuery): Promise<OperatorLogPage>;
  refusals(limit?: number): Promise<{ recent: Refusal[]; counts: RefusalCount[] }>;
}

/** The books' reads the console makes (`lightning.books`). */
export interface ConsoleBooks {
  balances(): Promise<Balances>;
  journal(query: JournalQuery): Promise<JournalPage>;
  tabs(query: { after?: string; limit?: number }): Promise<TabsPage>;
  /** Available once `ready()` has resolved. */
  readonly ledger: Pick<LedgerView, 'get'>;
}

/** The groups of the public face the console calls (it never sees the engine or a store). */
export interface ConsoleHost {
  /** Resolves once the server runs. */
  ready(): Promise<void>;
  readonly operator: ConsoleOperator;
  readonly books: ConsoleBooks;
  readonly matches: { get(matchId: string): Promise<MatchView> };
}

/** An intent as the ledger holds it now, the server started first if need be. */
export async function intentOf(host: ConsoleHost, id: string): Promise<Intent | null> {
  await host.ready();
  return host.books.ledger.get(id);
}

/** PostgreSQL's journal order is the order writes began: past `until`, read on this long. */
const UNTIL_SLACK_MS = 60_000;

export interface IntentFilter {
  /** epoch ms, inclusive */
  since?: number | undefined;
  /** epoch ms, inclusive */
  until?: number | undefined;
  playerId?: string | undefined;
  roomId?: string | undefined;
  matchId?: string | undefined;
  kind?: IntentKind | undefined;
  status?: IntentStatus | undefined;
}

/** The journal page of a filter's player, match and start, from `after`. */
export function journalQuery(filter: IntentFilter, after?: string | undefined): JournalQuery {
  return {
    ...(filter.playerId ? { playerId: filter.playerId } : {}),
    ...(filter.matchId ? { matchId: filter.matchId } : {}),
    ...(filter.since !== undefined ? { since: filter.since } : {}),
    ...(after ? { after } : {}),
    limit: 1000,
  };
}

/** Journal entries in a range, oldest first, page by page. */
export async function* entriesIn(
  host: ConsoleHost,
  filter: IntentFilter,
): AsyncGenerator<JournalEntry> {
  let after: string | undefined;
  for (;;) {
    const page = await host.books.journal(journalQuery(filter, after));
    for (const entry of page.entries) {
      if (filter.until !== undefined && entry.at > filter.until) {
        if (entry.at > filter.until + UNTIL_SLACK_MS) return;
        continue;
      }
      yield entry;
    }
    if (!page.next) return;
    after = page.next;
  }
}

/** Every operator log line the query names, oldest first, page by page from its `after`. */
export async function* operatorLinesIn(
  host: ConsoleHost,
  query: Omit<OperatorLogQuery, 'limit'>,
): AsyncGenerator<OperatorAction> {
  let after = query.after;
  for (;;) {
    const page = await host.operator.log({ ...query, ...(after ? { after } : {}), limit: 1000 });
    yield* page.actions;
    if (!page.next) return;
    after = page.next;
  }
}

/** The intents of these entries that pass the filter, each once. */
export async function* intentsOf(
  host: ConsoleHost,
  entries: Iterable<JournalEntry> | AsyncIterable<JournalEntry>,
  filter: IntentFilter,
): AsyncGenerator<Intent> {
  const seen = new Set<string>();
  for await (const entry of entries) {
    if (seen.has(entry.intentId)) continue;
    seen.add(entry.intentId);
    const intent = await intentOf(host, entry.intentId);
    if (intent && passes(intent, filter)) yield intent;
  }
}

/** Every intent whose money moved in the range and that passes the filter, each once. */
export const intentsIn = (host: ConsoleHost, filter: IntentFilter) =>
  intentsOf(host, entriesIn(host, filter), filter);

function passes(intent: Intent, filter: IntentFilter): boolean {
  return (
    (filter.roomId === undefined || intent.roomId === filter.roomId) &&
    (filter.kind === undefined || intent.kind === filter.kind) &&
    (filter.status === undefined || intent.status === filter.status) &&
    (filter.playerId === undefined || intent.playerId === filter.playerId) &&
    (filter.matchId === undefined || intent.groupId === filter.matchId)
  );
}

/** What the console shows of an intent: never its callback token, claim code, key or lease. */
export function shownIntent(i: Intent) {
  return {
    id: i.id,
    kind: i.kind,
    status: i.status,
    playerId: i.playerId,
    roomId: i.roomId,
    matchId: i.groupId,
    amount: i.amount,
    unit: i.unit,
    description: i.description,
    remoteId: i.remoteId,
    expiresAt: i.expiresAt,
    createdAt: i.createdAt,
    updatedAt: i.updatedAt,
    nextCheckAt: i.nextCheckAt,
    checks: i.checks,
    error: i.error,
    history: i.history,
    /** A claim code a player holds (its kind's rule): the one an operator may reissue. */
    claimCode: isClaimCode(i),
  };
}
