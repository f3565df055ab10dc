/**
 * `createLightning(options)`: the object a game server creates once, in its own module, and
 * imports wherever it is needed. It returns at once: the embedded emulator starts and the
 * ledger opens on first use (a room's creation, a helper, a callback) or in
 * `await lightning.ready()`, so a room file can say `plugins = definePlugins([lightning.plugin()])`
 * with no top-level await, in ESM and CommonJS alike.
 *
 *   // lightning.ts
 *   export const lightning = createLightning({ apiKey, publicUrl: 'https://game.example.com' });
 *   // app.config.ts
 *   export default defineServer({
 *     rooms: { arena: defineRoom(Arena) },
 *     routes: createRouter({ ...lightning.endpoints() }),
 *     beforeListen: () => lightning.ready(),
 *   });
 *
 * This is the public face only: the engine behind it (server/engine.ts) moves the intents,
 * and neither it nor the runtime's secrets are reachable from here.
 */
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { z } from 'zod';
import type { PaymentsApi } from './api/client.js';
import type { Emulator } from './emulator/index.js';
import { ConfigurationError } from './errors.js';
import type { Intent } from './ledger/intent.js';
import type { JournalPage, JournalQuery } from './ledger/journal.js';
import type { OperatorAction, OperatorLogPage, OperatorLogQuery } from './ledger/operator-log.js';
import type { LedgerView } from './ledger/store.js';
import { type ConsoleOptions, consoleSettings } from './operator/console.js';
import { consoleEndpoints } from './operator/endpoints.js';
import { attachConsole } from './operator/listener.js';
import type { ConsoleHost } from './operator/reads.js';
import { parseInput } from './parse.js';
import type { PluginHost } from './room/host.js';
import type { LightningPluginOptions } from './room/options.js';
import { LightningPlugin } from './room/plugin.js';
import type { Alert } from './server/alerts.js';
import type { AuditReport } from './server/audit.js';
import type { Balances } from './server/balances.js';
import { ClientAddresses, ConnectionAddresses } from './server/client-address.js';
import { lightningEndpoints } from './server/endpoints.js';
import {
  type LightningEventName,
  type LightningEvents,
  type PayoutPause,
  SafeEmitter,
  type SettledStatus,
} from './server/events.js';
import { startEntryFee } from './server/kinds/entry-fee.js';
import { isClaimCode } from './server/kinds/index.js';
import { startAddressPayment } from './server/kinds/payment.js';
import { startReward } from './server/kinds/reward.js';
import { startSpend } from './server/kinds/spend.js';
import { attachRoutes } from './server/listener.js';
import {
  type EnterInput,
  enterInput,
  matchIdInput,
  type OpenMatchInput,
  openMatchInput,
  reasonInput,
  type Shares,
  sharesInput,
} from './server/match/terms.js';
import type { MatchView } from './server/match/view.js';
import {
  type AddressPaymentInput,
  addressPaymentInput,
  type EntryFeeInput,
  entryFeeInput,
  pageFields,
  type RewardInput,
  type RewardManyInput,
  rewardInput,
  rewardManyInput,
  type SpendInput,
  spendInput,
} from './server/operations/inputs.js';
import {
  heldLimit,
  intentIdInput,
  operatorLogQuery,
  operatorName,
  operatorNote,
  playerIdInput,
  resolveStatus,
} from './server/operator.js';
import { type LightningOptions, resolveOptions, type Settings } from './server/options.js';
import { asPlayer } from './server/outbound.js';
import { newProbeToken, probeCallbackRoute } from './server/probe.js';
import { type EntryPurpose, purposeOf } from './server/purpose.js';
import { queueRewards, type RewardManyResult } from './server/queue.js';
import type { RoutesHost } from './server/routes.js';
import { createRuntime, type Runtime } from './server/runtime.js';

type Listener<E extends LightningEventName> = (...args: LightningEvents[E]) => void;

