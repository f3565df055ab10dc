/**
 * Payments sent from the project's wallet. The contract shows no recipient fields, so any
 * extra fields (invoice, lnAddress, ...) are accepted and echoed, never checked. The wallet
 * is debited at once; the payment completes at once, or after `paymentDelayMs` in
 * `processing`. Each status change after creation is POSTed to callbackUrl.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { armTimer, type EmulatorCore, iso } from './core.js';
import { v0Error, v0Ok } from './envelopes.js';
import type { Reply } from './http.js';
import type { PaymentRecord, Project } from './store.js';
import { httpUrl, msatString, parse } from './validation.js';

const createBody = z.looseObject({
  amount: msatString,
  description: z.string().max(640),
  internalId: z.string().max(255),
  callbackUrl: httpUrl.nullish(),
});

const OWN_FIELDS = new Set(['amount', 'description', 'internalId', 'callbackUrl']);

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
    confirmedAt: processedAt,
  };
}

export function createPayment(core: EmulatorCore, project: Project, body: unknown): Reply {
  const parsed = parse(createBody, body);
  if (!parsed.ok) return v0Error(400, parsed.message);
  const input = parsed.value;
  const amountMsat = Number(input.amount);
  if (amountMsat < 1) return v0Error(400, 'amount must be at least 1 msat');
  if (project.walletMsat < amountMsat) {
    return v0Error(400, 'Insufficient wallet balance to complete this payment');
  }
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (!OWN_FIELDS.has(key)) extra[key] = value;
  const now = core.clock.now();
  const payment: PaymentRecord = {
    id: randomUUID(),
    projectId: project.id,
    amountMsat,
    description: input.description,
    internalId: input.internalId,
    callbackUrl: input.callbackUrl ?? null,
    status: 'processing',
    createdAt: now,
    processedAt: null,
    preimage: null,
    extra,
  };
  project.walletMsat -= amountMsat;
  core.store.payments.set(payment.id, payment);
  if (core.paymentDelayMs > 0) {
    armTimer(core, payment.id, now + core.paymentDelayMs, () => complete(core, payment));
  } else {
    complete(core, payment);
  }
  return v0Ok(paymentView(payment), 'Payment processed successfully.');
}

function complete(core: EmulatorCore, payment: PaymentRecord): void {
  payment.status = 'completed';
  payment.processedAt = core.clock.now();
  payment.preimage = randomBytes(32).toString('hex');
  core.callbacks.send(
    'payment',
    payment.id,
    payment.status,
    payment.callbackUrl,
    paymentView(payment),
  );
}

export function getPayment(core: EmulatorCore, project: Project, id: string): Reply {
  const payment = core.store.payments.get(id);
  if (!payment || payment.projectId !== project.id) return v0Error(404, 'Payment not found.');
  return v0Ok(paymentView(payment), 'Successfully retrieved Payment.');
}
