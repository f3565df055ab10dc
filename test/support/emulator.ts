/**
 * The one emulator set-up of the suite: a fresh emulator per test, closed after it. Suites
 * that need more around it (an API client, a game server) build on this box.
 */
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/index.js';

export interface EmulatorBox {
  /** The current test's emulator (set before each test). */
  emu: Emulator;
}

/**
 * Starts an emulator before each test of the enclosing `describe` and closes it after. Pass
 * a function to build the options per test (a fresh `ManualClock`, say).
 */
export function useEmulator(options: EmulatorOptions | (() => EmulatorOptions) = {}): EmulatorBox {
  const box = {} as EmulatorBox;
  beforeEach(async () => {
    // Quiet unless a test listens: some tests fail callbacks on purpose.
    const given = typeof options === 'function' ? options() : options;
    box.emu = await startEmulator({ logger: { warn() {} }, ...given });
  });
  afterEach(async () => {
    await box.emu?.close();
  });
  return box;
}
