/**
 * The service's utility reads: the addresses its callbacks come from (`GET /v0/prod-ips`), and
 * whether a player's IP is in a region it serves (`GET /v0/is-supported-region/{ip}`).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseInput } from '../../parse.js';
import { type ProdIps, prodIps, type RegionSupport, regionSupport } from '../answers.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

const ipInput = z.string().refine((ip) => isIP(ip) !== 0, 'must be an IPv4 or IPv6 address');

export class UtilityCalls {
  constructor(private readonly ctx: ApiContext) {}

  /** The addresses the service sends callbacks from. */
  async prodIps(): Promise<ProdIps> {
    return this.ctx.transport.send({
      operation: 'utility.prodIps',
      method: 'GET',
      path: this.ctx.paths.prodIps,
      safety: 'read',
      data: prodIps,
    });
  }

  /** Whether the service serves the region of `ip` (a player's address). */
  async isSupportedRegion(ip: string): Promise<RegionSupport> {
    const address = parseInput(ipInput, ip, 'ip');
    return this.ctx.transport.send({
      operation: 'utility.isSupportedRegion',
      method: 'GET',
      path: fillPath(this.ctx.paths.isSupportedRegion, address),
      safety: 'read',
      data: regionSupport,
    });
  }
}
