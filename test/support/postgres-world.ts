/**
 * What the tests of game processes sharing one PostgreSQL ledger share: a throwaway server for
 * the file, a fresh emulator for each test, and what a test opened (ledgers, games) closed after
 * it, last first. Call it inside a describe; read its fields inside hooks and tests.
 */
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { quietLogger } from './game.js';
import { needPostgres } from './needs.js';
import { type PostgresServer, startPostgres } from './postgres.js';

export interface PostgresWorld {
  readonly pg: PostgresServer;
  readonly emulator: Emulator;
  /** Closed after each test, last first. */
  readonly closing: { close(): Promise<void> }[];
}

/** `beforeClosing` runs first after each test (say, to let held requests go). */
export function postgresWorld(beforeClosing?: () => unknown): PostgresWorld {
  let pg: PostgresServer | undefined;
  let emulator: Emulator | undefined;
  const closing: { close(): Promise<void> }[] = [];
  before(async function () {
    needPostgres(this);
    pg = await startPostgres({ durable: false });
  });
  after(async () => pg?.stop());
  beforeEach(async () => {
    emulator = await startEmulator({ logger: quietLogger });
  });
  afterEach(async () => {
    await beforeClosing?.();
    for (const c of closing.splice(0).reverse()) await c.close();
    await emulator?.close();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is started by the world's hooks`);
    return value;
  };
  return {
    get pg() {
      return started(pg, 'PostgreSQL');
    },
    get emulator() {
      return started(emulator, 'the emulator');
    },
    closing,
  };
}
