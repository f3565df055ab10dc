/**
 * Static charges: reusable LNURL-pay codes (LUD-06, with the LUD-09 message success action),
 * `active` at creation with 0 slots; each paid invoice in [minAmount, maxAmount] raises `slots`
 * and credits the wallet; after `allowedSlots` payments `inactive`, past `expiresAt` `expired`.
 * PATCH never changes the id or the code.
 */

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { decodeBolt11, encodeBolt11 } from './bolt11.js';
import { armTimer, disarmTimer, type EmulatorCore, iso, owned } from './core.js';
import { type Ctx, failure, json, outcome, type Reply, v0Error, v0Ok } from './http.js';
import { encodeLnurl, lnurlPaths } from './lnurl.js';
import type { StaticChargeRecord, StaticChargeStatus } from './store.js';
import { httpUrl, isoTimestamp, msatString, parse } from './validation.js';

export const SUCCESS_MESSAGE_MAX = 144;
/** Lifetime of the BOLT11 invoices issued by the LNURL-pay callback. */
export const CHARGE_INVOICE_EXPIRY_SEC = 600;

const fields = {
  minAmount: msatString,
  maxAmount: msatString,
  description: z.string().min(1).max(640),
  successMessage: z.string().max(SUCCESS_MESSAGE_MAX, 'must be at most 144 characters').nullish(),
  allowedSlots: z.number().int().positive().nullish(),
  internalId: z.string().max(255).nullish(),
  callbackUrl: httpUrl.nullish(),
  identifier: z
    .string()
    .regex(/^[a-z0-9._-]+$/i, 'may hold letters, digits, dot, dash and underscore')
    .nullish(),
  expiresAt: isoTimestamp.nullish(),
};

const createBody = z.object(fields);
const patchBody = z.strictObject(fields).omit({ identifier: true }).partial();

const codes = new WeakMap<StaticChargeRecord, string>();

export function staticChargeView(core: EmulatorCore, charge: StaticChargeRecord) {
  let request = codes.get(charge);
  if (!request) {
    request = encodeLnurl(`${core.baseUrl}${lnurlPaths.pay(charge.id)}`);
    codes.set(charge, request);
  }
  return {
    id: charge.id,
    unit: 'msats',
    slots: charge.slots,
    minAmount: String(charge.minAmountMsat),
    maxAmount: String(charge.maxAmountMsat),
    createdAt: iso(charge.createdAt),
    updatedAt: iso(charge.updatedAt),
    expiresAt: charge.expiresAt === null ? null : iso(charge.expiresAt),
    internalId: charge.internalId,
    description: charge.description,
    callbackUrl: charge.callbackUrl,
    allowedSlots: charge.allowedSlots,
    successMessage: charge.successMessage,
    identifier: charge.identifier,
    status: charge.status,
    invoice: { request, uri: `lightning:${request}` },
  };
}

/** LUD-06 metadata; its sha256 is the invoice's description hash. */
export function chargeMetadata(charge: StaticChargeRecord): string {
  return JSON.stringify([['text/plain', charge.description]]);
}

function statusOf(charge: StaticChargeRecord, now: number): StaticChargeStatus {
  if (charge.allowedSlots !== null && charge.slots >= charge.allowedSlots) return 'inactive';
  if (charge.expiresAt !== null && now >= charge.expiresAt) return 'expired';
  return 'active';
}

/** Brings the status in line with slots and time; a change is reported by callback. */
export function refreshStaticCharge(core: EmulatorCore, charge: StaticChargeRecord): void {
  const status = statusOf(charge, core.clock.now());
  if (status === charge.status) return;
  charge.status = status;
  charge.updatedAt = core.clock.now();
  notify(core, charge);
}

function notify(core: EmulatorCore, charge: StaticChargeRecord): void {
  core.callbacks.send(
    'staticCharge',
    charge.id,
    charge.status,
    charge.callbackUrl,
    staticChargeView(core, charge),
  );
}

function armExpiry(core: EmulatorCore, charge: StaticChargeRecord): void {
  if (charge.expiresAt === null) disarmTimer(core, charge.id);
  else armTimer(core, charge.id, charge.expiresAt, () => refreshStaticCharge(core, charge));
}

