// @zbd/node ships types, but its package.json `exports` hides them from NodeNext resolution;
// the benchmark needs only this much of it.
declare module '@zbd/node' {
  export class zbd {
    constructor(apiKey: string, apiBaseUrl?: string);
    getWithdrawalRequest(withdrawalRequestId: string): Promise<unknown>;
  }
}
