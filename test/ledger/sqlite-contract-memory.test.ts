/**
 * The ledger contract on SqliteLedger ':memory:', inline (its default). A file on its worker
 * thread runs it in sqlite-contract-file.test.ts.
 */
import { SqliteLedger } from '../../src/ledger/index.js';
import { describeLedgerContract } from './contract.js';

describeLedgerContract('SqliteLedger :memory:, inline', async () => {
  const store = new SqliteLedger();
  return { store, cleanup: () => store.close() };
});
