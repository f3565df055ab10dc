/**
 * Withdrawal requests: pending at creation, completed by one claim before expiry (debiting the
 * wallet), expired after expiresIn, checked on every read and by a timer (so its callback fires).
 * The claim is LUD-03: the wallet reads what it may withdraw, then hands in k1 and its invoice.
 * LNURL answers are JSON with `status: 'ERROR'` on failure (HTTP 400 only as a courtesy).
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { decodeBolt11 } from './bolt11.js';
import { armTimer, disarmTimer, type EmulatorCore, iso, owned } from './core.js';
import { type Ctx, failure, json, outcome, type Reply, v0Error, v0Ok } from './http.js';
import { encodeLnurl, type LnurlResult, lnurlPaths } from './lnurl.js';
import type { WithdrawalRequestRecord } from './store.js';
import { httpUrl, msatString, parse } from './validation.js';

/** The service's minimum: 10 sats. */
export const MIN_WITHDRAWAL_MSAT = 10_000;
/** When the body has no expiresIn (the docs give no default): 5 minutes. */
export const DEFAULT_EXPIRES_IN_SEC = 300;

const createBody = z.object({
  amount: msatString,
  description: z.string().max(640).nullish(),
  internalId: z.string().max(255).nullish(),
  callbackUrl: httpUrl.nullish(),
  expiresIn: z.number().int().positive().max(31_536_000).nullish(),
});

/** LUD-03's withdrawRequest: what the wallet may withdraw, and where to send its invoice. */
export function withdrawParams(core: EmulatorCore, wr: WithdrawalRequestRecord) {
  return {
    tag: 'withdrawRequest' as const,
    callback: `${core.baseUrl}${lnurlPaths.withdrawCallback(wr.id)}`,
    k1: wr.k1,
    defaultDescription: wr.description,
    // min = max: a withdrawal request is claimed whole, once.
    minWithdrawable: wr.amountMsat,
    maxWithdrawable: wr.amountMsat,
  };
}

/** The codes never change for a request, and bech32 is the costliest part of a read. */
const codes = new WeakMap<WithdrawalRequestRecord, { request: string; fastRequest: string }>();

function codesOf(core: EmulatorCore, wr: WithdrawalRequestRecord) {
  let found = codes.get(wr);
  if (found) return found;
  const url = `${core.baseUrl}${lnurlPaths.withdraw(wr.id)}`;
  // LUD-08 fast form: the same parameters in the query, so a wallet can skip step 1.
  const params = Object.entries(withdrawParams(core, wr));
  const fast = new URLSearchParams(params.map(([k, v]): [string, string] => [k, String(v)]));
  found = { request: encodeLnurl(url), fastRequest: encodeLnurl(`${url}?${fast}`) };
  codes.set(wr, found);
  return found;
}

export function withdrawalRequestView(core: EmulatorCore, wr: WithdrawalRequestRecord) {
  const { request, fastRequest } = codesOf(core, wr);
  return {
    id: wr.id,
    unit: 'msats',
    amount: String(wr.amountMsat),
    status: wr.status,
    description: wr.description,
    createdAt: iso(wr.createdAt),
    expiresAt: iso(wr.expiresAt),
    completedAt: wr.completedAt === null ? null : iso(wr.completedAt),
    internalId: wr.internalId,
    callbackUrl: wr.callbackUrl,
    fee: '0',
    invoice: {
      expiresAt: iso(wr.expiresAt),
      request,
      uri: `lightning:${request}`,
      fastRequest,
      fastUri: `lightning:${fastRequest}`,
    },
  };
}

export function createWithdrawalRequest({ core, project, body }: Ctx): Reply {
  const input = parse(createBody, body);
  const amountMsat = Number(input.amount);
  if (amountMsat < MIN_WITHDRAWAL_MSAT) {
    return v0Error(400, `The minimum withdrawal amount is 10 sats (${MIN_WITHDRAWAL_MSAT} msats)`);
  }
  if (project.walletMsat < amountMsat) {
    return v0Error(400, 'Insufficient wallet balance for this withdrawal request');
  }
  const now = core.clock.now();
  const wr: WithdrawalRequestRecord = {
    id: randomUUID(),
    projectId: project.id,
    amountMsat,
    status: 'pending',
    description: input.description ?? '',
    internalId: input.internalId ?? null,
    callbackUrl: input.callbackUrl ?? null,
    createdAt: now,
    expiresAt: now + (input.expiresIn ?? DEFAULT_EXPIRES_IN_SEC) * 1000,
    k1: randomBytes(32).toString('hex'),
    completedAt: null,
  };
  core.store.withdrawalRequests.set(wr.id, wr);
  armTimer(core, wr.id, wr.expiresAt, () => refreshWithdrawalRequest(core, wr));
  return v0Ok(withdrawalRequestView(core, wr), 'Successfully created Withdrawal Request.');
}

