/**
 * The reward kind: a claim code for one player, a bearer secret shown to that player only. A
 * lost create answer held the only copy of the code, so an `unknown` reward ends expired at its
 * deadline; one that ended unpaid is issued again only when nobody can hold its code.
 */
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { ClaimCode, PaymentsPort } from '../../port/port.js';
import type { Engine } from '../engine.js';
import {
  msatFields,
  type OnBehalf,
  recordThenSend,
  refuseBlocked,
  sendRecorded,
} from '../operations/create.js';
import type { ParsedReward } from '../operations/inputs.js';
import type { Ticket } from '../outbound.js';
import { newCallbackToken } from '../tokens.js';
import { type KindRules, notProvenBy, type Observation, recorded } from './kind.js';
import { mayReissue, payoutPosition } from './payout-position.js';

export const reward: KindRules = {
  kind: 'reward',
  reads: 'resource',
  lostAnswer: 'deadline',
  showsCode: true,
  room: 'rewards',
  movesMoney: true,
  counts: 'moneyOut',
  mayReissue,
  position: (intent) =>
    payoutPosition(
      intent,
      { account: accounts.claimable(intent.playerId), why: 'code shown' },
      'claimed',
    ),
  async observe(port: PaymentsPort, _intent, remoteId, _now, proof): Promise<Observation | null> {
    const claim = await port.readClaimCode(remoteId);
    if (notProvenBy(proof, claim.callbackUrl)) return null;
    const patch = { remoteId, code: claim.code, uri: claim.uri };
    const seen = { patch, note: claim.said };
    if (claim.state === 'claimed') return { ...seen, to: 'completed' };
    if (claim.state === 'expired') return { ...seen, to: 'expired' };
    if (claim.state === 'failed') return { ...seen, to: 'failed' };
    return { ...seen, to: null };
  },
};

/** Starts a reward from arguments parsed where the call entered (`rewardInput`). */
export async function startReward(
  engine: Engine,
  args: ParsedReward,
  behalf: OnBehalf = {},
): Promise<Intent> {
  // A match's payout or refund is the pot's debt, paid to a blocked player too, and uncapped.
  if (behalf.guards === undefined) await refuseBlocked(engine, args.playerId);
  engine.capPayout(args.amountMsat, behalf.guards === undefined);
  // A queued reward asks the breaker when its turn comes.
  if (!behalf.queue) await engine.breaker.admit(BigInt(args.amountMsat));
  const guards = behalf.guards ?? engine.guards('reward');
  const token = newCallbackToken();
  return recordThenSend(
    engine,
    {
      ...msatFields(args, behalf),
      kind: 'reward',
      description: args.description,
      callbackToken: token,
      expiresAt: engine.now() + args.expiresIn * 1000,
      ...(behalf.meta === undefined ? {} : { meta: behalf.meta }),
    },
    rewardCall(engine, args.expiresIn),
    rewardAnswer(engine),
    { guards: behalf.queue ? { ...guards, queue: true } : guards },
  );
}

/** The claim code of a reward (or a withdrawal), as its record says (`expiresIn` in seconds). */
export function rewardCall(engine: Engine, expiresIn: number) {
  return (intent: Intent) =>
    engine.port.makeClaimCode({
      amountMsat: intent.amount,
      description: intent.description,
      playerId: intent.playerId,
      callbackUrl: engine.callbackUrl(recorded(intent, 'callback token', intent.callbackToken)),
      expiresIn,
    });
}

/** What the service's answer to a reward's (or a withdrawal's) create writes. */
export function rewardAnswer(engine: Engine) {
  return (created: ClaimCode, intent: Intent) => {
    // The provider's own expiry wins over ours when it says one.
    const expiresAt = created.expiresAt ?? intent.expiresAt;
    return {
      patch: {
        remoteId: created.id,
        code: created.code,
        uri: created.uri ?? `lightning:${created.code}`,
        expiresAt,
        nextCheckAt: engine.nextCheckAt({ ...intent, expiresAt }),
      },
      note: created.said,
    };
  };
}

/** The claim time a held reward was recorded with, in seconds, given again from its approval. */
export function heldClaimSeconds(intent: Intent): number {
  const span = (intent.expiresAt ?? intent.createdAt) - intent.createdAt;
  return Math.max(1, Math.round(span / 1000));
}

/** Sends a reward an operator approved, or the queue took (now `creating`). */
export function sendApprovedReward(
  engine: Engine,
  intent: Intent,
  ticket: Ticket | null,
): Promise<Intent> {
  const call = rewardCall(engine, heldClaimSeconds(intent));
  return sendRecorded(engine, intent, call, rewardAnswer(engine), ticket);
}
