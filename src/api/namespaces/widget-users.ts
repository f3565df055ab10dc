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
  type DepleteBody,
  type DepleteInput,
  depleteInput,
  disclosureTypeIdsInput,
  type UpdateEmailBody,
  updateEmailInput,
  userIdInput,
  type WidgetUserBody,
  type WidgetUserInput,
  widgetUserInput,
} from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

/** A transfer, with the idempotency key it was made under (generated when not given). */
export type DepleteResult = PointTransfer & { idempotencyKey: string };

/**
 * The send step: a body already parsed, by the calls below or by the server's own edge. A user
 * id is checked here, where it goes into a path: it may come from the game's `widgetUser`.
 */
export class WidgetUserSends {
  constructor(private readonly ctx: ApiContext) {}

  /** Creates the user, or returns the existing one with this reference_id/email. */
  async create(body: WidgetUserBody): Promise<WidgetUser> {
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
  async deplete(body: DepleteBody): Promise<DepleteResult> {
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
  async update(userId: string, body: UpdateEmailBody): Promise<WidgetUser> {
    const id = parseInput(userIdInput, userId, 'userId');
    return this.ctx.transport.send({
      operation: 'widgetUsers.update',
      method: 'PATCH',
      path: fillPath(this.ctx.paths.widgetUsersUpdate, id),
      body,
      safety: 'unkeyed',
      data: widgetUser,
    });
  }

  /** `typeIds` as `disclosureTypeIdsInput` returns them (known types, each once). */
  async acceptDisclosures(
    userId: string,
    typeIds: readonly number[],
  ): Promise<DisclosureAcceptance> {
    const id = parseInput(userIdInput, userId, 'userId');
    return this.ctx.transport.send({
      operation: 'widgetUsers.acceptDisclosures',
      method: 'POST',
      path: fillPath(this.ctx.paths.widgetUsersDisclosures, id),
      body: { acceptedDisclosureTypeIds: typeIds },
      safety: 'unkeyed',
      data: disclosureAcceptance,
    });
  }
}

/** The client's calls: each parses what the game hands it, then sends. */
export class WidgetUserCalls {
  readonly #send: WidgetUserSends;

  constructor(send: WidgetUserSends) {
    this.#send = send;
  }

  /** Creates the user, or returns the existing one with this reference_id/email. */
  async create(input: WidgetUserInput): Promise<WidgetUser> {
    return this.#send.create(parseInput(widgetUserInput, input));
  }

  /**
   * Debits points. Retried like a read, always with the same `idempotency_key`, so the
   * service applies it once. Throws InsufficientPointsError (TX3017) when the balance is short.
   */
  async deplete(input: DepleteInput): Promise<DepleteResult> {
    return this.#send.deplete(parseInput(depleteInput, input));
  }

  /** Changes the user's email (the only updatable field). */
  async update(userId: string, input: { email: string }): Promise<WidgetUser> {
    return this.#send.update(userId, parseInput(updateEmailInput, input));
  }

  /**
   * Records acceptance of the latest version of each disclosure type (2 terms, 3 privacy,
   * 6 EFT). Server-side only, and only when acceptance is collected outside the widget.
   */
  async acceptDisclosures(
    userId: string,
    typeIds: readonly number[],
  ): Promise<DisclosureAcceptance> {
    return this.#send.acceptDisclosures(
      userId,
      parseInput(disclosureTypeIdsInput, typeIds, 'typeIds'),
    );
  }
}
