/**
 * The ledger contract on a SqliteLedger file on its worker thread (a file's default). The
 * transport and the database are independent: ':memory:' inline (its default) runs the same
 * contract in sqlite-contract-memory.test.ts, so each transport and each open path runs it once.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLedger } from '../../src/ledger/index.js';
import { describeLedgerContract } from './contract.js';

// On tmpfs where there is one: every commit fsyncs (synchronous=FULL), and the contract is about
// what the store answers, not what a disk keeps (sqlite.test.ts's crash tests are), so a disk
// only adds waits. The file, its WAL and its locks are the same there.
const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

async function tempDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(base, 'ledger-test-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

// Each test starts a thread (some 60 ms of CPU): the inputs the core refuses before any driver
// call run one case per family here, every case on ':memory:' (the same driver and core).
describeLedgerContract(
  'SqliteLedger file, worker thread',
  async () => {
    const { dir, remove } = await tempDir();
    const store = new SqliteLedger({ path: join(dir, 'ledger.sqlite') });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await remove();
      },
    };
  },
  { everyParseCase: false },
);
