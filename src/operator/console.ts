/**
 * The operator's console: one page and the JSON and CSV routes behind it, whatever carries
 * them (the router, operator/endpoints.ts; a `node:http` listener, operator/listener.ts).
 *
 *   GET  {path}                         the page (operator/page.ts: inline, no CDN, no build)
 *   GET  {path}/api/overview            balances, paused payouts, alerts, unknowns, held payouts
 *   GET  {path}/api/intents?player=&room=&match=&kind=&status=&since=&until=&after=
 *   GET  {path}/api/intents/:id         an intent, its history and its journal entries
 *   GET  {path}/api/matches?since=&until=&after=   matches with pot, players, payouts, refunds
 *   GET  {path}/api/matches/:id         a match and its journal entries
 *   GET  {path}/api/oplog?since=&intentId=&playerId=&after=&limit=   the operator log, a page
 *   GET  {path}/api/tabs?after=&limit=  players' tabs, largest first, a page
 *   GET  {path}/api/refusals?limit=     the tab calls this process refused lately, and counts
 *   POST {path}/api/actions/:name       an action of ACTIONS (JSON in, JSON out)
 *   GET  {path}/export/journal.csv?since=&until=   streamed, row by row
 *   GET  {path}/export/intents.csv?since=&until=&player=&...
 *   GET  {path}/export/oplog.csv?since=&intentId=&playerId=
 *
 * A request another origin sent with the operator's cookie is refused first (empty 403,
 * `foreign`); then `authorize(request)` decides (an empty 401 unless it says yes). An action
 * also needs the header `x-lightning-console: action` (another origin cannot send it without a
 * preflight nothing answers) and a same-origin request: a cookie alone never acts. A refusal by
 * the ledger's state answers 409, a bad input 400; either way nothing changed.
 */
import { z } from 'zod';
import {
  ConfigurationError,
  LightningError,
  OperatorRefusedError,
  PlayerBlockedError,
} from '../errors.js';
import { INTENT_KINDS, INTENT_STATUSES, type Intent } from '../ledger/intent.js';
import type { JournalEntry } from '../ledger/journal.js';
import type { OperatorAction } from '../ledger/operator-log.js';
import { parseInput } from '../parse.js';
import type { HeaderReader } from '../server/client-address.js';
import type { LightningLogger } from '../server/logger.js';
import { ACTIONS, type Action, type ActionName } from './actions.js';
import { csvRows } from './csv.js';
import { consolePage } from './page.js';
import {
  type ConsoleHost,
  entriesIn,
  type IntentFilter,
  intentOf,
  intentsIn,
  intentsOf,
  journalQuery,
  operatorLinesIn,
  shownIntent,
} from './reads.js';

/** Who the game says the operator is: a name, or true for one it does not name. */
export type ConsoleAuthorization = string | boolean | null | undefined;

const optionsSchema = z.strictObject({
  /**
   * The game's own check of an operator, on the request as a WHATWG `Request` (no body): a
   * string is the operator's name, `true` an unnamed operator; anything else, or a throw, is
   * an empty 401. Required.
   */
  authorize: z.custom<(request: Request) => ConsoleAuthorization | Promise<ConsoleAuthorization>>(
    (v) => typeof v === 'function',
    { message: "is required: the game's own check of an operator, e.g. its admin JWT" },
  ),
  /**
   * A player's name for the page, from the game's own records (the id stays beside it, on
   * hover): a person reads "Alice", not a UUID. Called per row shown; undefined when unknown.
   */
  playerName: z
    .custom<(playerId: string) => string | undefined>((v) => typeof v === 'function')
    .optional(),
  /** Where the page lives (default `<prefix>/console`, `/lightning/console`). */
  path: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'must be a path such as /admin/lightning (no trailing /)')
    .optional(),
});

export type ConsoleOptions = z.input<typeof optionsSchema>;

interface Defaults {
  prefix: string;
  logger: LightningLogger;
  maxBodyBytes: number;
}
export type ConsoleSettings = Omit<Defaults, 'prefix'> & Required<ConsoleOptions>;