export function getWithdrawalRequest({ core, project, id }: Ctx): Reply {
  const wr = owned(core.store.withdrawalRequests, project, id);
  if (!wr) return v0Error(404, 'Withdrawal Request not found.');
  refreshWithdrawalRequest(core, wr);
  return v0Ok(withdrawalRequestView(core, wr), 'Successfully retrieved Withdrawal Request.');
}

/** Moves a pending request past its expiry to `expired`, with its callback. */
export function refreshWithdrawalRequest(core: EmulatorCore, wr: WithdrawalRequestRecord): void {
  if (wr.status !== 'pending' || core.clock.now() < wr.expiresAt) return;
  wr.status = 'expired';
  disarmTimer(core, wr.id);
  notify(core, wr);
}

function notify(core: EmulatorCore, wr: WithdrawalRequestRecord): void {
  core.callbacks.send(
    'withdrawalRequest',
    wr.id,
    wr.status,
    wr.callbackUrl,
    withdrawalRequestView(core, wr),
  );
}

/**
 * The claim (LUD-03 callback): `k1` must match; `pr` must be an invoice for exactly the amount
 * (an amountless one is refused: guessing would hide a wallet bug). The wallet is checked here:
 * creation reserved nothing.
 */
export function claimWithdrawalRequest(
  core: EmulatorCore,
  id: string,
  k1: string | null,
  pr: string | null,
): LnurlResult {
  const wr = core.store.withdrawalRequests.get(id);
  if (!wr) return { status: 'ERROR', reason: 'Unknown withdrawal request' };
  refreshWithdrawalRequest(core, wr);
  if (!k1 || k1 !== wr.k1) return { status: 'ERROR', reason: 'Invalid k1' };
  if (wr.status === 'completed')
    return { status: 'ERROR', reason: 'Withdrawal request already claimed' };
  if (wr.status !== 'pending')
    return { status: 'ERROR', reason: `Withdrawal request is ${wr.status}` };
  if (!pr) return { status: 'ERROR', reason: 'pr (BOLT11 invoice) is required' };
  let amount: bigint | null;
  try {
    amount = decodeBolt11(pr).amountMsat;
  } catch (error) {
    return { status: 'ERROR', reason: `Invalid invoice: ${(error as Error).message}` };
  }
  if (amount === null) return { status: 'ERROR', reason: 'Amountless invoices are not accepted' };
  if (amount > BigInt(wr.amountMsat)) {
    return { status: 'ERROR', reason: `Invoice amount exceeds maxWithdrawable (${wr.amountMsat})` };
  }
  if (amount < BigInt(wr.amountMsat)) {
    return {
      status: 'ERROR',
      reason: `Invoice amount is below minWithdrawable (${wr.amountMsat})`,
    };
  }
  const project = core.store.project(wr.projectId);
  if (project.walletMsat < wr.amountMsat) {
    return { status: 'ERROR', reason: 'Insufficient funds in the project wallet' };
  }
  project.walletMsat -= wr.amountMsat;
  wr.status = 'completed';
  wr.completedAt = core.clock.now();
  disarmTimer(core, wr.id);
  notify(core, wr);
  return { status: 'OK' };
}

/** LUD-03 step 1: what the wallet may withdraw. */
export function withdrawInfo({ core, id }: Ctx): Reply {
  const wr = core.store.withdrawalRequests.get(id);
  if (!wr) return failure('Unknown withdrawal request');
  refreshWithdrawalRequest(core, wr);
  if (wr.status !== 'pending') return failure(`Withdrawal request is ${wr.status}`);
  return json(200, withdrawParams(core, wr));
}

/** LUD-03 step 2: the wallet hands in k1 and its invoice; the claim happens here. */
export function withdrawCallback({ core, id, query }: Ctx): Reply {
  const result = claimWithdrawalRequest(core, id, query.get('k1'), query.get('pr'));
  return outcome(result);
}
