/**
 * Widget users: creation (idempotent on the service's side), point debits (deplete, keyed by
 * a UUID that every attempt re-sends), email changes and disclosure acceptance.
 */

import { parseInput } from '../../parse.js';
import {
  type DisclosureAcceptance,
  disclosureAcceptance,
  type PointTransfer,
  pointTransfer,
  type WidgetUser,
  widgetUser,
} from '../answers.js';
import {
  type DepleteInput,
  depleteInput,
  disclosureTypeIdsInput,
  updateEmailInput,
  userIdInput,
  type WidgetUserInput,
  widgetUserInput,
} from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

/** A transfer, with the idempotency key it was made under (generated when not given). */
export type DepleteResult = PointTransfer & { idempotencyKey: string };

export class WidgetUserCalls {
  constructor(private readonly ctx: ApiContext) {}

  /** Creates the user, or returns the existing one with this reference_id/email. */
  async create(input: WidgetUserInput): Promise<WidgetUser> {
    const body = parseInput(widgetUserInput, input);
    return this.ctx.transport.send({
      operation: 'widgetUsers.create',
      method: 'POST',
      path: this.ctx.paths.widgetUsersCreate,
      body,
      safety: 'unkeyed',
      data: widgetUser,
    });
  }

  /**
   * Debits points. Retried like a read, always with the same `idempotency_key`, so the
   * service applies it once. Throws InsufficientPointsError (TX3017) when the balance is short.
   */
  async deplete(input: DepleteInput): Promise<DepleteResult> {
    const body = parseInput(depleteInput, input);
    const transfer = await this.ctx.transport.send({
      operation: 'widgetUsers.deplete',
      method: 'POST',
      path: this.ctx.paths.widgetUsersDeplete,
      body,
      safety: 'keyed',
      idempotencyKey: body.idempotency_key,
      data: pointTransfer,
    });
    return { ...transfer, idempotencyKey: body.idempotency_key };
  }

  /** Changes the user's email (the only updatable field). */
  async update(userId: string, input: { email: string }): Promise<WidgetUser> {
    const id = parseInput(userIdInput, userId, 'userId');
    const body = parseInput(updateEmailInput, input);
    return this.ctx.transport.send({
      operation: 'widgetUsers.update',
      method: 'PATCH',
      path: fillPath(this.ctx.paths.widgetUsersUpdate, id),
      body,
      safety: 'unkeyed',
      data: widgetUser,
    });
  }

  /**
   * Records acceptance of the latest version of each disclosure type (2 terms, 3 privacy,
   * 6 EFT). Server-side only, and only when acceptance is collected outside the widget.
   */
  async acceptDisclosures(
    userId: string,
    typeIds: readonly number[],
  ): Promise<DisclosureAcceptance> {
    const id = parseInput(userIdInput, userId, 'userId');
    const acceptedDisclosureTypeIds = parseInput(disclosureTypeIdsInput, typeIds, 'typeIds');
    return this.ctx.transport.send({
      operation: 'widgetUsers.acceptDisclosures',
      method: 'POST',
      path: fillPath(this.ctx.paths.widgetUsersDisclosures, id),
      body: { acceptedDisclosureTypeIds },
      safety: 'unkeyed',
      data: disclosureAcceptance,
    });
  }
}
