/** The ledger contract on a SqliteLedger file, on its worker thread (the default) and inline. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLedger } from '../../src/ledger/index.js';
import { describeLedgerContract } from './contract.js';

async function tempDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ledger-test-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

for (const worker of [true, false]) {
  describeLedgerContract(`SqliteLedger file, ${worker ? 'worker thread' : 'inline'}`, async () => {
    const { dir, remove } = await tempDir();
    const store = new SqliteLedger({ path: join(dir, 'ledger.sqlite'), worker });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await remove();
      },
    };
  });
}
