/**
 * End-to-end setup: the suite's emulator per test (test/support/emulator.ts) and the real
 * `PaymentsApi` pointed at it, closed before the emulator. Backoff is 1 ms so that retries
 * cost nothing in time.
 */

import { expect } from 'chai';
import { PaymentsApi, type PaymentsApiOptions } from '../../src/api/client.js';
import { PaymentsApiError } from '../../src/api/errors.js';
import type { Emulator, EmulatorOptions } from '../../src/emulator/index.js';
import type { LightningError } from '../../src/errors.js';
import { type EmulatorBox, useEmulator } from '../support/emulator.js';

export interface E2E extends EmulatorBox {
  api: PaymentsApi;
  /** Another client on the same emulator (other key, other options); closed after the test. */
  client(options?: Partial<PaymentsApiOptions>): PaymentsApi;
}

export function useClientAndEmulator(options: EmulatorOptions | (() => EmulatorOptions) = {}): E2E {
  const clients: PaymentsApi[] = [];
  // Registered before useEmulator's hooks: mocha runs afterEach hooks in order, so the
  // clients close before their emulator does.
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((api) => api.close()));
  });
  const box = useEmulator(options) as E2E;
  box.client = (more = {}) => {
    const api = new PaymentsApi({
      apiKey: box.emu.apiKey,
      baseUrl: box.emu.url,
      retry: { baseDelayMs: 1 },
      ...more,
    });
    clients.push(api);
    return api;
  };
  beforeEach(() => {
    box.api = box.client();
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