const claimsInput = z.string().min(1, 'must not be empty').max(255);

const journalQuery = z
  .strictObject({
    playerId: z.string().min(1).max(255).optional(),
    matchId: z.string().min(1).max(255).optional(),
    intentId: z.string().min(1).max(255).optional(),
    ...pageFields,
  })
  .default({});

/** Run, pause or step the reconciler (it runs by itself unless `reconciler.enabled` is false). */
export interface ReconcilerControl {
  start(): void;
  stop(): Promise<void>;
  /** One pass over the due intents now; resolves with how many were checked. */
  runOnce(): Promise<number>;
}

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

export class Lightning {
  readonly #settings: Settings;
  readonly #events: SafeEmitter;
  readonly #host: PluginHost;
  readonly #addresses: ClientAddresses;
  readonly #connections: ConnectionAddresses;
  #starting: Promise<Runtime> | undefined;
  #running: Runtime | undefined;
  #closed = false;
  #readyWatch: NodeJS.Timeout | undefined;
  readonly #probeToken = newProbeToken();
  readonly #probe = new AbortController();

  /** The reconciler's controls. */
  readonly reconciler: ReconcilerControl;

  /** Use `createLightning(options)`. */
  constructor(options: LightningOptions = {}) {
    this.#settings = resolveOptions(options);
    this.#events = new SafeEmitter(() => this.#settings.logger);
    this.#addresses = new ClientAddresses(this.#settings.clientAddress);
    this.#connections = new ConnectionAddresses(this.#addresses);
    this.#host = this.#pluginHost();
    const running = () => this.#start().then((r) => r.reconciler);
    this.reconciler = {
      start: () =>
        void running().then(
          (r) => r.start(),
          (err: Error) => this.#settings.logger.error(`reconciler not started: ${err.message}`),
        ),
      stop: async () => (await running()).stop(),
      runOnce: async () => (await running()).runOnce(),
    };
  }

  /**
   * Starts what the server runs on (the embedded emulator without a key, the ledger, the
   * reconciler) if it is not running yet. Safe to call any number of times.
   */
  async ready(): Promise<void> {
    await this.#start();
  }

  /** The API client, for the wallet and payments. Available once `ready()` has resolved. */
  get api(): PaymentsApi {
    return this.#ready('api').api;
  }

  /**
   * The ledger's reads (an intent, a player's, room's or match's intents, the unknowns, the
   * journal, balances). Every write goes through the engine: a move, a resolve or a settle made
   * here would skip its events, its journal entries and the rooms. Available once `ready()` has
   * resolved.
   */
  get ledger(): LedgerView {
    return this.#ready('ledger').view;
  }

  /** The embedded emulator (null with a real key). Available once `ready()` has resolved. */
  get emulator(): Emulator | null {
    return this.#ready('emulator').emulator;
  }

  on<E extends LightningEventName>(event: E, listener: Listener<E>): this {
    this.#events.on(event, listener as never);
    return this;
  }

  once<E extends LightningEventName>(event: E, listener: Listener<E>): this {
    this.#events.once(event, listener as never);
    return this;
  }

  off<E extends LightningEventName>(event: E, listener: Listener<E>): this {
    this.#events.off(event, listener as never);
    return this;
  }

  /** Colyseus router endpoints (callbacks and webhooks): spread into `createRouter({ ... })`. */
  endpoints() {
    this.#expectReady('lightning.endpoints()');
    if (this.#settings.callbackSources && this.#settings.clientAddress.proxies === 0) {
      this.#settings.logger.warn(
        'callbackSources with clientAddress.proxies 0 (no proxy), but the router cannot see the socket: its callback route refuses every callback; use lightning.attach(server) instead',
      );
    }
    return lightningEndpoints(this.#routesHost());
  }