/** The options, checked: a missing `authorize` is a ConfigurationError, not an open page. */
export function consoleSettings(options: unknown, defaults: Defaults): ConsoleSettings {
  const o = parseInput(optionsSchema, options ?? {}, 'console', ConfigurationError);
  const { logger, maxBodyBytes } = defaults;
  return {
    authorize: o.authorize,
    playerName: o.playerName ?? (() => undefined),
    path: o.path ?? `${defaults.prefix}/console`,
    logger,
    maxBodyBytes,
  };
}

/** A request as the console needs it, from either transport. */
export interface ConsoleRequest {
  method: string;
  /** The path below the console's own (`''` for the page, `/api/overview`). */
  sub: string;
  query: URLSearchParams;
  headers: HeaderReader;
  /** What `authorize` is given. */
  request(): Request;
  body(maxBytes: number): Promise<Buffer>;
  /** Whether the transport can stream an answer (the router cannot: see endpoints.ts). */
  streams: boolean;
}

export interface ConsoleAnswer {
  status: number;
  headers: Record<string, string>;
  /** A whole answer, or rows to write one at a time. */
  body: string | AsyncIterable<string> | null;
}

const NO_STORE = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
const refused = (): ConsoleAnswer => ({ status: 401, headers: { ...NO_STORE }, body: null });
const json = (status: number, value: unknown): ConsoleAnswer => ({
  status,
  headers: { ...NO_STORE, 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(value),
});

/** The header every action carries; a page of another origin cannot send it unasked. */
const ACTION_HEADER = 'x-lightning-console';

const time = z
  .string()
  .regex(
    /^[0-9]{1,15}$|^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9:]+)?)?$/,
    'epoch ms or ISO 8601',
  )
  .transform((s, ctx) => {
    const ms = /^[0-9]+$/.test(s) ? Number(s) : Date.parse(s);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'is not a time' });
      return z.NEVER;
    }
    return ms;
  });
const id = z.string().min(1).max(255);
const seq = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,15})$/)
  .optional();
const filterSchema = z.strictObject({
  player: id.optional(),
  room: id.optional(),
  match: id.optional(),
  kind: z.enum(INTENT_KINDS).optional(),
  status: z.enum(INTENT_STATUSES).optional(),
  since: time.optional(),
  until: time.optional(),
  after: seq,
});

/** A page's size in a query: 1 to 1,000. */
const pageLimit = z
  .string()
  .regex(/^[1-9][0-9]{0,3}$/, 'must be 1 to 1000')
  .transform(Number)
  .pipe(z.number().max(1000, 'must be 1 to 1000'))
  .optional();

/** The operator log's filters, as `lightning.operator.log` names them. */
const oplogFilterSchema = z.strictObject({
  since: time.optional(),
  intentId: id.optional(),
  playerId: id.optional(),
});
const oplogSchema = oplogFilterSchema.extend({
  after: seq,
  limit: pageLimit,
});

/** A page of tabs: the `next` of an earlier page, and 1 to 1,000 of them (100). */
const tabsSchema = z.strictObject({
  after: z.string().min(1).max(300).optional(),
  limit: pageLimit,
});
const refusalsSchema = z.strictObject({ limit: pageLimit });

