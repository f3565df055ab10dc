/** The project's wallet: `GET /v0/wallet`. Also the cheapest way to test a key. */
import { type Wallet, wallet } from '../answers.js';
import type { ApiContext } from './context.js';

export class WalletCalls {
  constructor(private readonly ctx: ApiContext) {}

  /** The wallet; `balance` is in satoshis. */
  async get(): Promise<Wallet> {
    return this.ctx.transport.send({
      operation: 'wallet.get',
      method: 'GET',
      path: this.ctx.paths.wallet,
      safety: 'read',
      data: wallet,
    });
  }
}