function checkAmounts(min: number, max: number): string | null {
  if (min < 1000) return 'minAmount must be at least 1000 msats (1 sat)';
  if (min > max) return 'minAmount must not exceed maxAmount';
  return null;
}

export function createStaticCharge({ core, project, body }: Ctx): Reply {
  const input = parse(createBody, body);
  const min = Number(input.minAmount);
  const max = Number(input.maxAmount);
  const problem = checkAmounts(min, max);
  if (problem) return v0Error(400, problem);
  const now = core.clock.now();
  const expiresAt = input.expiresAt ? Date.parse(input.expiresAt) : null;
  if (expiresAt !== null && expiresAt <= now)
    return v0Error(400, 'expiresAt must be in the future');
  const charge: StaticChargeRecord = {
    id: randomUUID(),
    projectId: project.id,
    minAmountMsat: min,
    maxAmountMsat: max,
    description: input.description,
    successMessage: input.successMessage ?? null,
    allowedSlots: input.allowedSlots ?? null,
    internalId: input.internalId ?? null,
    callbackUrl: input.callbackUrl ?? null,
    identifier: input.identifier ?? null,
    createdAt: now,
    updatedAt: now,
    expiresAt,
    slots: 0,
    status: 'active',
  };
  core.store.staticCharges.set(charge.id, charge);
  armExpiry(core, charge);
  return v0Ok(staticChargeView(core, charge), 'Successfully created Static Charge.');
}

export function getStaticCharge({ core, project, id }: Ctx): Reply {
  const charge = owned(core.store.staticCharges, project, id);
  if (!charge) return v0Error(404, 'Static Charge not found.');
  refreshStaticCharge(core, charge);
  return v0Ok(staticChargeView(core, charge), 'Successfully retrieved Static Charge.');
}

export function updateStaticCharge({ core, project, id, body }: Ctx): Reply {
  const charge = owned(core.store.staticCharges, project, id);
  if (!charge) return v0Error(404, 'Static Charge not found.');
  const { minAmount, maxAmount, expiresAt, ...rest } = parse(patchBody, body);
  const min = minAmount === undefined ? charge.minAmountMsat : Number(minAmount);
  const max = maxAmount === undefined ? charge.maxAmountMsat : Number(maxAmount);
  const problem = checkAmounts(min, max);
  if (problem) return v0Error(400, problem);
  charge.minAmountMsat = min;
  charge.maxAmountMsat = max;
  // The other fields have the record's names: each one given replaces the record's.
  Object.assign(
    charge,
    Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
  );
  if (expiresAt !== undefined) charge.expiresAt = expiresAt === null ? null : Date.parse(expiresAt);
  charge.updatedAt = core.clock.now();
  // A PATCH may lift a charge out of inactive/expired (more slots, a later expiry) or into them.
  charge.status = statusOf(charge, core.clock.now());
  armExpiry(core, charge);
  return v0Ok(staticChargeView(core, charge), 'Successfully updated Static Charge.');
}

export type IssueResult =
  | { status: 'OK'; pr: string; successMessage: string | null }
  | { status: 'ERROR'; reason: string };

/** LUD-06 callback: a BOLT11 invoice for `amountMsat`, remembered until paid. */
export function issueChargeInvoice(
  core: EmulatorCore,
  id: string,
  amountMsat: number,
): IssueResult {
  const charge = core.store.staticCharges.get(id);
  if (!charge) return { status: 'ERROR', reason: 'Unknown static charge' };
  refreshStaticCharge(core, charge);
  if (charge.status !== 'active')
    return { status: 'ERROR', reason: `Static charge is ${charge.status}` };
  if (
    !Number.isSafeInteger(amountMsat) ||
    amountMsat < charge.minAmountMsat ||
    amountMsat > charge.maxAmountMsat
  ) {
    return {
      status: 'ERROR',
      reason: `Amount must be between ${charge.minAmountMsat} and ${charge.maxAmountMsat} msats`,
    };
  }
  const now = core.clock.now();
  const preimage = randomBytes(32);
  const paymentHash = createHash('sha256').update(preimage).digest();
  const pr = encodeBolt11({
    amountMsat,
    paymentHash,
    descriptionHash: createHash('sha256').update(chargeMetadata(charge), 'utf8').digest(),
    expirySec: CHARGE_INVOICE_EXPIRY_SEC,
    timestamp: Math.floor(now / 1000),
    key: core.nodeKey,
  });
  core.store.invoices.set(pr.toLowerCase(), {
    pr,
    preimage: preimage.toString('hex'),
    chargeId: charge.id,
    amountMsat,
    expiresAt: now + CHARGE_INVOICE_EXPIRY_SEC * 1000,
    paidAt: null,
  });
  return { status: 'OK', pr, successMessage: charge.successMessage };
}

