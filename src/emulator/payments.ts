/**
 * Payments from the project's wallet: to a BOLT11 invoice (`POST /v0/payments`) or a Lightning
 * address (ln-address.ts). Unknown recipient fields are echoed, never checked. The wallet is
 * debited at once; the payment completes at once or after `paymentDelayMs`; one whose recipient
 * cannot be paid ends `failed`, refunded. Each later status change is POSTed to callbackUrl.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { armTimer, type EmulatorCore, iso, owned } from './core.js';
import { type Ctx, type Reply, v0Error, v0Ok } from './http.js';
import type { PaymentRecord, Project } from './store.js';
import { httpUrl, msatString, parse } from './validation.js';

const createBody = z.looseObject({
  amount: msatString,
  description: z.string().max(640),
  internalId: z.string().max(255),
  callbackUrl: httpUrl.nullish(),
});

const OWN_FIELDS = new Set(['amount', 'description', 'internalId', 'callbackUrl']);

export const INSUFFICIENT_BALANCE = 'Insufficient wallet balance to complete this payment';

export function paymentView(payment: PaymentRecord) {
  const processedAt = payment.processedAt === null ? null : iso(payment.processedAt);
  return {
    ...payment.extra,
    id: payment.id,
    unit: 'msats',
    amount: String(payment.amountMsat),
    fee: '0',
    status: payment.status,
    description: payment.description,
    internalId: payment.internalId,
    callbackUrl: payment.callbackUrl,
    invoice: payment.extra.invoice ?? null,
    preimage: payment.preimage,
    createdAt: iso(payment.createdAt),
    processedAt,
    confirmedAt: payment.status === 'completed' ? processedAt : null,
  };
}

export function createPayment({ core, project, body }: Ctx): Reply {
  const input = parse(createBody, body);
  const amountMsat = Number(input.amount);
  if (amountMsat < 1) return v0Error(400, 'amount must be at least 1 msat');
  if (project.walletMsat < amountMsat) return v0Error(400, INSUFFICIENT_BALANCE);
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (!OWN_FIELDS.has(key)) extra[key] = value;
  const payment = startPayment(core, project, {
    amountMsat,
    description: input.description,
    internalId: input.internalId,
    callbackUrl: input.callbackUrl ?? null,
    extra,
    lnAddress: null,
    fails: false,
  });
  return v0Ok(paymentView(payment), 'Payment processed successfully.');
}

export type NewPayment = Pick<
  PaymentRecord,
  'amountMsat' | 'description' | 'internalId' | 'callbackUrl' | 'extra' | 'lnAddress' | 'fails'
>;

/** Debits the wallet (the caller checked the balance), records the payment, and completes it. */
export function startPayment(
  core: EmulatorCore,
  project: Project,
  fields: NewPayment,
): PaymentRecord {
  const now = core.clock.now();
  const payment: PaymentRecord = {
    ...fields,
    id: randomUUID(),
    projectId: project.id,
    status: 'processing',
    createdAt: now,
    processedAt: null,
    preimage: null,
  };
  project.walletMsat -= payment.amountMsat;
  core.store.payments.set(payment.id, payment);
  if (core.paymentDelayMs > 0) {
    armTimer(core, payment.id, now + core.paymentDelayMs, () => finish(core, payment));
  } else {
    finish(core, payment);
  }
  return payment;
}

function finish(core: EmulatorCore, payment: PaymentRecord): void {
  payment.processedAt = core.clock.now();
  if (payment.fails) {
    payment.status = 'failed';
    const project = core.store.projects.get(payment.projectId);
    if (project) project.walletMsat += payment.amountMsat;
  } else {
    payment.status = 'completed';
    payment.preimage = randomBytes(32).toString('hex');
  }
  core.callbacks.send(
    'payment',
    payment.id,
    payment.status,
    payment.callbackUrl,
    paymentView(payment),
  );
}

export function getPayment({ core, project, id }: Ctx): Reply {
  const payment = owned(core.store.payments, project, id);
  if (!payment) return v0Error(404, 'Payment not found.');
  return v0Ok(paymentView(payment), 'Successfully retrieved Payment.');
}