/** A parsed query without its absent keys (the log's query is exact about optional ones). */
function present<T extends Record<string, unknown>>(q: T) {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

type PageFilter = IntentFilter & { after?: string | undefined };

function filterOf(query: URLSearchParams): PageFilter {
  const q = parseInput(filterSchema, Object.fromEntries(query), 'query');
  const { player, room, match, ...rest } = q;
  return { playerId: player, roomId: room, matchId: match, ...rest };
}

/** Answers one console request; never a stack trace, never a byte before `authorize` says yes. */
export async function answerConsole(
  host: ConsoleHost,
  settings: ConsoleSettings,
  req: ConsoleRequest,
): Promise<ConsoleAnswer> {
  // Before `authorize`: a page of another origin learns nothing, not even who is signed in.
  if (foreign(req)) return { status: 403, headers: { ...NO_STORE }, body: null };
  let by: string;
  try {
    const who = await settings.authorize(req.request());
    if (who !== true && (typeof who !== 'string' || who.length === 0)) return refused();
    by = who === true ? 'operator' : who;
  } catch (err) {
    settings.logger.warn(`console: authorize threw, refused: ${(err as Error).message}`);
    return refused();
  }
  try {
    return await route(host, settings, req, by);
  } catch (err) {
    // Refused by what the ledger holds now (not by the input): a conflict, nothing changed.
    if (err instanceof OperatorRefusedError || err instanceof PlayerBlockedError) {
      return json(409, { error: err.message, code: err.code });
    }
    if (err instanceof LightningError) {
      return json(400, { error: err.message, code: err.code });
    }
    settings.logger.error(`console: ${req.method} ${req.sub} failed: ${(err as Error).message}`);
    return json(500, { error: 'the console could not answer; see the server log' });
  }
}

async function route(
  host: ConsoleHost,
  settings: ConsoleSettings,
  req: ConsoleRequest,
  by: string,
): Promise<ConsoleAnswer> {
  const { sub, method } = req;
  if (method === 'POST') {
    const action = /^\/api\/actions\/([a-z-]+)$/.exec(sub)?.[1];
    if (action === undefined) return json(405, { error: 'not an action' });
    return act(host, settings, req, action, by);
  }
  if (method !== 'GET' && method !== 'HEAD') return json(405, { error: 'GET or POST only' });
  if (sub === '' || sub === '/') return consolePage();
  const ok = (value: unknown) => json(200, withNames(value, settings.playerName));
  if (sub === '/api/overview') return ok(await overview(host, req.streams));
  if (sub === '/api/intents') return ok(await intentPage(host, filterOf(req.query)));
  if (sub === '/api/matches') return ok(await matchPage(host, filterOf(req.query)));
  if (sub === '/api/oplog') {
    const q = parseInput(oplogSchema, Object.fromEntries(req.query), 'query');
    return ok(await host.operator.log(present(q)));
  }
  if (sub === '/api/tabs') {
    const q = parseInput(tabsSchema, Object.fromEntries(req.query), 'query');
    return ok(await host.books.tabs(present(q)));
  }
  if (sub === '/api/refusals') {
    const q = parseInput(refusalsSchema, Object.fromEntries(req.query), 'query');
    await host.ready();
    return ok(await host.operator.refusals(q.limit));
  }
  const one = /^\/api\/(intents|matches)\/([^/]{1,255})$/.exec(sub);
  if (one) {
    const which = decoded(one[2] as string);
    if (which === null) return json(400, { error: 'the id is not percent-encoded UTF-8' });
    return one[1] === 'intents' ? intentDetail(host, which, ok) : matchDetail(host, which, ok);
  }
  const file = /^\/export\/(journal|intents|oplog)\.csv$/.exec(sub)?.[1];
  if (file) return exportCsv(host, req, file as CsvFile);
  return json(404, { error: 'no such console route' });
}

async function overview(host: ConsoleHost, exports: boolean) {
  const [balances, unknowns, held] = await Promise.all([
    host.books.balances(),
    host.operator.unknowns(100),
    host.operator.held(100),
  ]);
  return {
    balances,
    paused: host.operator.paused,
    alerts: host.operator.alerts().filter((a) => a.state === 'raised'),
    unknowns: unknowns.map(shownIntent),
    held: held.map(shownIntent),
    actions: Object.keys(ACTIONS),
    exports,
  };
}

/** One journal page's worth of intents (each once), and the cursor of the next page. */
async function intentPage(host: ConsoleHost, filter: PageFilter) {
  const page = await host.books.journal(journalQuery(filter, filter.after));
  const intents: ReturnType<typeof shownIntent>[] = [];
  for await (const intent of intentsOf(host, inRange(page.entries, filter), filter)) {
    intents.push(shownIntent(intent));
  }
  return { intents, next: page.next };
}

async function matchPage(host: ConsoleHost, filter: PageFilter) {
  const page = await host.books.journal(journalQuery(filter, filter.after));
  const ids = new Set(inRange(page.entries, filter).flatMap((e) => e.matchId ?? []));
  return { matches: await Promise.all([...ids].map((m) => host.matches.get(m))), next: page.next };
}

const inRange = (entries: JournalEntry[], { until }: IntentFilter) =>
  until === undefined ? entries : entries.filter((e) => e.at <= until);

type Ok = (value: unknown) => ConsoleAnswer;

async function intentDetail(host: ConsoleHost, which: string, ok: Ok): Promise<ConsoleAnswer> {
  const intent = await intentOf(host, parseInput(id, which, 'id'));
  if (!intent) return json(404, { error: 'no such intent' });
  const { entries } = await host.books.journal({ intentId: intent.id, limit: 1000 });
  return ok({ intent: shownIntent(intent), entries });
}

async function matchDetail(host: ConsoleHost, which: string, ok: Ok): Promise<ConsoleAnswer> {
  const match = await host.matches.get(parseInput(id, which, 'id'));
  const { entries } = await host.books.journal({ matchId: match.id, limit: 1000 });
  return ok({ match, entries });
}

/**
 * A read's rows with `playerName` beside each `playerId` the game names (the `playerName`
 * option); plain objects and arrays only, so nothing else a read holds changes shape.
 */
function withNames(value: unknown, nameOf: (playerId: string) => string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => withNames(v, nameOf));
  if (typeof value !== 'object' || value === null) return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = withNames(v, nameOf);
  const id = (value as { playerId?: unknown }).playerId;
  if (typeof id === 'string' && id !== '') {
    let name: unknown;
    try {
      name = nameOf(id);
    } catch {
      name = undefined; // a name is a courtesy: the id is still there
    }
    if (typeof name === 'string' && name !== '') out.playerName = name.slice(0, 100);
  }
  return out;
}

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Whether an `Origin` header names another origin than this host (`null` is no origin of ours). */
function otherOrigin(req: ConsoleRequest): boolean {
  const origin = req.headers.get('origin');
  if (origin === null) return false;
  try {
    return new URL(origin).host !== req.headers.get('host');
  } catch {
    return true;
  }
}