export type PayResult =
  | { status: 'OK'; chargeId: string; amountMsat: number; preimage: string }
  | { status: 'ERROR'; reason: string };

/** Settles an invoice the emulator issued: the payer's side, which no real node can do here. */
export function payInvoice(core: EmulatorCore, pr: string): PayResult {
  const text = pr
    .trim()
    .replace(/^lightning:/i, '')
    .toLowerCase();
  const invoice = core.store.invoices.get(text);
  if (!invoice) {
    try {
      decodeBolt11(text);
    } catch (error) {
      return { status: 'ERROR', reason: `Invalid invoice: ${(error as Error).message}` };
    }
    return { status: 'ERROR', reason: 'Unknown invoice: the emulator did not issue it' };
  }
  if (invoice.paidAt !== null) return { status: 'ERROR', reason: 'Invoice already paid' };
  const now = core.clock.now();
  if (now >= invoice.expiresAt) return { status: 'ERROR', reason: 'Invoice expired' };
  const charge = core.store.staticCharges.get(invoice.chargeId);
  if (!charge) return { status: 'ERROR', reason: 'Unknown static charge' };
  refreshStaticCharge(core, charge);
  if (charge.status !== 'active')
    return { status: 'ERROR', reason: `Static charge is ${charge.status}` };
  invoice.paidAt = now;
  charge.slots += 1;
  charge.updatedAt = now;
  charge.status = statusOf(charge, now);
  if (charge.status !== 'active') disarmTimer(core, charge.id);
  core.store.project(charge.projectId).walletMsat += invoice.amountMsat;
  notify(core, charge);
  return {
    status: 'OK',
    chargeId: charge.id,
    amountMsat: invoice.amountMsat,
    preimage: invoice.preimage,
  };
}

/** The dev wallet's "Pay": an invoice through the LNURL-pay path, then paid. */
export function payStaticCharge(core: EmulatorCore, id: string, amountMsat?: number): PayResult {
  const charge = core.store.staticCharges.get(id);
  if (!charge) return { status: 'ERROR', reason: 'Unknown static charge' };
  const issued = issueChargeInvoice(core, id, amountMsat ?? charge.minAmountMsat);
  if (issued.status === 'ERROR') return issued;
  return payInvoice(core, issued.pr);
}

/** LUD-06 step 1: what the payer may send. */
export function payInfo({ core, id }: Ctx): Reply {
  const charge = core.store.staticCharges.get(id);
  if (!charge) return failure('Unknown static charge');
  refreshStaticCharge(core, charge);
  if (charge.status !== 'active') {
    return failure(`Static charge is ${charge.status}`);
  }
  return json(200, {
    tag: 'payRequest',
    callback: `${core.baseUrl}${lnurlPaths.payCallback(id)}`,
    minSendable: charge.minAmountMsat,
    maxSendable: charge.maxAmountMsat,
    metadata: chargeMetadata(charge),
    commentAllowed: 0,
  });
}

/** LUD-06 step 2: an invoice for the chosen amount. */
export function payCallback({ core, id, query }: Ctx): Reply {
  const amount = query.get('amount');
  if (!amount || !/^\d+$/.test(amount)) {
    return failure('amount (msat) is required');
  }
  const result = issueChargeInvoice(core, id, Number(amount));
  if (result.status === 'ERROR') return outcome(result);
  return json(200, {
    pr: result.pr,
    routes: [],
    ...(result.successMessage
      ? { successAction: { tag: 'message', message: result.successMessage } }
      : {}),
  });
}
