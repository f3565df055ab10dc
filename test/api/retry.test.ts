import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { expect } from 'chai';
import {
  AmbiguousResultError,
  ConnectionError,
  InvalidRequestError,
  PaymentsApi,
  type PaymentsApiError,
  RateLimitError,
  REQUEST_CHANNEL,
  type RequestEvent,
  ServiceError,
  TimeoutError,
} from '../../src/api/index.js';
import { ManualClock } from '../../src/clock.js';
import {
  FakeService,
  ok,
  sampleCharge,
  sampleWithdrawal,
  widgetOk,
} from '../support/fake-service.js';
import { freePort } from '../support/ports.js';
import { timersArmed } from './armed.js';

async function failure(call: () => Promise<unknown>): Promise<PaymentsApiError> {
  try {
    await call();
  } catch (err) {
    return err as PaymentsApiError;
  }
  throw new Error('expected the call to fail');
}

const transfer = widgetOk({ transfer_id: 't1', status: 'COMPLETED' });
const fast = { baseDelayMs: 1, maxDelayMs: 5 };

describe('PaymentsApi: the retry policy, row by row', () => {
  let service: FakeService;
  let api: PaymentsApi;

  beforeEach(async () => {
    service = await new FakeService().start();
    api = new PaymentsApi({ apiKey: 'k', baseUrl: service.url, timeoutMs: 300, retry: fast });
  });
  afterEach(async () => {
    await api.close();
    await service.close();
  });

  describe('reads (GET)', () => {
    it('retry a 5xx and succeed', async () => {
      service.reply({ status: 503, body: {} }, { status: 502, body: {} }, ok(sampleWithdrawal));
      const got = await api.withdrawalRequests.get('wr_1');
      expect(got.id).to.equal('wr_1');
      expect(service.requests).to.have.length(3);
    });

    it('give up after maxRetries with a ServiceError', async () => {
      service.always({ status: 500, body: { message: 'boom' } });
      const error = await failure(() => api.withdrawalRequests.get('wr_1'));
      expect(error).to.be.instanceOf(ServiceError);
      expect(error.status).to.equal(500);
      expect(error.retryable).to.equal(true);
      expect(error.attempts).to.equal(3);
      expect(service.requests).to.have.length(3);
    });

    it('retry a timeout and succeed', async () => {
      service.reply('hang', ok(sampleWithdrawal));
      const got = await api.withdrawalRequests.get('wr_1');
      expect(got.status).to.equal('pending');
      expect(service.requests).to.have.length(2);
    });

    it('end with a TimeoutError when every attempt times out', async () => {
      service.always('hang');
      const error = await failure(() => api.wallet.get());
      expect(error).to.be.instanceOf(TimeoutError);
      expect(error.code).to.equal('LN_TIMEOUT');
      // Each attempt gave up at the client's own limit, then the next was sent.
      expect(error.message).to.match(/no answer within 300 ms/);
      expect(error.attempts).to.equal(3);
      expect(service.requests).to.have.length(3);
    });

    it("lnAddress.validate with limits: one attempt of that call's own timeout", async () => {
      // An answer after 200 ms: inside the client's 300 ms, past this call's 80 ms. Only a call
      // that gave up at 80 ms (the earlier timer, whatever the load) ends in a TimeoutError.
      service.always({ ...ok({ valid: true }), delayMs: 200 });
      const error = await failure(() =>
        api.lnAddress.validate('slow@pay.example', { timeoutMs: 80, maxRetries: 0 }),
      );
      expect(error).to.be.instanceOf(TimeoutError);
      expect(error.message).to.match(/no answer within 80 ms/);
      expect(error.attempts).to.equal(1);
      expect(service.requests).to.have.length(1);
      // Bad limits are refused before anything is sent.
      for (const limits of [{ timeoutMs: 0 }, { maxRetries: 11 }, { other: 1 }, 'fast']) {
        const refused = await api.lnAddress
          .validate('slow@pay.example', limits as never)
          .catch((e: unknown) => e);
        expect(refused, JSON.stringify(limits)).to.have.property('code', 'LN_INVALID_ARGUMENT');
      }
      expect(service.requests).to.have.length(1);
    });

    it('wait out the backoff on the client clock, not on real time', async () => {
      const clock = new ManualClock();
      const slow = new PaymentsApi({
        apiKey: 'k',
        baseUrl: service.url,
        retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
        clock,
      });
      try {
        service.reply({ status: 503, body: {} }, ok(sampleWithdrawal));
        const got = slow.withdrawalRequests.get('wr_1');
        await timersArmed(clock);
        expect(service.requests, 'no second attempt before the wait').to.have.length(1);
        // Full jitter waits less than the ceiling: a minute covers any draw.
        clock.advance(60_000);
        expect((await got).id).to.equal('wr_1');
        expect(service.requests).to.have.length(2);
      } finally {
        await slow.close();
      }
    });

    it('retry a connection reset and succeed', async () => {
      service.reply('destroy', ok({ balance: 7 }));
      const wallet = await api.wallet.get();
      expect(wallet.balance).to.equal(7);
      expect(service.requests).to.have.length(2);
    });

    it('retry a refused connection, then give up with a ConnectionError', async () => {
      const events: RequestEvent[] = [];
      const listener = (m: unknown) => events.push(m as RequestEvent);
      subscribe(REQUEST_CHANNEL, listener);
      const offline = new PaymentsApi({
        apiKey: 'k',
        baseUrl: `http://127.0.0.1:${await freePort()}`,
        retry: fast,
      });
      try {
        const error = await failure(() => offline.wallet.get());
        expect(error).to.be.instanceOf(ConnectionError);
        expect(error.retryable).to.equal(true);
        expect(events.map((e) => [e.attempt, e.outcome])).to.deep.equal([
          [1, 'connect'],
          [2, 'connect'],
          [3, 'connect'],
        ]);
      } finally {
        unsubscribe(REQUEST_CHANNEL, listener);
        await offline.close();
      }
    });
  });

  describe('429 and Retry-After', () => {
    let clock: ManualClock;
    let timed: PaymentsApi;
    beforeEach(() => {
      clock = new ManualClock();
      timed = new PaymentsApi({ apiKey: 'k', baseUrl: service.url, retry: fast, clock });
    });
    afterEach(() => timed.close());

    /** Runs `call`, lets it arm its wait, and checks it sends again after `waitMs`, not before. */
    async function retriedAfter<T>(call: () => Promise<T>, waitMs: number): Promise<T> {
      const result = call();
      await timersArmed(clock);
      expect(service.requests).to.have.length(1);
      clock.advance(waitMs - 1);
      expect(clock.pendingTimers, 'still waiting 1 ms before the end').to.equal(1);
      expect(service.requests, 'no second attempt before the wait is over').to.have.length(1);
      clock.advance(1);
      const value = await result;
      expect(service.requests).to.have.length(2);
      return value;
    }

    it('waits as long as Retry-After says (seconds), then succeeds', async () => {
      service.reply({ status: 429, body: {}, headers: { 'retry-after': '2' } }, ok({ balance: 1 }));
      const wallet = await retriedAfter(() => timed.wallet.get(), 2_000);
      expect(wallet.balance).to.equal(1);
    });

    it('reads a Retry-After date against the client clock', async () => {
      const at = new Date(clock.now() + 3_000).toUTCString();
      service.reply({ status: 503, body: {}, headers: { 'retry-after': at } }, ok({ balance: 2 }));
      const wallet = await retriedAfter(() => timed.wallet.get(), 3_000);
      expect(wallet.balance).to.equal(2);
    });

    it('stops at once when Retry-After is longer than the cap', async () => {
      const capped = new PaymentsApi({
        apiKey: 'k',
        baseUrl: service.url,
        retry: { ...fast, maxRetryAfterMs: 2_000 },
      });
      try {
        service.reply({
          status: 429,
          body: { message: 'slow down' },
          headers: { 'retry-after': '60' },
        });
        const error = await failure(() => capped.wallet.get());
        expect(error).to.be.instanceOf(RateLimitError);
        expect((error as RateLimitError).retryAfterMs).to.equal(60_000);
        expect(service.requests).to.have.length(1);
      } finally {
        await capped.close();
      }
    });

    it('retries a POST without a key on 429: the service did not process it', async () => {
      service.reply({ status: 429, body: {} }, ok(sampleWithdrawal));
      const created = await api.withdrawalRequests.create({ amount: 50_000, description: 'Prize' });
      expect(created.id).to.equal('wr_1');
      expect(service.requests).to.have.length(2);
    });
  });

  describe('deplete (keyed): retried with the same idempotency key', () => {
    for (const [what, first] of [
      ['a 5xx', { status: 500, body: {} }],
      ['a timeout', 'hang'],
      ['a connection reset', 'destroy'],
    ] as const) {
      it(`after ${what}`, async () => {
        service.reply(first, transfer);
        const result = await api.widgetUsers.deplete({ user_id: 'u1', amount: 10 });
        expect(service.requests).to.have.length(2);
        const keys = service.requests.map(
          (r) => (r.json as { idempotency_key: string }).idempotency_key,
        );
        expect(keys[0]).to.equal(keys[1]);
        expect(result.idempotencyKey).to.equal(keys[0]);
      });
    }

    it('ends ambiguous but retryable, naming the key to re-send with', async () => {
      service.always({ status: 503, body: {} });
      const error = await failure(() => api.widgetUsers.deplete({ user_id: 'u1', amount: 10 }));
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(error.retryable).to.equal(true);
      const key = service.sent(0).idempotency_key;
      expect((error as AmbiguousResultError).idempotencyKey).to.equal(key);
      expect(service.requests).to.have.length(3);
    });

    it('stays ambiguous when a later attempt is only refused (429): the first may have applied', async () => {
      // Found by the soak: a deplete that timed out (applied, its answer lost), then met 429s,
      // ended RateLimitError, so its spend was marked failed while the points had left.
      service.reply('hang', { status: 429, body: {} }, { status: 429, body: {} });
      const error = await failure(() => api.widgetUsers.deplete({ user_id: 'u1', amount: 10 }));
      expect(error).to.be.instanceOf(AmbiguousResultError);
      expect(error.retryable).to.equal(true);
      expect((error as AmbiguousResultError).idempotencyKey).to.equal(
        service.sent(0).idempotency_key,
      );
      expect(service.requests).to.have.length(3);
    });

    it('is not retried on a 4xx', async () => {
      service.reply({ status: 400, body: { error: { code: 'X1', message: 'bad' } } });
      const error = await failure(() => api.widgetUsers.deplete({ user_id: 'u1', amount: 10 }));
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(service.requests).to.have.length(1);
    });
  });

  describe('POST and PATCH without a key: never re-sent once they may have arrived', () => {
    const creates: [string, (api: PaymentsApi) => Promise<unknown>][] = [
      [
        'withdrawalRequests.create',
        (a) => a.withdrawalRequests.create({ amount: 50_000, description: 'p' }),
      ],
      [
        'payments.send',
        (a) => a.payments.send({ amount: 1000, description: 'p', internalId: 'i' }),
      ],
      [
        'lnAddress.sendPayment',
        (a) => a.lnAddress.sendPayment({ lnAddress: 'alice@game.example', amount: 1000 }),
      ],
      [
        'staticCharges.create',
        (a) => a.staticCharges.create({ minAmount: 1, maxAmount: 1, description: 'f' }),
      ],
      ['staticCharges.update', (a) => a.staticCharges.update('sc_1', { description: 'x' })],
      ['widgetUsers.create', (a) => a.widgetUsers.create({ reference_id: 'p', email: 'a@b.co' })],
      ['widgetSessions.create', (a) => a.widgetSessions.create({ email: 'a@b.co' })],
      [
        'ramp.createSession',
        (a) => a.ramp.createSession({ email: 'a@b.co', webhook_url: 'https://h/x' }),
      ],
    ];
    for (const [name, call] of creates) {
      for (const [what, reply] of [
        ['a 5xx', { status: 500, body: {} }],
        ['a timeout', 'hang'],
        ['a connection destroyed after the body was read', 'destroy'],
      ] as const) {
        it(`${name}: ${what} is ambiguous and reaches the service exactly once`, async () => {
          service.always(reply);
          const error = await failure(() => call(api));
          expect(error).to.be.instanceOf(AmbiguousResultError);
          expect(error.retryable).to.equal(false);
          expect(error.message).to.contain('not sent again');
          expect(service.requests).to.have.length(1);
        });
      }
    }

    it('a refused connection is retried: no byte had been sent', async () => {
      const port = await freePort();
      const late = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: sampleWithdrawal }));
      });
      let received = 0;
      late.on('request', () => received++);
      const events: RequestEvent[] = [];
      const listener = (m: unknown) => events.push(m as RequestEvent);
      subscribe(REQUEST_CHANNEL, listener);
      const clock = new ManualClock();
      const client = new PaymentsApi({
        apiKey: 'k',
        baseUrl: `http://127.0.0.1:${port}`,
        retry: { baseDelayMs: 200, maxDelayMs: 200 },
        clock,
      });
      try {
        const created = client.withdrawalRequests.create({ amount: 50_000, description: 'p' });
        await timersArmed(clock);
        // The service comes up while the client waits to retry the refused attempt.
        await new Promise<void>((resolve) => late.listen(port, '127.0.0.1', resolve));
        clock.advance(200);
        expect((await created).id).to.equal('wr_1');
        expect(events.map((e) => e.outcome)).to.deep.equal(['connect', 'ok']);
        expect(received).to.equal(1);
      } finally {
        unsubscribe(REQUEST_CHANNEL, listener);
        await client.close();
        late.close();
      }
    });
  });

  it('classifies a connect timeout as never sent (retried, then ConnectionError)', async () => {
    let calls = 0;
    const dispatcher = {
      request: async () => {
        calls++;
        throw Object.assign(new Error('Connect Timeout Error'), {
          code: 'UND_ERR_CONNECT_TIMEOUT',
        });
      },
      close: async () => {},
    };
    const client = new PaymentsApi({
      apiKey: 'k',
      baseUrl: 'https://api.example.com',
      dispatcher: dispatcher as never,
      retry: fast,
    });
    const error = await failure(() =>
      client.withdrawalRequests.create({ amount: 50_000, description: 'p' }),
    );
    expect(error).to.be.instanceOf(ConnectionError);
    expect(calls).to.equal(3);
  });

  it('publishes each attempt on the diagnostics channel', async () => {
    const events: RequestEvent[] = [];
    const listener = (m: unknown) => events.push(m as RequestEvent);
    subscribe(REQUEST_CHANNEL, listener);
    try {
      service.reply({ status: 502, body: {} }, ok(sampleCharge));
      await api.staticCharges.get('sc_1');
    } finally {
      unsubscribe(REQUEST_CHANNEL, listener);
    }
    expect(events).to.have.length(2);
    expect(events[0]).to.include({
      operation: 'staticCharges.get',
      method: 'GET',
      path: '/v0/static-charges/sc_1',
      attempt: 1,
      status: 502,
      outcome: 'server-error',
    });
    expect(events[1]).to.include({ attempt: 2, status: 200, outcome: 'ok' });
    expect(events[1]?.durationMs).to.be.a('number').and.at.least(0);
  });
});
