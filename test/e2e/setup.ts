/**
 * End-to-end setup: a fresh emulator on port 0 and the real `PaymentsApi` pointed at it, per
 * test, both closed afterwards. Backoff is 1 ms so that retries cost nothing in time.
 */

import { expect } from 'chai';
import { PaymentsApi, type PaymentsApiOptions } from '../../src/api/client.js';
import { PaymentsApiError } from '../../src/api/errors.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/index.js';

export interface E2E {
  emu: Emulator;
  api: PaymentsApi;
  /** Another client on the same emulator (other key, other options); closed after the test. */
  client(options?: Partial<PaymentsApiOptions>): PaymentsApi;
}

export function useClientAndEmulator(options: EmulatorOptions | (() => EmulatorOptions) = {}): E2E {
  const extra: PaymentsApi[] = [];
  const box = {
    client(more: Partial<PaymentsApiOptions> = {}) {
      const api = new PaymentsApi({
        apiKey: box.emu.apiKey,
        baseUrl: box.emu.url,
        retry: { baseDelayMs: 1 },
        ...more,
      });
      extra.push(api);
      return api;
    },
  } as E2E;
  beforeEach(async () => {
    box.emu = await startEmulator(typeof options === 'function' ? options() : options);
    box.api = new PaymentsApi({
      apiKey: box.emu.apiKey,
      baseUrl: box.emu.url,
      retry: { baseDelayMs: 1 },
    });
  });
  afterEach(async () => {
    await Promise.all([box.api.close(), ...extra.splice(0).map((api) => api.close())]);
    await box.emu.close();
  });
  return box;
}

/** The error a call failed with; fails the test when it succeeded or threw something else. */
export async function failure(call: () => Promise<unknown>): Promise<PaymentsApiError> {
  let result: unknown;
  try {
    result = await call();
  } catch (err) {
    expect(err).to.be.instanceOf(PaymentsApiError);
    return err as PaymentsApiError;
  }
  throw new Error(`expected the call to fail, it returned ${JSON.stringify(result)}`);
}

/** Requests that reached the emulator on the API routes (not /_emulator, not /lnurl). */
export function apiRequests(emu: Emulator): number {
  return emu.control.count('*', /^\/(v0|api)\//);
}
