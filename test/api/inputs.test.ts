import { expect } from 'chai';
import { InvalidArgumentError, PaymentsApi } from '../../src/api/index.js';
import { FakeService, ok, sampleWithdrawal } from '../support/fake-service.js';

describe('PaymentsApi: bad arguments are refused before anything is sent', () => {
  let service: FakeService;
  let api: PaymentsApi;

  before(async () => {
    service = await new FakeService().start();
    service.always(ok(sampleWithdrawal));
    api = new PaymentsApi({ apiKey: 'k', baseUrl: service.url });
  });
  after(async () => {
    await api.close();
    await service.close();
  });

  async function refused(call: () => Promise<unknown>, field: string, problem?: RegExp) {
    const before = service.requests.length;
    let caught: unknown;
    try {
      await call();
    } catch (err) {
      caught = err;
    }
    expect(caught, 'expected InvalidArgumentError').to.be.instanceOf(InvalidArgumentError);
    const error = caught as InvalidArgumentError;
    expect(error.field).to.equal(field);
    expect(error.code).to.equal('LN_INVALID_ARGUMENT');
    if (problem) expect(error.message).to.match(problem);
    expect(service.requests.length, 'nothing may reach the service').to.equal(before);
  }

  const badAmounts: [string, unknown][] = [
    ['a float', 1.5],
    ['a negative number', -1000],
    ['zero', 0],
    ['zero as text', '0'],
    ['a negative bigint', -5n],
    ['a decimal string', '10.5'],
    ['a signed string', '+100'],
    ['an exponent', '1e6'],
    ['spaces', ' 1000'],
    ['an empty string', ''],
    ['an unsafe integer', 2 ** 60],
    ['more than all bitcoin', 2_100_000_000_000_000_001n],
    ['NaN', Number.NaN],
    ['null', null],
    ['an object', { amount: 1 }],
  ];
  for (const [what, amount] of badAmounts) {
    it(`withdrawal amount: refuses ${what}`, () =>
      refused(
        () => api.withdrawalRequests.create({ amount: amount as string, description: 'x' }),
        'amount',
      ));
  }

  it('accepts bigint, safe integer and digit string amounts', async () => {
    for (const amount of [50_000n, 50_000, '50000']) {
      await api.withdrawalRequests.create({ amount, description: 'x' });
      expect(service.requests.at(-1)?.json).to.have.property('amount').that.equals('50000');
    }
  });

  it('refuses a missing description, naming it', () =>
    refused(
      () => api.withdrawalRequests.create({ amount: 1000 } as never),
      'description',
      /required/,
    ));

  it('refuses a field that is not part of the call', () =>
    refused(
      () => api.withdrawalRequests.create({ amount: 1000, description: 'x', amout: 5 } as never),
      'amout',
    ));

  it('refuses a non-integer or non-positive expiresIn', async () => {
    await refused(
      () => api.withdrawalRequests.create({ amount: 1000, description: 'x', expiresIn: 1.5 }),
      'expiresIn',
    );
    await refused(
      () => api.withdrawalRequests.create({ amount: 1000, description: 'x', expiresIn: 0 }),
      'expiresIn',
    );
  });

  it('refuses a callback URL that is not http(s)', () =>
    refused(
      () =>
        api.withdrawalRequests.create({
          amount: 1000,
          description: 'x',
          callbackUrl: 'javascript:alert(1)',
        }),
      'callbackUrl',
    ));

  it('static charge: refuses a 145-character success message, accepts 144', async () => {
    const base = { minAmount: 1000, maxAmount: 1000, description: 'fee' };
    await refused(
      () => api.staticCharges.create({ ...base, successMessage: 'x'.repeat(145) }),
      'successMessage',
      /144/,
    );
    service.reply(ok({ ...sampleWithdrawal }));
    const before = service.requests.length;
    await api.staticCharges.create({ ...base, successMessage: 'x'.repeat(144) }).catch(() => {});
    expect(service.requests.length).to.equal(before + 1);
  });

  it('static charge: refuses minAmount above maxAmount, and bad allowedSlots', async () => {
    await refused(
      () => api.staticCharges.create({ minAmount: 2000, maxAmount: 1000, description: 'fee' }),
      'minAmount',
    );
    await refused(
      () =>
        api.staticCharges.create({
          minAmount: 1000,
          maxAmount: 1000,
          description: 'fee',
          allowedSlots: -1,
        }),
      'allowedSlots',
    );
  });

  it('deplete: refuses fractional, negative and huge amounts, bad currencies and keys', async () => {
    await refused(() => api.widgetUsers.deplete({ user_id: 'u', amount: 1.25 }), 'amount');
    await refused(() => api.widgetUsers.deplete({ user_id: 'u', amount: -3 }), 'amount');
    await refused(() => api.widgetUsers.deplete({ user_id: 'u', amount: 2 ** 55 }), 'amount');
    await refused(
      () => api.widgetUsers.deplete({ user_id: 'u', amount: 1, currency: 'usd z' }),
      'currency',
    );
    await refused(
      () => api.widgetUsers.deplete({ user_id: 'u', amount: 1, idempotency_key: 'again' }),
      'idempotency_key',
    );
    await refused(() => api.widgetUsers.deplete({ user_id: '', amount: 1 }), 'user_id');
  });

  it('disclosures: refuses an empty list and unknown types', async () => {
    await refused(() => api.widgetUsers.acceptDisclosures('u1', []), 'typeIds', /at least one/);
    await refused(() => api.widgetUsers.acceptDisclosures('u1', [2, 4]), 'typeIds');
    await refused(() => api.widgetUsers.acceptDisclosures('', [2]), 'userId');
  });

  it('sessions: an email or an access_token is required; emails are checked', async () => {
    await refused(() => api.widgetSessions.create({}), 'email');
    await refused(() => api.widgetSessions.create({ email: 'not-an-email' }), 'email');
    await refused(
      () => api.ramp.createSession({ email: 'a@b.co', webhook_url: 'ftp://x' }),
      'webhook_url',
    );
    await refused(() => api.widgetUsers.update('u1', { email: 'nope' }), 'email');
  });

  it('refuses bad client options with a clear error', () => {
    expect(() => new PaymentsApi({ apiKey: '' })).to.throw(InvalidArgumentError, /apiKey/);
    expect(() => new PaymentsApi({ apiKey: 'k', baseUrl: 'not a url' })).to.throw(/baseUrl/);
    expect(() => new PaymentsApi({ apiKey: 'k', timeoutMs: -1 })).to.throw(/timeoutMs/);
    expect(() => new PaymentsApi({ apiKey: 'k', paths: { wallet: 'v0/wallet' } })).to.throw(
      /paths\.wallet/,
    );
    expect(() => new PaymentsApi({ apiKey: 'k', paths: { nope: '/x' } as never })).to.throw(/nope/);
  });
});
