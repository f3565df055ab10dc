/**
 * Withdrawal requests: codes a player claims with a wallet. The code in `invoice.request`
 * is a bearer secret: whoever holds it can claim the funds.
 */

import { parseInput } from '../../parse.js';
import { type WithdrawalRequest, withdrawalRequest } from '../answers.js';
import { resourceIdInput, type WithdrawalRequestInput, withdrawalRequestInput } from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

export class WithdrawalRequestCalls {
  constructor(private readonly ctx: ApiContext) {}

  /** Creates a request in status `pending`. Never re-sent once it may have been processed. */
  async create(input: WithdrawalRequestInput): Promise<WithdrawalRequest> {
    const body = parseInput(withdrawalRequestInput, input);
    return this.ctx.transport.send({
      operation: 'withdrawalRequests.create',
      method: 'POST',
      path: this.ctx.paths.withdrawalRequestsCreate,
      body,
      safety: 'unkeyed',
      data: withdrawalRequest,
    });
  }

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
