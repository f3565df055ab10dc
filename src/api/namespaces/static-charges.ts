/** Static charges: reusable LNURL-pay codes with an amount range and an optional slot cap. */

import { parseInput } from '../../parse.js';
import { type StaticCharge, staticCharge } from '../answers.js';
import {
  resourceIdInput,
  type StaticChargeInput,
  type StaticChargeUpdateInput,
  staticChargeInput,
  staticChargeUpdateInput,
} from '../inputs.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

export class StaticChargeCalls {
  constructor(private readonly ctx: ApiContext) {}

  async create(input: StaticChargeInput): Promise<StaticCharge> {
    const body = parseInput(staticChargeInput, input);
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
  async update(id: string, input: StaticChargeUpdateInput): Promise<StaticCharge> {
    const safeId = parseInput(resourceIdInput, id, 'id');
    const body = parseInput(staticChargeUpdateInput, input);
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
