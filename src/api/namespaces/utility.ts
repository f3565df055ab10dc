/**
 * The service's utility reads: the addresses its callbacks come from (`GET /v0/prod-ips`),
 * whether a player's IP is in a region it serves (`GET /v0/is-supported-region/{ip}`), and the
 * price of one bitcoin in US dollars (`GET /v0/btcusd`).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseInput } from '../../parse.js';
import {
  type BtcUsdPrice,
  btcUsdPrice,
  type ProdIps,
  prodIps,
  type RegionSupport,
  regionSupport,
} from '../answers.js';
import { fillPath } from '../paths.js';
import type { ApiContext } from './context.js';

const ipInput = z.string().refine((ip) => isIP(ip) !== 0, 'must be an IPv4 or IPv6 address');

/** The send step: input already parsed, by the calls below or by the server's own edge. */
export class UtilitySends {
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

  /** `ip` as node's `isIP` accepts it (the server reads addresses only that way). */
  async isSupportedRegion(ip: string): Promise<RegionSupport> {
    return this.ctx.transport.send({
      operation: 'utility.isSupportedRegion',
      method: 'GET',
      path: fillPath(this.ctx.paths.isSupportedRegion, ip),
      safety: 'read',
      data: regionSupport,
    });
  }

  /** The price of one bitcoin in US dollars, and when the service took it (epoch ms). */
  async btcUsd(): Promise<BtcUsdPrice> {
    return this.ctx.transport.send({
      operation: 'utility.btcUsd',
      method: 'GET',
      path: this.ctx.paths.btcUsd,
      safety: 'read',
      data: btcUsdPrice,
    });
  }
}

/** The client's calls: each parses what the game hands it, then sends. */
export class UtilityCalls {
  readonly #send: UtilitySends;

  constructor(send: UtilitySends) {
    this.#send = send;
  }

  /** The addresses the service sends callbacks from. */
  async prodIps(): Promise<ProdIps> {
    return this.#send.prodIps();
  }

  /** Whether the service serves the region of `ip` (a player's address). */
  async isSupportedRegion(ip: string): Promise<RegionSupport> {
    return this.#send.isSupportedRegion(parseInput(ipInput, ip, 'ip'));
  }

  /** The price of one bitcoin in US dollars, and when the service took it (epoch ms). */
  async btcUsd(): Promise<BtcUsdPrice> {
    return this.#send.btcUsd();
  }
}
