/** Static charges: reusable LNURL-pay codes with an amount range and an optional slot cap. */

import { parseInput } from '../../parse.js';
import { type StaticCharge, staticCharge } from '../answers.js';
import {
  resourceIdInput,
  type StaticChargeBody,
  type StaticChargeInput,
  type StaticChargeUpdateBody,
  type StaticChargeUpdateInput,
  staticChargeInput,
  staticChargeUpdateInput,
} from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

/**
 * The send step: a body already parsed, by the calls below or by the server's own edge. An id
 * is checked here, where it goes into a path: it may come from a callback's body.
 */
export class StaticChargeSends {
  constructor(private readonly ctx: ApiContext) {}

  async create(body: StaticChargeBody): Promise<StaticCharge> {
    return this.ctx.transport.send({
      operation: 'staticCharges.create',
      method: 'POST',
      path: this.ctx.paths.staticChargesCreate,
      body,
      safety: 'unkeyed',
      data: staticCharge,
    });
  }

  async get(id: string): Promise<StaticCharge> {
    const safeId = parseInput(resourceIdInput, id, 'id');
    return this.ctx.transport.send({
      operation: 'staticCharges.get',
      method: 'GET',
      path: fillPath(this.ctx.paths.staticChargesGet, safeId),
      safety: 'read',
      data: staticCharge,
    });
  }

  /** Changes the given fields; the code (QR) stays the same. */
  async update(id: string, body: StaticChargeUpdateBody): Promise<StaticCharge> {
    const safeId = parseInput(resourceIdInput, id, 'id');
    return this.ctx.transport.send({
      operation: 'staticCharges.update',
      method: 'PATCH',
      path: fillPath(this.ctx.paths.staticChargesUpdate, safeId),
      body,
      safety: 'unkeyed',
      data: staticCharge,
    });
  }
}

/** The client's calls: each parses what the game hands it, then sends. */
export class StaticChargeCalls {
  readonly #send: StaticChargeSends;

  constructor(send: StaticChargeSends) {
    this.#send = send;
  }

  async create(input: StaticChargeInput): Promise<StaticCharge> {
    return this.#send.create(parseInput(staticChargeInput, input));
  }

  async get(id: string): Promise<StaticCharge> {
    return this.#send.get(id);
  }

  /** Changes the given fields; the code (QR) stays the same. */
  async update(id: string, input: StaticChargeUpdateInput): Promise<StaticCharge> {
    return this.#send.update(id, parseInput(staticChargeUpdateInput, input));
  }
}
