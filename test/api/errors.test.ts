import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { expect } from 'chai';
import {
  AuthenticationError,
  ConnectionError,
  InsufficientPointsError,
  InvalidArgumentError,
  InvalidRequestError,
  LightningError,
  NotFoundError,
  PaymentsApi,
  PaymentsApiError,
  PermissionError,
  REQUEST_CHANNEL,
  UnexpectedResponseError,
} from '../../src/api/index.js';
import { FakeService, sampleWithdrawal } from '../support/fake-service.js';
import { freePort } from '../support/ports.js';

const KEY = 'sk_live_super_secret_key_do_not_leak_42';

async function failure(call: () => Promise<unknown>): Promise<PaymentsApiError> {
  try {
    await call();
  } catch (err) {
    expect(err).to.be.instanceOf(PaymentsApiError);
    return err as PaymentsApiError;
  }
  throw new Error('expected the call to fail');
}

describe('PaymentsApi: errors', () => {
  let service: FakeService;
  let api: PaymentsApi;

  beforeEach(async () => {
    service = await new FakeService().start();
    api = new PaymentsApi({ apiKey: KEY, baseUrl: service.url, retry: { baseDelayMs: 1 } });
  });
  afterEach(async () => {
    await api.close();
    await service.close();
  });

  const cases: [number, string, new (...args: never[]) => PaymentsApiError, string][] = [
    [401, 'Invalid API key', AuthenticationError, 'LN_AUTHENTICATION'],
    [403, 'Unsupported region', PermissionError, 'LN_PERMISSION'],
    [404, 'Not found', NotFoundError, 'LN_NOT_FOUND'],
    [400, 'Amount too low', InvalidRequestError, 'LN_INVALID_REQUEST'],
    [422, 'Unprocessable', InvalidRequestError, 'LN_INVALID_REQUEST'],
  ];
  for (const [status, message, type, code] of cases) {
    it(`${status} becomes ${type.name}, is not retried, and keeps the service's message`, async () => {
      service.reply({ status, body: { success: false, message } });
      const error = await failure(() => api.withdrawalRequests.get('wr_1'));
      expect(error).to.be.instanceOf(type);
      expect(error.code).to.equal(code);
      expect(error.status).to.equal(status);
      expect(error.retryable).to.equal(false);
      expect(error.message).to.contain(message).and.to.contain('withdrawalRequests.get');
      expect(service.requests).to.have.length(1);
    });
  }

  it('TX3017 becomes InsufficientPointsError with the service code', async () => {
    service.reply({
      status: 400,
      body: {
        success: false,
        message: 'Bad request',
        data: null,
        error: { code: 'TX3017', message: 'insufficient point balance' },
      },
    });
    const error = await failure(() => api.widgetUsers.deplete({ user_id: 'u1', amount: 100 }));
    expect(error).to.be.instanceOf(InsufficientPointsError).and.instanceOf(InvalidRequestError);
    expect(error.serviceCode).to.equal('TX3017');
    expect(error.code).to.equal('LN_INSUFFICIENT_POINTS');
    expect(error.message).to.contain('insufficient point balance');
    expect(service.requests).to.have.length(1);
  });

  it('a widget error code other than TX3017 is kept as serviceCode', async () => {
    service.reply({
      status: 404,
      body: {
        success: false,
        message: 'x',
        data: null,
        error: { code: 'US1001', message: 'no user' },
      },
    });
    const error = await failure(() => api.widgetUsers.acceptDisclosures('u9', [2]));
    expect(error).to.be.instanceOf(NotFoundError);
    expect(error.serviceCode).to.equal('US1001');
  });

  it('a 2xx envelope with success false is an error, not a result', async () => {
    service.reply({
      status: 200,
      body: { success: false, message: 'Wallet is empty', data: null },
    });
    const error = await failure(() => api.wallet.get());
    expect(error).to.be.instanceOf(InvalidRequestError);
    expect(error.message).to.contain('Wallet is empty');
  });

  const malformed: [string, { raw?: string; body?: unknown }][] = [
    ['a body that is not JSON', { raw: '<html>gateway</html>' }],
    ['an envelope without data', { body: { success: true, message: 'ok' } }],
    ['data without the code', { body: { data: { ...sampleWithdrawal, invoice: {} } } }],
    ['data with a non-digit amount', { body: { data: { ...sampleWithdrawal, amount: '12abc' } } }],
    ['data that is null', { body: { success: true, data: null } }],
  ];
  for (const [what, reply] of malformed) {
    it(`${what} is an UnexpectedResponseError`, async () => {
      service.reply({ status: 200, ...reply });
      const error = await failure(() => api.withdrawalRequests.get('wr_1'));
      expect(error).to.be.instanceOf(UnexpectedResponseError);
      expect(error.code).to.equal('LN_UNEXPECTED_RESPONSE');
      expect(error.status).to.equal(200);
    });
  }

  it("carries the service's request id and answer headers, to quote to its support", async () => {
    service.reply({
      status: 404,
      headers: {
        'x-request-id': 'req_7f3a9',
        'x-ratelimit-remaining': '41',
        'set-cookie': 'session=abc',
      },
      body: { success: false, message: 'Not found' },
    });
    const error = await failure(() => api.withdrawalRequests.get('wr_1'));
    expect(error.requestId).to.equal('req_7f3a9');
    expect(error.headers?.['x-ratelimit-remaining']).to.equal('41');
    expect(error.headers, 'cookies are never kept').not.to.have.property('set-cookie');

    // After the retries, the last answer's: a 5xx on a read, then a 503 with another id.
    service.reply(
      { status: 500, headers: { 'request-id': 'req_first' }, body: { success: false } },
      { status: 503, headers: { 'request-id': 'req_last' }, body: { success: false } },
    );
    const once = new PaymentsApi({
      apiKey: KEY,
      baseUrl: service.url,
      maxRetries: 1,
      retry: { baseDelayMs: 1 },
    });
    const retried = await failure(() => once.withdrawalRequests.get('wr_1'));
    await once.close();
    expect(retried.attempts).to.equal(2);
    expect(retried.requestId).to.equal('req_last');

    // A 2xx the contract does not allow names the answer too; a header that is no id is not one.
    service.reply({ status: 200, headers: { 'x-request-id': 'not an id <b>' }, raw: '<html>' });
    const garbled = await failure(() => api.withdrawalRequests.get('wr_1'));
    expect(garbled).to.be.instanceOf(UnexpectedResponseError);
    expect(garbled.requestId).to.equal(undefined);
    expect(garbled.headers?.['x-request-id']).to.equal('not an id <b>');
  });

  it('has no request id or headers when no answer came', async () => {
    const port = await freePort();
    const closed = new PaymentsApi({
      apiKey: KEY,
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 0,
    });
    const error = await failure(() => closed.withdrawalRequests.get('wr_1'));
    await closed.close();
    expect(error).to.be.instanceOf(ConnectionError);
    expect(error.requestId).to.equal(undefined);
    expect(error.headers).to.equal(undefined);
  });

  it('an error body that is not JSON still gives the right class', async () => {
    service.reply({ status: 403, raw: 'Forbidden' });
    const error = await failure(() => api.wallet.get());
    expect(error).to.be.instanceOf(PermissionError);
    expect(error.message).to.contain('HTTP 403');
  });
});

