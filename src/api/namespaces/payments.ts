/**
 * Outgoing payments. `send` has no idempotency key on the service's side, so it is never
 * re-sent once it may have reached the service (see retry-policy.ts).
 */

import { parseInput } from '../../parse.js';
import { type Payment, payment } from '../answers.js';
import { type PaymentInput, paymentInput, resourceIdInput } from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

export class PaymentCalls {
  constructor(private readonly ctx: ApiContext) {}

  async send(input: PaymentInput): Promise<Payment> {
    const body = parseInput(paymentInput, input);
    return this.ctx.transport.send({
      operation: 'payments.send',
      method: 'POST',
      path: this.ctx.paths.paymentsSend,
      body,
      safety: 'unkeyed',
      data: payment,
    });
  }

  async get(id: string): Promise<Payment> {
    const safeId = parseInput(resourceIdInput, id, 'id');
    return this.ctx.transport.send({
      operation: 'payments.get',
      method: 'GET',
      path: fillPath(this.ctx.paths.paymentsGet, safeId),
      safety: 'read',
      data: payment,
    });
  }
}