/**
 * A request a page of another origin made with the operator's cookie: refused unless the
 * browser says it came from this origin or the operator (Colyseus's router reflects any Origin
 * with credentials, so CORS does not protect a read). A navigation to the page may come from
 * anywhere (it cannot be read or framed); a request with neither header is `authorize`'s to judge.
 */
function foreign(req: ConsoleRequest): boolean {
  const page = req.sub === '' || req.sub === '/';
  if (page && req.method === 'GET' && req.headers.get('sec-fetch-mode') === 'navigate') {
    return false;
  }
  const site = req.headers.get('sec-fetch-site');
  return (site !== null && site !== 'same-origin' && site !== 'none') || otherOrigin(req);
}

/** A POST that is not same-origin, or lacks the console's header, changes nothing. */
function crossSite(req: ConsoleRequest): string | null {
  if (req.headers.get(ACTION_HEADER) !== 'action') return `the ${ACTION_HEADER} header is missing`;
  const site = req.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin') return `a ${site} request`;
  if (otherOrigin(req)) return 'a request from another origin';
  return null;
}

async function act(
  host: ConsoleHost,
  settings: ConsoleSettings,
  req: ConsoleRequest,
  name: string,
  by: string,
): Promise<ConsoleAnswer> {
  const refusal = crossSite(req);
  if (refusal) return json(403, { error: `refused: ${refusal}` });
  if (!Object.hasOwn(ACTIONS, name)) return json(404, { error: 'no such action' });
  if (!(req.headers.get('content-type') ?? '').startsWith('application/json')) {
    return json(415, { error: 'send JSON' });
  }
  let body: unknown;
  try {
    const raw = await req.body(settings.maxBodyBytes);
    body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    return json(400, { error: 'the body is not JSON, or too large' });
  }
  const action: Action = ACTIONS[name as ActionName];
  const { result, did } = await action.run(host, body, by);
  settings.logger.info(`console: ${by} ${name} ${did}`);
  return json(200, { ok: true, result });
}

