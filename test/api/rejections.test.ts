import { expect } from 'chai';
import { InvalidArgumentError, PaymentsApi } from '../../src/api/index.js';
import { ConfigurationError } from '../../src/errors.js';
import { FakeService, ok, sampleWithdrawal } from '../support/fake-service.js';

/**
 * Issue 13, finding 6: every PaymentsApi method answers a bad argument with a rejected
 * promise (so `.catch()` sees it), never a synchronous throw; and an id is never a path
 * segment that a server or proxy would resolve (`.`, `..`, `a/b`).
 */
describe('PaymentsApi: bad arguments reject, and ids stay one path segment', () => {
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

  /** Every method of the client, each called with arguments that are wrong. */
  function badCalls(): [string, () => unknown][] {
    const c = api as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>;
    const call =
      (ns: string, method: string, ...args: unknown[]) =>
      () => {
        const namespace = c[ns] as Record<string, (...a: unknown[]) => unknown>;
        return (namespace[method] as (...a: unknown[]) => unknown).apply(namespace, args);
      };
    return [
      ['payments.send', call('payments', 'send', { amount: -1 })],
      ['payments.get', call('payments', 'get', 42)],
      ['withdrawalRequests.create', call('withdrawalRequests', 'create', null)],
      ['withdrawalRequests.get', call('withdrawalRequests', 'get', '..')],
      ['staticCharges.create', call('staticCharges', 'create', 'x')],
      ['staticCharges.get', call('staticCharges', 'get', '.')],
      ['staticCharges.update', call('staticCharges', 'update', 'a/b', {})],
      ['widgetUsers.create', call('widgetUsers', 'create', {})],
      ['widgetUsers.deplete', call('widgetUsers', 'deplete', { amount: 'x' })],
      ['widgetUsers.update', call('widgetUsers', 'update', '..', { email: 'a@b.co' })],
      ['widgetUsers.acceptDisclosures', call('widgetUsers', 'acceptDisclosures', '..', [2])],
      ['widgetSessions.create', call('widgetSessions', 'create', undefined)],
      ['ramp.createSession', call('ramp', 'createSession', { email: 1 })],
      ['lnAddress.sendPayment', call('lnAddress', 'sendPayment', { lnAddress: 'a@b' })],
      ['lnAddress.validate', call('lnAddress', 'validate', 'a/b@c.example')],
      // No argument to get wrong: a closed client must still answer with a rejection.
      ['wallet.get', call('wallet', 'get')],
    ];
  }

  it('all 16 methods return a promise that rejects, and throw nothing synchronously', async () => {
    const closed = new PaymentsApi({ apiKey: 'k', baseUrl: service.url });
    await closed.close();
    const before = service.requests.length;
    const wrong: string[] = [];
    for (const [name, run] of badCalls()) {
      let result: unknown;
      try {
        result = name === 'wallet.get' ? closed.wallet.get() : run();
      } catch (err) {
        wrong.push(`${name} threw synchronously: ${(err as Error).message}`);
        continue;
      }
      if (!(result instanceof Promise)) {
        wrong.push(`${name} returned no promise`);
        continue;
      }
      const error = await result.then(
        () => null,
        (e: unknown) => e,
      );
      if (error === null) wrong.push(`${name} resolved`);
      else if (
        !(error instanceof (name === 'wallet.get' ? ConfigurationError : InvalidArgumentError))
      ) {
        wrong.push(`${name} rejected with ${String(error)}`);
      }
    }
    expect(wrong).to.deep.equal([]);
    expect(badCalls()).to.have.length(16);
    expect(service.requests.length, 'nothing may reach the service').to.equal(before);
  });

  const badIds: [string, unknown][] = [
    ['"."', '.'],
    ['".."', '..'],
    ['a slash', 'a/b'],
    ['a leading slash', '/users'],
    ['a backslash', '..\\x'],
    ['an empty string', ''],
    ['256 characters', 'x'.repeat(256)],
    ['a lone surrogate', 'id\ud800'],
    ['a control character', 'id\nx'],
    ['a number', 42],
    ['an object', { id: 'x' }],
    ['null', null],
  ];
  for (const [what, id] of badIds) {
    it(`refuses ${what} as an id in every path, sending nothing`, async () => {
      const before = service.requests.length;
      const calls: [string, () => Promise<unknown>][] = [
        ['payments.get', () => api.payments.get(id as string)],
        ['withdrawalRequests.get', () => api.withdrawalRequests.get(id as string)],
        ['staticCharges.get', () => api.staticCharges.get(id as string)],
        ['staticCharges.update', () => api.staticCharges.update(id as string, {})],
        ['widgetUsers.update', () => api.widgetUsers.update(id as string, { email: 'a@b.co' })],
        ['widgetUsers.disclosures', () => api.widgetUsers.acceptDisclosures(id as string, [2])],
      ];
      for (const [name, run] of calls) {
        const error = await Promise.resolve()
          .then(run)
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect(error, name).to.be.instanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).field, name).to.match(/^(id|userId)$/);
      }
      expect(service.requests.length, 'nothing may reach the service').to.equal(before);
    });
  }

  it('still sends ids that are one safe segment (dots inside, unicode, 255 characters)', async () => {
    for (const id of ['wr_1', 'a.b', '...', 'ü-1', 'x'.repeat(255)]) {
      await api.withdrawalRequests.get(id);
      expect(service.requests.at(-1)?.path).to.equal(
        `/v0/withdrawal-requests/${encodeURIComponent(id)}`,
      );
    }
  });

  it('refuses metadata that cannot travel as JSON, with a typed error', async () => {
    const before = service.requests.length;
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const metadata of [{ big: 1n }, cyclic]) {
      const error = await api.widgetSessions.create({ email: 'a@b.co', metadata }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).field).to.equal('metadata');
    }
    expect(service.requests.length).to.equal(before);
  });

  it('refuses an argument that is an object but not a plain one (it would pass as {})', async () => {
    const before = service.requests.length;
    for (const input of [new Date(), new Map([['email', 'a@b.co']]), new (class Options {})()]) {
      const error = await api.staticCharges.update('sc_1', input as never).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(InvalidArgumentError);
    }
    expect(service.requests.length).to.equal(before);
    const plain = Object.assign(Object.create(null), { description: 'x' });
    // The fake answers with a withdrawal request, which is not a charge: only the send matters.
    await api.staticCharges.update('sc_1', plain).catch(() => {});
    expect(service.requests.length, 'a null-prototype object is plain').to.equal(before + 1);
  });
});
