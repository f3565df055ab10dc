/**
 * The one shape of every money operation: record the intent, only then call the service, and
 * write the answer (`pending`) or the failure (outcome.ts). A held or queued payout is recorded
 * and sent later through the second half, `sendRecorded`. The record is due when the grace ends,
 * so a process that dies mid-call leaves an intent the reconciler makes `unknown`. An answer
 * that loses the compare-and-set resolves with what won, except a grace-made `unknown`: a
 * certain answer replaces it.
 */
import { PlayerBlockedError } from '../../errors.js';
import { DuplicateIntentError, LedgerUnavailableError } from '../../ledger/errors.js';
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
import { AnswerNotRecordedError, IntentLostError } from './errors.js';
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

/** The check every money helper makes first: PlayerBlockedError when an operator blocked the player. */
export async function refuseBlocked(engine: Engine, playerId: string): Promise<void> {
  if (await engine.ledger.isBlocked(playerId)) throw new PlayerBlockedError(playerId);
}

/** Fields of an intent started for a match: a fixed id makes a second attempt a duplicate. */
export interface OnBehalf {
  id?: string;
  groupId?: string;
  meta?: Record<string, unknown>;
  guards?: CreateGuards;
  /** Record it for the payout queue, to be sent in its turn by any process. */
  queue?: boolean;
}

/** What a fee or payout records from its call: who, how much, and the match it is for. */
export function msatFields(
  args: { roomId: string | null; playerId: string; amountMsat: string },
  behalf: OnBehalf,
) {
  return {
    roomId: args.roomId,
    playerId: args.playerId,
    amount: args.amountMsat,
    unit: 'msats',
    ...(behalf.id === undefined ? {} : { id: behalf.id }),
    ...(behalf.groupId === undefined ? {} : { groupId: behalf.groupId }),
  };
}

export function recordThenSend<T>(
  engine: Engine,
  fields: NewIntent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  options: RecordOptions = {},
): Promise<Intent> {
  // Its player waits on it: its calls wait in that player's turn.
  return asPlayer(engine.outbound, fields.playerId, async () => {
    const guards = options.guards ?? engine.guards(fields.kind);
    // The token first (none for the queue): the record and its first attempt follow at once.
    const queued = guards.queue === true && isPayout(fields.kind);
    const outbound = queued ? null : engine.outbound;
    const ticket = outbound
      ? await outbound.reserve(isPayout(fields.kind) ? 'payout' : 'player')
      : null;
    const release = () => ticket && outbound?.release(ticket);
    const { intent, existing } = await record(engine, fields, guards, queued).catch((err) => {
      release();
      throw err;
    });
    // Nothing is sent for the open intent that holds the key, nor a queued or held one.
    if (existing || intent.status === 'queued' || intent.status === 'held') {
      release();
      return intent;
    }
    return sendRecorded(engine, intent, send, created, ticket, options);
  });
}

/** The second half: the service called for a `creating` intent, with the caller's `ticket`. */
export async function sendRecorded<T>(
  engine: Engine,
  intent: Intent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  ticket: Ticket | null,
  options: RecordOptions = {},
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
      // The call's own failure is what the caller needs; the grace makes the intent `unknown`.
      if (ledgerErr instanceof LedgerUnavailableError) return true;
      throw ledgerErr;
    });
    if (failed) throw err;
    // Another writer moved it first.
    const won = await engine.ledger.get(intent.id);
    if (won === null) throw lost(engine, intent, null, err);
    if (won.status === 'unknown' && !isAmbiguous(engine.port, err) && won.remoteId === null) {
      // The grace period ran out first, but this failure is certain: nothing was created.
      await recordCreateFailure(engine, won, err, null);
      throw err;
    }
    if (won.status === 'unknown' || won.status === 'failed') throw err;
    // A verified callback moved it: the service acted, and the ledger is truer than this error.
    return won;
  }
  const { patch, note } = created(answer, intent);
  try {
    return await recordAnswer(engine, intent, patch, note);
  } catch (err) {
    if (!(err instanceof LedgerUnavailableError)) throw err;
    // The service acted and the ledger is away: the answer is kept and written when it is back.
    const remoteId = patch.remoteId ?? null;
    engine.kept.keep(intent.id, remoteId, async () => {
      await recordAnswer(engine, intent, patch, note);
    });
    throw new AnswerNotRecordedError(intent.id, remoteId, { cause: err });
  }
}

/** Writes the answer, or resolves with what won; a grace-made `unknown` is replaced. */
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

/** Records the intent with its guards in one atomic step; an open key's holder is returned. */
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
      // It ended between the refusal and this read: the key is free, try once more.
      if (holder && !isTerminal(holder.status)) return { intent: holder, existing: true };
    }
  }
}

/** Ends an intent its own answer settled; what won, when another writer came first. */
export async function settleAsAnswered(
  engine: Engine,
  intent: Intent,
  to: 'completed' | 'failed',
  note: string,
): Promise<Intent> {
  const done = await engine.apply(intent, to, { nextCheckAt: null }, note);
  if (done) return done;
  const won = await engine.ledger.get(intent.id);
  if (won === null) throw new IntentLostError(intent.id, intent.remoteId);
  return won;
}

/** The ledger lost an intent recorded moments ago: the `unknown` event carries the answer. */
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
