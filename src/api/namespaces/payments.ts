/**
 * Outgoing payments. `send` has no idempotency key on the service's side, so it is never
 * re-sent once it may have reached the service (see retry-policy.ts).
 */

import { parseInput } from '../../parse.js';
import { type Payment, payment } from '../answers.js';
import { type PaymentBody, type PaymentInput, paymentInput, resourceIdInput } from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

/** The send step: a body already parsed, by the calls below or by the server's own edge. */
export class PaymentSends {
  constructor(private readonly ctx: ApiContext) {}

  async send(body: PaymentBody): Promise<Payment> {
    return this.ctx.transport.send({
      operation: 'payments.send',
      method: 'POST',
      path: this.ctx.paths.paymentsSend,
      body,
      safety: 'unkeyed',
      data: payment,
    });
  }

  /** The id is checked here, where it goes into a path: it may come from a callback's body. */
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

/** The client's calls: each parses what the game hands it, then sends. */
export class PaymentCalls {
  readonly #send: PaymentSends;

  constructor(send: PaymentSends) {
    this.#send = send;
  }

  async send(input: PaymentInput): Promise<Payment> {
    return this.#send.send(parseInput(paymentInput, input));
  }

  async get(id: string): Promise<Payment> {
    return this.#send.get(id);
  }
}
