/**
 * End-to-end setup: a fresh emulator on port 0 and the real `PaymentsApi` pointed at it, per
 * test, both closed afterwards. Backoff is 1 ms so that retries cost nothing in time.
 */

import { expect } from 'chai';
import { PaymentsApi, type PaymentsApiOptions } from '../../src/api/client.js';
import { PaymentsApiError } from '../../src/api/errors.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/index.js';
import type { LightningError } from '../../src/errors.js';

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

/**
 * The error a call failed with; fails the test when it succeeded or threw something other
 * than `type` (default PaymentsApiError, what a call that reached the network throws).
 */
export async function failure(call: () => Promise<unknown>): Promise<PaymentsApiError>;
export async function failure<E extends LightningError>(
  call: () => Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E>;
export async function failure(
  call: () => Promise<unknown>,
  type: abstract new (...args: never[]) => LightningError = PaymentsApiError,
): Promise<LightningError> {
  let result: unknown;
  try {
    result = await call();
  } catch (err) {
    expect(err).to.be.instanceOf(type);
    return err as LightningError;
  }
  throw new Error(`expected the call to fail, it returned ${JSON.stringify(result)}`);
}

/** Requests that reached the emulator on the API routes (not /_emulator, not /lnurl). */
export function apiRequests(emu: Emulator): number {
  return emu.control.count('*', /^\/(v0|api)\//);
}
