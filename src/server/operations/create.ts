/**
 * The one shape of every money operation: record the intent, only then call the service, and
 * turn the answer into `pending` (or the failure into `failed`/`unknown`, see outcome.ts). A
 * payout the approvals hold is recorded `held` and not sent: an operator's approval sends it
 * later through the same second half (`sendRecorded`). So is a payout for the queue
 * (`CreateGuards.queue`), recorded `queued` and due at once: whichever process's reconciler
 * claims it moves it to `creating` and sends it (server/queue.ts).
 *
 * The intent is recorded with a check due when the grace period ends, so that a process that
 * dies mid-call leaves nothing behind: the reconciler finds the `creating` intent and makes it
 * `unknown` (see Engine.check). Two things can move the intent while the call is in flight: a
 * verified callback (the service acted and the player already paid or claimed), and the grace
 * period ending. The answer then loses the compare-and-set and the helper resolves with what
 * won, except over an `unknown` that the grace period made: a certain answer replaces it.
 * A helper never resolves without an intent: if the ledger lost it, it rejects.
 */
import {
  AnswerNotRecordedError,
  DuplicateIntentError,
  IntentLostError,
  LedgerUnavailableError,
} from '../../ledger/errors.js';
import {
  type Intent,
  type IntentPatch,
  isPayout,
  isTerminal,
  type NewIntent,
} from '../../ledger/intent.js';
import type { CreateGuards } from '../../ledger/store.js';
import type { Engine } from '../engine.js';
import { asPlayer, type Ticket } from '../outbound.js';
import { isAmbiguous, recordCreateFailure } from './outcome.js';

export interface Created {
  patch: IntentPatch;
  note: string;
}

export interface RecordOptions {
  /** When an ambiguous answer is re-sent (spends, with their key); null: never. */
  retryAfterAmbiguousMs?: number | null;
  /** The ledger's checks with the record; default the kind's (engine.guards). */
  guards?: CreateGuards;
}

/**
 * Internal fields of an intent started on behalf of a match (server/match/): a fixed id makes a
 * second attempt a DuplicateIntentError instead of a second payout; the group ties it to the
 * match. Not reachable from the public helpers.
 */
export interface OnBehalf {
  id?: string;
  groupId?: string;
  meta?: Record<string, unknown>;
  guards?: CreateGuards;
  /** Record it for the payout queue (`queued`), to be sent in its turn by any process. */
  queue?: boolean;
}

export function recordThenSend<T>(
  engine: Engine,
  fields: NewIntent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  options: RecordOptions = {},
): Promise<Intent> {
  // Its player waits on it: with the game's rate, its calls wait in that player's turn.
  return asPlayer(engine.outbound, fields.playerId, () =>
    recordThenSendNow(engine, fields, send, created, options),
  );
}

async function recordThenSendNow<T>(
  engine: Engine,
  fields: NewIntent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  options: RecordOptions,
): Promise<Intent> {
  const guards = options.guards ?? engine.guards(fields.kind);
  // A payout for the queue is sent in its turn, not now: it takes no token here.
  const queued = guards.queue === true && isPayout(fields.kind);
  // With the game's rate, the token comes first: the record and its first attempt follow at once.
  const outbound = queued ? null : engine.outbound;
  const ticket = outbound
    ? await outbound.reserve(isPayout(fields.kind) ? 'payout' : 'player')
    : null;
  let recorded: { intent: Intent; existing: boolean };
  try {
    recorded = await record(engine, fields, guards, queued);
  } catch (err) {
    if (ticket) outbound?.release(ticket);
    throw err;
  }
  // Nothing is sent now for the open intent that holds the key (it is the answer), nor for one
  // recorded queued (a reconciler sends it in its turn, server/queue.ts) or held (an operator
  // decides, operator.ts), which the engine published as recorded.
  const { intent, existing } = recorded;
  if (existing || intent.status === 'queued' || intent.status === 'held') {
    if (ticket) outbound?.release(ticket);
    return intent;
  }
  return sendRecorded(engine, intent, send, created, options, ticket);
}

/**
 * The second half of recordThenSend: the service called for an intent in `creating` (just
 * recorded, or approved out of `held`), and its answer, or failure, written. `ticket`: the
 * token the caller took for it before its move to `creating` (with the game's rate).
 */
