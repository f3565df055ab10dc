/**
 * Payments to Lightning addresses (LUD-16, `name@domain`): the service resolves the address,
 * fetches an invoice from the recipient's wallet and pays it from the project's wallet.
 * `sendPayment` has no idempotency key on the service's side, so it is never re-sent once it
 * may have reached the service (see retry-policy.ts): a lost answer is for the caller to
 * resolve, by callback or by `payments.get` once the payment's id is known.
 */

import { parseInput } from '../../parse.js';
import {
  type LnAddressValidation,
  lnAddressValidation,
  type Payment,
  payment,
} from '../answers.js';
import {
  type CallLimits,
  callLimits,
  type Limits,
  type LnAddressPaymentBody,
  type LnAddressPaymentInput,
  lnAddress,
  lnAddressPaymentInput,
} from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

/** The send step: input already parsed, by the calls below or by the server's own edge. */
export class LnAddressSends {
  constructor(private readonly ctx: ApiContext) {}

  /** Pays `amount` msats to `lnAddress`. Answers the payment, usually `processing`. */
  async sendPayment(body: LnAddressPaymentBody): Promise<Payment> {
    return this.ctx.transport.send({
      operation: 'lnAddress.sendPayment',
      method: 'POST',
      path: this.ctx.paths.lnAddressSendPayment,
      body,
      safety: 'unkeyed',
      data: payment,
    });
  }

  /** `address` as the `lnAddress` schema returns it (lower case, one path segment). */
  async validate(address: string, limits: Limits = {}): Promise<LnAddressValidation> {
    return this.ctx.transport.send({
      operation: 'lnAddress.validate',
      method: 'GET',
      path: fillPath(this.ctx.paths.lnAddressValidate, address),
      safety: 'read',
      data: lnAddressValidation,
      ...limits,
    });
  }
}

/** The client's calls: each parses what the game hands it, then sends. */
export class LnAddressCalls {
  readonly #send: LnAddressSends;

  constructor(send: LnAddressSends) {
    this.#send = send;
  }

  /** Pays `amount` msats to `lnAddress`. Answers the payment, usually `processing`. */
  async sendPayment(input: LnAddressPaymentInput): Promise<Payment> {
    return this.#send.sendPayment(parseInput(lnAddressPaymentInput, input));
  }

  /**
   * Whether the service can pay `address` (it resolves it); `valid` is false when it cannot.
   * The service asks the address's own server, which may be slow or hang: `limits` bounds this
   * call (`{ timeoutMs: 3_000, maxRetries: 0 }`) without changing the client's other calls.
   */
  async validate(address: string, limits?: CallLimits): Promise<LnAddressValidation> {
    const safe = parseInput(lnAddress, address, 'address');
    return this.#send.validate(safe, parseInput(callLimits, limits, 'limits'));
  }
}
