/**
 * Withdrawal requests: codes a player claims with a wallet. The code in `invoice.request`
 * is a bearer secret: whoever holds it can claim the funds.
 */

import { parseInput } from '../../parse.js';
import { type WithdrawalRequest, withdrawalRequest } from '../answers.js';
import {
  resourceIdInput,
  type WithdrawalRequestBody,
  type WithdrawalRequestInput,
  withdrawalRequestInput,
} from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

/** The send step: a body already parsed, by the calls below or by the server's own edge. */
export class WithdrawalRequestSends {
  constructor(private readonly ctx: ApiContext) {}

  /** Creates a request in status `pending`. Never re-sent once it may have been processed. */
  async create(body: WithdrawalRequestBody): Promise<WithdrawalRequest> {
    return this.ctx.transport.send({
      operation: 'withdrawalRequests.create',
      method: 'POST',
      path: this.ctx.paths.withdrawalRequestsCreate,
      body,
      safety: 'unkeyed',
      data: withdrawalRequest,
    });
  }

  /** The id is checked here, where it goes into a path: it may come from a callback's body. */
  async get(id: string): Promise<WithdrawalRequest> {
    const safeId = parseInput(resourceIdInput, id, 'id');
    return this.ctx.transport.send({
      operation: 'withdrawalRequests.get',
      method: 'GET',
      path: fillPath(this.ctx.paths.withdrawalRequestsGet, safeId),
      safety: 'read',
      data: withdrawalRequest,
    });
  }
}

/** The client's calls: each parses what the game hands it, then sends. */
export class WithdrawalRequestCalls {
  readonly #send: WithdrawalRequestSends;

  constructor(send: WithdrawalRequestSends) {
    this.#send = send;
  }

  /** Creates a request in status `pending`. Never re-sent once it may have been processed. */
  async create(input: WithdrawalRequestInput): Promise<WithdrawalRequest> {
    return this.#send.create(parseInput(withdrawalRequestInput, input));
  }

  async get(id: string): Promise<WithdrawalRequest> {
    return this.#send.get(id);
  }
}