export async function sendRecorded<T>(
  engine: Engine,
  intent: Intent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  options: RecordOptions = {},
  ticket: Ticket | null = null,
): Promise<Intent> {
  const outbound = engine.outbound;
  let answer: T;
  try {
    answer = await (ticket && outbound ? outbound.spend(ticket, () => send(intent)) : send(intent));
  } catch (err) {
    const failed = await recordCreateFailure(
      engine,
      intent,
      err,
      options.retryAfterAmbiguousMs ?? null,
    ).catch((ledgerErr: unknown) => {
      // The call's own failure is the truth the caller needs; the intent stays `creating`
      // and the reconciler makes it `unknown` after its grace period, as for a dead process.
      if (ledgerErr instanceof LedgerUnavailableError) return true;
      throw ledgerErr;
    });
    if (failed) throw err;
    // Another writer moved it first (the engine published what it found, for the room).
    const won = await engine.ledger.get(intent.id);
    if (won === null) throw lost(engine, intent, null, err);
    if (won.status === 'unknown' && !isAmbiguous(engine.port, err) && won.remoteId === null) {
      // The grace period ran out first, but this failure is certain: nothing was created.
      await recordCreateFailure(engine, won, err, null);
      throw err;
    }
    if (won.status === 'unknown' || won.status === 'failed') throw err;
    // A verified callback moved it while the call failed: it proved that the service acted,
    // so what the ledger holds is truer than this error.
    return won;
  }
  const { patch, note } = created(answer, intent);
  try {
    return await recordAnswer(engine, intent, patch, note);
  } catch (err) {
    if (!(err instanceof LedgerUnavailableError)) throw err;
    // The service acted and the ledger is away for a moment: the answer is kept and written
    // when it is back, and the caller is told exactly that, never to call again.
    const remoteId = patch.remoteId ?? null;
    engine.kept.keep(intent.id, remoteId, async () => {
      await recordAnswer(engine, intent, patch, note);
    });
    throw new AnswerNotRecordedError(intent.id, remoteId, { cause: err });
  }
}

/**
 * Writes the service's answer (`creating -> pending`), or, when another writer moved the
 * intent first, resolves with what won; an `unknown` the grace period made without an answer
 * is replaced, since this answer is certain.
 */
async function recordAnswer(
  engine: Engine,
  intent: Intent,
  patch: IntentPatch,
  note: string,
): Promise<Intent> {
  const moved = await engine.apply(intent, 'pending', patch, note);
  if (moved) return moved;
  const won = await engine.ledger.get(intent.id);
  if (won === null) {
    throw lost(
      engine,
      intent,
      { ...patch, status: 'pending' },
      new Error('no longer in the ledger'),
    );
  }
  if (won.status === 'unknown' && won.remoteId === null && won.code === null) {
    // The grace period ran out before this answer came: it is certain, so it wins.
    const late = await engine.apply(
      won,
      'pending',
      patch,
      `${note} (answer after the grace period)`,
    );
    if (late) return late;
    return (await engine.ledger.get(intent.id)) ?? won;
  }
  return won;
}

/**
 * Records the intent with the guards of its kind (the per-player limit; budgets for rewards),
 * checked in the ledger's own atomic step. An intent whose open key is held by an open intent
 * is not recorded: that one is returned (`existing`), and nothing is sent.
 */
async function record(
  engine: Engine,
  fields: NewIntent,
  guards: CreateGuards,
  queued: boolean,
): Promise<{ intent: Intent; existing: boolean }> {
  for (let attempt = 0; ; attempt++) {
    const now = engine.now();
    try {
      const intent = await engine.record(
        // A queued payout is due at once: the reconciler's leased claim hands it to one process.
        { ...fields, nextCheckAt: queued ? now : now + engine.settings.reconciler.creatingGraceMs },
        now,
        guards,
      );
      return { intent, existing: false };
    } catch (err) {
      if (!(err instanceof DuplicateIntentError) || err.field !== 'openKey' || attempt >= 2) {
        throw err;
      }
      const holder = err.existingId === null ? null : await engine.ledger.get(err.existingId);
      // It ended between the refusal and this read: the key is free again, so try once more.
      if (holder && !isTerminal(holder.status)) return { intent: holder, existing: true };
    }
  }
}

/**
 * The ledger no longer has an intent recorded moments ago. The `unknown` event carries what
 * the service answered, so that an operator can act; the log line names ids, never the code.
 */
function lost(
  engine: Engine,
  intent: Intent,
  answered: (IntentPatch & { status: 'pending' }) | null,
  cause: unknown,
): IntentLostError {
  const remoteId = answered?.remoteId ?? null;
  const error = new IntentLostError(intent.id, remoteId, { cause });
  engine.logger.error(
    `LEDGER LOST AN INTENT: ${intent.kind} ${intent.id} for player ${intent.playerId} is gone from the ledger` +
      `${remoteId ? `; the service created ${remoteId}` : ''}. Check the ledger's durability (PostgreSQL needs fsync on; was it restored from a backup?).`,
  );
  engine.emit('unknown', { ...intent, ...answered, status: 'unknown' }, error);
  return error;
}
