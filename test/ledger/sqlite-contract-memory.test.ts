/** The ledger contract on SqliteLedger ':memory:', inline (the default) and on a worker thread. */
import { SqliteLedger } from '../../src/ledger/index.js';
import { describeLedgerContract } from './contract.js';

for (const worker of [false, true]) {
  describeLedgerContract(
    `SqliteLedger :memory:, ${worker ? 'worker thread' : 'inline'}`,
    async () => {
      const store = new SqliteLedger({ worker });
      return { store, cleanup: () => store.close() };
    },
  );
}