  /**
   * The same routes as `endpoints()`, on the lightest path: a `node:http` request listener in
   * front of Colyseus's, cheaper per callback than the router (bench/README.md). Pass the
   * game's HTTP server, before or after it listens; every other request goes on to Colyseus
   * untouched. Returns a function that removes it.
   *
   *   const transport = new WebSocketTransport();
   *   lightning.attach(transport.server);
   *   export default defineServer({ transport, rooms, beforeListen: () => lightning.ready() });
   */
  attach(server: HttpServer | HttpsServer | undefined): () => void {
    if (!server) {
      throw new ConfigurationError(
        'lightning.attach(server)',
        "needs the game's node:http server (a WebSocketTransport's `server`)",
      );
    }
    this.#expectReady('lightning.attach(server)');
    return attachRoutes(server, this.#routesHost());
  }

  /**
   * The address of the client behind a `node:http` request, read as `clientAddress` says: the
   * socket's peer, or the entry the game's own proxies wrote (from a peer that is one of them);
   * null when it cannot be told. Never a header the client merely sent, so a game's own routes
   * (a rate limit on sign-ups, a log line) can key on it. Costs a header split.
   */
  clientAddress(request: Pick<IncomingMessage, 'headers' | 'socket'>): string | null {
    return this.#addresses.ofNodeRequest(request);
  }

  /**
   * The operator's console (docs/OPERATING.md): a page with the balances, intents, matches and
   * what needs a person, its JSON routes and its actions, as router endpoints to spread into
   * `createRouter({ ... })`. Off unless mounted; `authorize(request)`, the game's own check of
   * an operator, is required, and every route answers an empty 401 unless it says yes.
   *
   *   routes: createRouter({ ...lightning.endpoints(), ...lightning.console({ authorize }) })
   *
   * The CSV exports stream through `attachConsole(server, ...)` only (see there).
   */
  console(options: ConsoleOptions) {
    const settings = consoleSettings(options, this.#settings);
    return consoleEndpoints(this.#consoleHost(), settings);
  }

  /**
   * The console as a `node:http` listener in front of Colyseus's (as `attach` is for the
   * callbacks), with the CSV exports streamed a row at a time, which Colyseus's router cannot
   * do. Returns a function that removes it.
   */
  attachConsole(server: HttpServer | HttpsServer | undefined, options: ConsoleOptions): () => void {
    const settings = consoleSettings(options, this.#settings);
    if (!server) {
      throw new ConfigurationError(
        'lightning.attachConsole(server)',
        "needs the game's node:http server (a WebSocketTransport's `server`)",
      );
    }
    return attachConsole(server, this.#consoleHost(), settings);
  }

  /** What the console calls: this object's public methods, so every action goes through the engine. */
  #consoleHost(): ConsoleHost {
    return {
      balances: () => this.balances(),
      journal: (query) => this.journal(query),
      unknowns: (limit) => this.unknowns(limit),
      intent: async (id) => (await this.#start()).view.get(id),
      match: (id) => this.match(id),
      paused: () => this.paused,
      alerts: () => this.alerts(),
      resolve: (id, status, note, by) => this.resolve(id, status, note, by),
      pause: (by, why) => this.pause(by, why),
      resume: (by) => this.resume(by),
      reissue: (id, by) => this.reissue(id, by),
      held: (limit) => this.held(limit),
      approve: (id, by) => this.approve(id, by),
      reject: (id, by, why) => this.reject(id, by, why),
      block: (playerId, by, why) => this.block(playerId, by, why),
      unblock: (playerId, by) => this.unblock(playerId, by),
      operatorLog: (query) => this.operatorLog(query),
    };
  }

  #routesHost(): RoutesHost {
    const { prefix, maxBodyBytes, logger } = this.#settings;
    return {
      prefix,
      maxBodyBytes,
      logger,
      runtime: () => this.#start(),
      running: () => (this.#closed ? undefined : this.#running),
      callbackAnswered: (status) => this.#running?.metrics.callback(status),
      probeToken: this.#probeToken,
      upgrade: (url, headers, peer) => this.#connections.upgrade(url, headers, peer),
    };
  }

  /**
   * The room plugin: `plugins = definePlugins([lightning.plugin()])`, then
   * `this.plugins.lightning.reward(client, ...)` inside the room.
   */
  plugin(options: LightningPluginOptions = {}): LightningPlugin {
    this.#expectReady('lightning.plugin()');
    return new LightningPlugin(this.#host, options);
  }

  /** Pays a player a reward they claim with a wallet; resolves once created (`pending`). */
  async reward(input: RewardInput): Promise<Intent> {
    const args = parseInput(rewardInput, input);
    return startReward((await this.#start()).engine, args);
  }

  /**
   * Rewards many players at once (a leaderboard): every reward is recorded `queued` now, in the
   * list's order, and sent in its turn by the reconciler of any process of the game (at the
   * game's `rateLimit`, or at the reconciler's pace), exactly once each; each player's code
   * appears when it is made (`settled` events follow as for `reward`). Each reward is checked
   * as `reward` checks it (a blocked player, `maxRewardMsat`, the budgets, the open-intent
   * limits): one refused is listed in `refused` with its error, and the others are recorded.
   * A bad list (1 to 1,000 rewards, each as for `reward`) is refused whole, nothing recorded.
   */
  async rewardMany(input: RewardManyInput): Promise<RewardManyResult> {
    const list = parseInput(rewardManyInput, input, 'rewards');
    return queueRewards((await this.#start()).engine, list);
  }

  /**
   * Pays a player straight to their Lightning address (`name@domain`), once. Resolves with the
   * intent once the service took it: `pending` while it is processing, or already `completed`
   * or `failed`; the `payment.completed` event follows a pending one. The address is checked
   * first, briefly: one the service cannot pay, whose check does not answer, or to which a
   * payment just failed rejects with LnAddressRefusedError, nothing recorded or sent (one the
   * service still refuses at the send: InvalidRequestError, nothing paid). A send whose answer
   * was lost rejects with AmbiguousResultError and leaves the intent `unknown`: it is never
   * sent again, a callback that proves it settles it, or an operator does (`unknowns()`,
   * `resolve()`).
   */
  async payAddress(input: AddressPaymentInput): Promise<Intent> {
    const args = parseInput(addressPaymentInput, input);
    return startAddressPayment((await this.#start()).engine, args);
  }

  /** Charges an entry fee (a single-use static charge); resolves once created (`pending`). */
  async chargeEntryFee(input: EntryFeeInput): Promise<Intent> {
    const args = parseInput(entryFeeInput, input);
    return startEntryFee((await this.#start()).engine, args);
  }

  /** Debits a widget user's points, once, whatever is retried. Resolves `completed`. */
  async spendPoints(input: SpendInput): Promise<Intent> {
    const args = parseInput(spendInput, input);
    return startSpend((await this.#start()).engine, args);
  }

  /**
   * Opens a match: entry fees held in escrow, paid out by `settleMatch` or refunded by
   * `abortMatch`, each exactly once (see docs/MATCHES.md). With `players` (only they may enter)
   * or `seats: n`, it is funded (`match.funded`) once that roster paid; without either, never.
   * In a room, use the plugin's `openMatch`, which keeps the match alive while the room lives
   * and aborts it when the room is disposed.
   */
  async openMatch(input: OpenMatchInput): Promise<MatchView> {
    const args = parseInput(openMatchInput, input);
    return (await this.#start()).matches.open(args);
  }

  /**
   * Charges a player's fee into a match; an open or paid fee of theirs is returned instead. A
   * match decided before the fee was recorded refuses it (`MatchClosedError`, its charge closed).
   */
  async enterMatch(input: EnterInput): Promise<Intent> {
    const args = parseInput(enterInput, input);
    return (await this.#start()).matches.enter(args);
  }

  /**
   * Shares of the pot minus the rake, e.g. `{ [winnerId]: 1 }`; the same shares again are the
   * same settlement, other shares a `MatchClosedError` naming the one that stands.
   */
  async settleMatch(matchId: string, shares: Shares): Promise<MatchView> {
    const id = parseInput(matchIdInput, matchId, 'matchId');
    const wanted = parseInput(sharesInput, shares, 'shares');
    return (await this.#start()).matches.settle(id, wanted);
  }

  /** Refunds every paid fee and closes every open one; idempotent. */
  async abortMatch(matchId: string, reason: string): Promise<MatchView> {
    const id = parseInput(matchIdInput, matchId, 'matchId');
    const why = parseInput(reasonInput, reason, 'reason');
    return (await this.#start()).matches.abort(id, why);
  }

  /** A match as the ledger holds it now. */
  async match(matchId: string): Promise<MatchView> {
    const id = parseInput(matchIdInput, matchId, 'matchId');
    return (await this.#start()).matches.view(id);
  }

  /**
   * The claim codes waiting for a player (rewards, payouts and refunds not yet claimed), for a
   * lobby or a web page where the player is signed in. Each code is that player's secret.
   */
  async claims(playerId: string): Promise<Claim[]> {
    const id = parseInput(claimsInput, playerId, 'playerId');
    const open = await (await this.#start()).engine.ledger.openByPlayer(id);
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

  /** Re-checks an intent now (e.g. a player pressed "I paid"), through the same path as callbacks. */
  async refresh(id: string): Promise<Intent | null> {
    return (await this.#start()).checks.refresh(id);
  }

  /**
   * Intents whose outcome is unknown and that nothing will resolve by itself (oldest first, at
   * most `limit`: 1 to 1,000, default 100). Rewards and entry fees whose create answer was lost resolve
   * themselves once their deadline has passed, and spends by re-sending their key; they are
   * listed while they wait. A payment to a Lightning address whose answer was lost stays here
   * until a callback proves it or you resolve it. For an operator's page or a script.
   */
  async unknowns(limit?: number): Promise<Intent[]> {
    const max = parseInput(heldLimit, limit, 'limit');
    return (await this.#start()).ledger.unknowns(max);
  }

  /**
   * Records an operator's decision about an `unknown` intent (after looking at the service's
   * dashboard, say): it moves to `status`, the note is kept in its history, `settled` fires, and
   * a line goes to the operator log naming `by` (the operator; omitted, the line says `unnamed
   * operator`). Rejects with OperatorRefusedError (an InvalidArgumentError) when the intent does
   * not exist or is not unknown, recording nothing.
   */
  async resolve(id: string, status: SettledStatus, note: string, by?: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const to = parseInput(resolveStatus, status, 'status');
    const why = parseInput(operatorNote, note, 'note');
    const who = by === undefined ? undefined : parseInput(operatorName, by, 'by');
    return (await this.#start()).operator.resolve(intent, to, why, who);
  }

  /**
   * Pauses the game's payouts, as the breaker does (`paused` says so, its cause `operator`
   * and `by`; the `paused` event fires), until `resume(by)`: this process at once, every other
   * process sharing the ledger within a second (each looks at the ledger's pause every second,
   * and a process that starts while it holds starts paused; docs/OPERATING.md). Resolves with
   * the operator log's line; rejects with OperatorRefusedError when an operator's pause already
   * holds.
   */
  async pause(by: string, why: string): Promise<OperatorAction> {
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#start()).operator.pause(who, reason);
  }

  /**
   * Ends the pause of the payouts: an operator's (in every process, see `pause`) and this
   * process's breaker's; the breaker counts afresh. With `by`, one line in the operator log,
   * and OperatorRefusedError when payouts are not paused. Without it (the call before the log),
   * this process's pause is lifted at once, and an operator's pause in the ledger after it, its
   * line naming `unnamed operator` (a failure to reach the ledger is logged).
   */
  resume(): void;
  resume(by: string): Promise<OperatorAction>;
  resume(by?: string): undefined | Promise<OperatorAction> {
    if (by === undefined) {
      const running = this.#running;
      if (!running) return;
      running.engine.breaker.resume();
      void running.operator
        .resumeUnnamed()
        .catch((err: unknown) =>
          this.#settings.logger.warn(`lifting the operator's pause: ${(err as Error).message}`),
        );
      return;
    }
    return (async () => {
      const who = parseInput(operatorName, by, 'by');
      return (await this.#start()).operator.resume(who);
    })();
  }

  /**
   * Issues a match's payout or refund once more as a new claim code: one that expired unclaimed
   * after its code was shown (the match never issues those by itself: the player may have held
   * the code). Once per payout; the money goes from `house:unclaimed` back out. Resolves with the
   * new attempt (its entry appears in the room); rejects with OperatorRefusedError for a claimed,
   * open or never-shown code, or a second reissue.
   */
  async reissue(id: string, by: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#start()).operator.reissue(intent, who);
  }

  /**
   * Payouts the approvals held (`approvals` option), oldest first, at most `limit` (1 to 1,000,
   * default 100): each waits for `approve` or `reject`, and nothing of it has been sent.
   */
  async held(limit?: number): Promise<Intent[]> {
    const max = parseInput(heldLimit, limit, 'limit');
    return (await this.#start()).operator.held(max);
  }

  /**
   * Approves a held payout: it is sent now, as any payout (a reward gets its claim code, with
   * as long to claim it from now as it was given; a payment goes to its address), and a line
   * naming `by` goes to the operator log. Resolves with the payout as the send left it
   * (`pending`, or `failed`/`unknown` with its error when the service refused or did not
   * answer). Rejects with OperatorRefusedError when the intent is not held, and with
   * PayoutsPausedError while payouts are paused, moving nothing.
   */
  async approve(id: string, by: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#start()).operator.approve(intent, who);
  }

  /**
   * Rejects a held payout: it ends `failed` without ever being sent (`settled` fires), its
   * error names `by` and `why`, and a line goes to the operator log. A match's payout goes to
   * the house (`house:rejected`) and the match ends settled; it is never issued again. Rejects
   * with OperatorRefusedError when the intent is not held.
   */
  async reject(id: string, by: string, why: string): Promise<Intent> {
    const intent = parseInput(intentIdInput, id, 'id');
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#start()).operator.reject(intent, who, reason);
  }

  /**
   * Blocks a player: every money helper of theirs (reward, chargeEntryFee, spendPoints,
   * payAddress, a match's enter, the room plugin's) rejects with PlayerBlockedError, in every
   * process, before anything is recorded or sent, until `unblock`. Codes they hold stay valid,
   * and a match still pays them what it owes. Rejects with OperatorRefusedError when the player
   * is blocked already.
   */
  async block(playerId: string, by: string, why: string): Promise<OperatorAction> {
    const player = parseInput(playerIdInput, playerId, 'playerId');
    const who = parseInput(operatorName, by, 'by');
    const reason = parseInput(operatorNote, why, 'why');
    return (await this.#start()).operator.block(player, who, reason);
  }

  /** Lifts a block; OperatorRefusedError when the player is not blocked. */
  async unblock(playerId: string, by: string): Promise<OperatorAction> {
    const player = parseInput(playerIdInput, playerId, 'playerId');
    const who = parseInput(operatorName, by, 'by');
    return (await this.#start()).operator.unblock(player, who);
  }

  /**
   * The operator log: every action an operator took (who, when, what, on which intent or
   * player, before -> after, why), oldest first, filtered by intent, player or time, a page at a
   * time (`limit` 1 to 1,000, default 100; pass the answer's `next` as `after`). Append-only.
   */
  async operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    const parsed = parseInput(operatorLogQuery, query, 'query');
    return (await this.#start()).operator.log(parsed as OperatorLogQuery);
  }

  /**
   * What the game's money adds up to, from the journal: escrow, owed to players, in flight, the
   * house's revenue, rake, reward expense and net, the last wallet reading and the cover
   * (wallet - owed - escrow - in flight). Amounts are decimal strings of msats.
   */
  async balances(): Promise<Balances> {
    return (await this.#start()).auditor.balances();
  }

  /**
   * The journal's entries, oldest first, filtered by player, match, intent or time, a page at a
   * time (`limit` 1 to 1,000, default 100; pass the answer's `next` as `after` for the next).
   * Every msat the game moved is in it, between named accounts (see docs/ACCOUNTING.md).
   */
  async journal(query?: JournalQuery): Promise<JournalPage> {
    const parsed = parseInput(journalQuery, query, 'query');
    return (await this.#start()).engine.ledger.journal(parsed as JournalQuery);
  }

  /**
   * Runs the live audit now (the reconciler runs it every `audit.intervalMs`): resolves with
   * what it found; findings not reported before are also logged and emitted (`audit`).
   */
  async audit(): Promise<AuditReport> {
    return (await this.#start()).audit();
  }

  /**
   * The alerts raised now in this process (with `alerts` set; see the `alert` event), oldest
   * first, for a console: cover low, an old unknown, payouts paused, an audit finding, the
   * service failing. Empty before the server starts.
   */
  alerts(): Alert[] {
    return this.#running?.alerts?.list() ?? [];
  }

  /**
   * Why payouts are paused (the circuit breaker tripped): its `reason`, its `cause` (`payouts`
   * failing for several players, the service failing `reads`, the `wallet` floor) and whose
   * payouts failed; null while they run.
   */
  get paused(): PayoutPause | null {
    return this.#running?.engine.breaker.paused ?? null;
  }

  /** Stops the reconciler, closes the client, the ledger it opened and the emulator it started. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#readyWatch);
    this.#probe.abort();
    const running = await this.#starting?.catch(() => undefined);
    await running?.close();
  }

  /** Keeps every option (the key, the webhook secret among them) out of logs. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Lightning { publicUrl: '${this.#settings.publicUrl}', ready: ${this.#running !== undefined} }`;
  }

  toJSON(): { publicUrl: string } {
    return { publicUrl: this.#settings.publicUrl };
  }

  /** The runtime (server/runtime.ts), built on first use. */
  #start(): Promise<Runtime> {
    if (this.#closed) {
      return Promise.reject(new ConfigurationError('lightning', 'is closed'));
    }
    this.#starting ??= createRuntime(this.#settings, this.#events).then((runtime) => {
      this.#running = runtime;
      this.#probeOwnRoute(runtime.emulator !== null);
      return runtime;
    });
    return this.#starting;
  }

  /**
   * In development (the emulator, or a real key outside production), checks once the server
   * listens that `publicUrl` reaches this server's callback route, and warns when it does not.
   */
  #probeOwnRoute(emulator: boolean): void {
    if (!emulator && process.env.NODE_ENV === 'production') return;
    const { publicUrl, prefix, logger, reconciler } = this.#settings;
    void probeCallbackRoute({
      publicUrl,
      prefix,
      logger,
      token: this.#probeToken,
      firstCheckMs: reconciler.firstCheckMs,
      signal: this.#probe.signal,
    });
  }

  /**
   * The routes or the plugin were made (`what`): the server is about to listen. Unless
   * `ready()` (or a first use) starts it within `startWithoutReadyMs`, it starts then, and says
   * so outside production, once: a forgotten `ready()` would leave a restarted server's open
   * payments unrecovered and the dev wallet URL unprinted until a player's first payment.
   */
  #expectReady(what: string): void {
    const { startWithoutReadyMs: after, logger } = this.#settings;
    if (after === 0 || this.#readyWatch !== undefined || this.#starting || this.#closed) return;
    this.#readyWatch = setTimeout(() => {
      if (this.#starting || this.#closed) return;
      if (process.env.NODE_ENV !== 'production') {
        logger.warn(
          `lightning.ready() was not called within ${after} ms of ${what}: starting now. Until it starts, a restarted server does not recover its open payments and the dev wallet URL is not printed; call \`await lightning.ready()\` before the server listens (e.g. in beforeListen)`,
        );
      }
      this.#start().catch((err: Error) => logger.error(`lightning did not start: ${err.message}`));
    }, after);
    this.#readyWatch.unref();
  }

  #ready(what: string): Runtime {
    if (this.#running) return this.#running;
    throw new ConfigurationError(
      `lightning.${what}`,
      'is not available yet: `await lightning.ready()` first (the server starts on first use)',
    );
  }

  /**
   * The room's host. What the room hands it was parsed by the room (its own arguments, and the
   * player and room it fills in), so it goes to the operations and the service's send steps
   * as it is: nothing is parsed twice (the types say so: each call takes a parsed type).
   */
  #pluginHost(): PluginHost {
    const engine = async () => (await this.#start()).engine;
    const calls = () => this.#ready('api').calls;
    const forPlayer = <T>(playerId: string | undefined, work: () => Promise<T>): Promise<T> =>
      playerId === undefined ? work() : asPlayer(this.#ready('api').outbound, playerId, work);
    const said = new Set<string>();
    return {
      logger: this.#settings.logger,
      devWarn: (key, message) => {
        if (process.env.NODE_ENV === 'production' || said.has(key)) return;
        said.add(key);
        this.#settings.logger.warn(message);
      },
      ready: () => this.#start(),
      reward: async (args) => startReward(await engine(), args),
      payAddress: async (args) => startAddressPayment(await engine(), args),
      chargeEntryFee: async (args) => startEntryFee(await engine(), args),
      spendPoints: async (args) => startSpend(await engine(), args),
      matches: async () => (await this.#start()).matches,
      regionOf: async (ip) => (await this.#start()).regions.support(ip),
      clientAddress: (headers, peer) => this.#addresses.of(headers, peer),
      watchConnections: (roomId, sink) => this.#connections.watch(roomId, sink),
      intent: async (id) => (await engine()).ledger.get(id),
      openIntents: async (roomId) => (await engine()).ledger.openByRoom(roomId),
      widget: {
        // Each waits in its player's turn (reference_id is the player id): server/outbound.ts.
        createUser: async (body) =>
          forPlayer(body.reference_id, () => calls().widgetUsers.create(body)),
        openWidget: async (body) =>
          forPlayer(body.reference_id, () => calls().widgetSessions.create(body)),
        openPurchase: async (body) =>
          forPlayer(body.reference_id, () => calls().ramp.createSession(body)),
        acceptDisclosures: async (userId, typeIds) =>
          calls().widgetUsers.acceptDisclosures(userId, typeIds),
        updateEmail: async (userId, email) => calls().widgetUsers.update(userId, { email }),
      },
      webhookUrl: (source) => this.#ready('webhookUrl').webhookUrl(source),
      attachPresence: (presence) => {
        const rooms = this.#ready('presence').rooms;
        if (presence) rooms.usePresence(presence);
        return rooms.presence();
      },
      hostRoom: (roomId, deliver) => this.#ready('hostRoom').rooms.host(roomId, deliver),
      currency: this.#settings.fiat?.currency ?? '',
      price: () => this.#running?.price?.current ?? null,
      onPrice: (listener) => this.#ready('price').price?.onPrice(listener) ?? (() => {}),
    };
  }
}

/**
 * Creates the server-level object, at once (see `ready()`). Without `apiKey` it will start the
 * embedded emulator (and say so in one line); with `NODE_ENV=production` and no key it throws.
 */
export function createLightning(options: LightningOptions = {}): Lightning {
  return new Lightning(options);
}