const INTENT_COLUMNS = [
  { name: 'id', of: (i: Intent) => i.id },
  { name: 'kind', of: (i: Intent) => i.kind },
  { name: 'status', of: (i: Intent) => i.status },
  { name: 'player', of: (i: Intent) => i.playerId },
  { name: 'room', of: (i: Intent) => i.roomId },
  { name: 'match', of: (i: Intent) => i.groupId },
  { name: 'amount', of: (i: Intent) => i.amount },
  { name: 'unit', of: (i: Intent) => i.unit },
  { name: 'description', of: (i: Intent) => i.description },
  { name: 'remote_id', of: (i: Intent) => i.remoteId },
  { name: 'created_at', of: (i: Intent) => new Date(i.createdAt).toISOString() },
  { name: 'updated_at', of: (i: Intent) => new Date(i.updatedAt).toISOString() },
  { name: 'error', of: (i: Intent) => i.error },
] as const;

const ENTRY_COLUMNS = [
  { name: 'seq', of: (e: JournalEntry) => e.seq },
  { name: 'id', of: (e: JournalEntry) => e.id },
  { name: 'at', of: (e: JournalEntry) => new Date(e.at).toISOString() },
  { name: 'intent', of: (e: JournalEntry) => e.intentId },
  { name: 'player', of: (e: JournalEntry) => e.playerId },
  { name: 'match', of: (e: JournalEntry) => e.matchId },
  { name: 'debit', of: (e: JournalEntry) => e.debit },
  { name: 'credit', of: (e: JournalEntry) => e.credit },
  { name: 'amount', of: (e: JournalEntry) => e.amount },
  { name: 'unit', of: (e: JournalEntry) => e.unit },
  { name: 'step', of: (e: JournalEntry) => e.tag },
  { name: 'why', of: (e: JournalEntry) => e.why },
] as const;

const OPLOG_COLUMNS = [
  { name: 'seq', of: (l: OperatorAction) => l.seq },
  { name: 'at', of: (l: OperatorAction) => new Date(l.at).toISOString() },
  { name: 'by', of: (l: OperatorAction) => l.by },
  { name: 'action', of: (l: OperatorAction) => l.action },
  { name: 'intent', of: (l: OperatorAction) => l.intentId },
  { name: 'player', of: (l: OperatorAction) => l.playerId },
  { name: 'before', of: (l: OperatorAction) => l.before },
  { name: 'after', of: (l: OperatorAction) => l.after },
  { name: 'note', of: (l: OperatorAction) => l.note },
] as const;

type CsvFile = 'journal' | 'intents' | 'oplog';

function rowsOf(host: ConsoleHost, query: URLSearchParams, file: CsvFile): AsyncIterable<string> {
  if (file === 'oplog') {
    const q = parseInput(oplogFilterSchema, Object.fromEntries(query), 'query');
    return csvRows(OPLOG_COLUMNS, operatorLinesIn(host, present(q)));
  }
  const filter = filterOf(query);
  return file === 'journal'
    ? csvRows(ENTRY_COLUMNS, entriesIn(host, filter))
    : csvRows(INTENT_COLUMNS, intentsIn(host, filter));
}

function exportCsv(host: ConsoleHost, req: ConsoleRequest, file: CsvFile): ConsoleAnswer {
  if (!req.streams) {
    return json(501, {
      error:
        "CSV exports stream through lightning.operator.console.attach(server) only: Colyseus's router ends a streamed answer after its first chunk",
    });
  }
  // Parsed here, before the answer starts: a bad filter is a 400, not a cut file.
  const rows = rowsOf(host, req.query, file);
  return {
    status: 200,
    headers: {
      ...NO_STORE,
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="lightning-${file}.csv"`,
    },
    body: rows,
  };
}