describe('PaymentsApi: the API key never leaks', () => {
  it('is absent from messages, fields, causes, inspection, JSON and diagnostics', async () => {
    const service = await new FakeService().start();
    const seen: unknown[] = [];
    const listener = (message: unknown) => seen.push(message);
    subscribe(REQUEST_CHANNEL, listener);
    const api = new PaymentsApi({ apiKey: KEY, baseUrl: service.url, retry: { baseDelayMs: 1 } });
    const deadPort = await freePort();
    const offline = new PaymentsApi({
      apiKey: KEY,
      baseUrl: `http://127.0.0.1:${deadPort}`,
      retry: { baseDelayMs: 1 },
    });
    try {
      // A careless service that echoes the key back in its error message.
      service.reply({ status: 401, body: { success: false, message: `Key ${KEY} is not valid` } });
      const echoed = await failure(() => api.wallet.get());
      const refused = await failure(() => offline.wallet.get());
      expect(refused).to.be.instanceOf(ConnectionError);
      service.reply({ status: 200, raw: `{"oops": "${KEY}"` });
      const garbled = await failure(() => api.wallet.get());
      // A key the options check refuses: the error names the field, never the value.
      let badKey: unknown;
      try {
        new PaymentsApi({ apiKey: `${KEY} with a space`, baseUrl: service.url });
      } catch (err) {
        badKey = err;
      }
      expect(badKey).to.be.instanceOf(InvalidArgumentError);
      expect((badKey as InvalidArgumentError).field).to.equal('options.apiKey');

      for (const error of [echoed, refused, garbled, badKey as LightningError]) {
        expect(error).to.be.instanceOf(LightningError);
        const views = [
          error.message,
          String(error.stack),
          JSON.stringify(error),
          inspect(error, { depth: null, showHidden: true }),
          inspect(error.cause, { depth: null, showHidden: true }),
          // Every own field, the brand (a symbol) included.
          ...Reflect.ownKeys(error).map((k) =>
            inspect(Reflect.get(error, k), { depth: null, showHidden: true }),
          ),
        ];
        for (const view of views) expect(view).not.to.contain(KEY);
      }
      expect(echoed.message).to.contain('[redacted]');
      expect(inspect(api, { depth: null, showHidden: true })).not.to.contain(KEY);
      expect(JSON.stringify(api)).not.to.contain(KEY);
      expect(seen.length).to.be.greaterThan(0);
      expect(JSON.stringify(seen)).not.to.contain(KEY);
    } finally {
      unsubscribe(REQUEST_CHANNEL, listener);
      await api.close();
      await offline.close();
      await service.close();
    }
  });
});
