/**
 * Every store's constructor refuses bad options with the package's own error (issue 23,
 * finding 4): a ConfigurationError, a LightningError with a stable code, naming the option.
 */
import { expect } from 'chai';
import { ConfigurationError, LightningError } from '../../src/errors.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';

function refusal(make: () => unknown): ConfigurationError {
  try {
    make();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigurationError).and.instanceOf(LightningError);
    expect((err as LightningError).code).to.equal('LN_CONFIGURATION');
    return err as ConfigurationError;
  }
  throw new Error('expected the constructor to refuse');
}

describe('ledger stores: bad options are ConfigurationErrors', () => {
  it('SqliteLedger', () => {
    expect(refusal(() => new SqliteLedger({ busyTimeoutMs: -1 })).field).to.include(
      'busyTimeoutMs',
    );
    expect(refusal(() => new SqliteLedger({ path: 42 as never })).field).to.include('path');
  });

  it('PostgresLedger (nothing connects)', () => {
    const at = 'postgres://127.0.0.1:1/none';
    expect(refusal(() => new PostgresLedger(at, { schema: 'bad"name' })).field).to.include(
      'schema',
    );
    expect(refusal(() => new PostgresLedger(at, { durability: 'off' as never })).field).to.include(
      'durability',
    );
    const client = { connect: () => {}, query: () => {} };
    expect(refusal(() => new PostgresLedger(client as never)).field).to.include('connection');
  });
});
