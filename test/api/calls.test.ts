import { expect } from 'chai';
import { PaymentsApi } from '../../src/api/index.js';
import { VERSION } from '../../src/version.js';
import {
  FakeService,
  ok,
  sampleCharge,
  sampleWithdrawal,
  widgetOk,
} from '../support/fake-service.js';

const KEY = 'test-key-0123456789abcdef';

describe('PaymentsApi: every call', () => {
  let service: FakeService;
  let api: PaymentsApi;

  beforeEach(async () => {
    service = await new FakeService().start();
    api = new PaymentsApi({ apiKey: KEY, baseUrl: service.url });
  });
  afterEach(async () => {
    await api.close();
    await service.close();
  });

  function last() {
    const request = service.requests.at(-1);
    if (!request) throw new Error('no request reached the service');
    return request;
  }

  it('sends the apikey, a versioned User-Agent and JSON headers', async () => {
    service.reply(ok({ balance: 1234 }));
    await api.wallet.get();
    const { headers } = last();
    expect(headers.apikey).to.equal(KEY);
    expect(headers['user-agent']).to.equal(`colyseus-lightning/${VERSION}`);
    expect(headers.accept).to.equal('application/json');
    expect(headers['content-type']).to.equal(undefined);
  });

  it('wallet.get: GET /v0/wallet, balance in satoshis', async () => {
    service.reply(ok({ balance: 1234, unit: 'sats' }));
    const wallet = await api.wallet.get();
    expect(last()).to.include({ method: 'GET', path: '/v0/wallet', body: '' });
    expect(wallet.balance).to.equal(1234);
    expect(wallet.unit).to.equal('sats');
  });

  it('payments.send: POST /v0/payments with the amount as a digit string', async () => {
    service.reply(ok({ id: 'pay_1', status: 'processing', amount: '21000' }));
    const payment = await api.payments.send({
      amount: 21_000n,
      description: 'Cash out',
      internalId: 'player-9',
      invoice: 'lnbc210n1xyz',
    });
    expect(last()).to.include({ method: 'POST', path: '/v0/payments' });
    expect(last().headers['content-type']).to.equal('application/json');
    expect(last().json).to.deep.equal({
      amount: '21000',
      description: 'Cash out',
      internalId: 'player-9',
      invoice: 'lnbc210n1xyz',
    });
    expect(payment).to.include({ id: 'pay_1', status: 'processing' });
  });

  it('payments.get: GET /v0/payments/{id}, with the id URL-encoded', async () => {
    service.reply(ok({ id: 'a b?#%', status: 'completed' }));
    const payment = await api.payments.get('a b?#%');
    expect(last()).to.include({ method: 'GET', path: '/v0/payments/a%20b%3F%23%25' });
    expect(payment.status).to.equal('completed');
  });

  it('lnAddress.sendPayment: POST /v0/ln-address/send-payment, the exact body', async () => {
    service.reply(ok({ id: 'pay_2', status: 'processing', amount: '21000', comment: 'gg' }));
    const payment = await api.lnAddress.sendPayment({
      lnAddress: 'Winner@Game.Example',
      amount: 21_000,
      comment: 'gg',
      internalId: 'player-9',
      callbackUrl: 'https://game.example/cb/x',
    });
    expect(last()).to.include({ method: 'POST', path: '/v0/ln-address/send-payment' });
    expect(last().json).to.deep.equal({
      lnAddress: 'winner@game.example',
      amount: '21000',
      comment: 'gg',
      internalId: 'player-9',
      callbackUrl: 'https://game.example/cb/x',
    });
    expect(payment).to.include({ id: 'pay_2', status: 'processing', comment: 'gg' });
  });

  it('lnAddress.validate: GET /v0/ln-address/validate/{address}, data.valid', async () => {
    service.reply(ok({ valid: true }));
    expect((await api.lnAddress.validate('a.b+c@pay.example')).valid).to.equal(true);
    expect(last()).to.include({
      method: 'GET',
      path: '/v0/ln-address/validate/a.b%2Bc%40pay.example',
    });
  });

  it('withdrawalRequests.create: POST /v0/withdrawal-requests, unwraps data', async () => {
    service.reply(ok(sampleWithdrawal, 'Successfully created Withdrawal Request.'));
    const created = await api.withdrawalRequests.create({
      amount: '50000',
      description: 'Prize',
      internalId: 'player-1',
      callbackUrl: 'https://game.example/cb/abc',
      expiresIn: 300,
    });
    expect(last()).to.include({ method: 'POST', path: '/v0/withdrawal-requests' });
    expect(last().json).to.deep.equal({
      amount: '50000',
      description: 'Prize',
      internalId: 'player-1',
      callbackUrl: 'https://game.example/cb/abc',
      expiresIn: 300,
    });
    expect(created.id).to.equal('wr_1');
    expect(created.status).to.equal('pending');
    expect(created.invoice.request).to.equal(sampleWithdrawal.invoice.request);
  });

  it('withdrawalRequests.get: GET /v0/withdrawal-requests/{id}', async () => {
    service.reply(ok({ ...sampleWithdrawal, status: 'completed' }));
    const got = await api.withdrawalRequests.get('wr_1');
    expect(last()).to.include({ method: 'GET', path: '/v0/withdrawal-requests/wr_1' });
    expect(got.status).to.equal('completed');
  });

  it('staticCharges.create: POST /v0/static-charges', async () => {
    service.reply(ok(sampleCharge));
    const charge = await api.staticCharges.create({
      minAmount: 10_000,
      maxAmount: 10_000,
      description: 'Entry',
      successMessage: 'Good luck',
      allowedSlots: 1,
      internalId: 'player-1',
      callbackUrl: 'https://game.example/cb/def',
    });
    expect(last()).to.include({ method: 'POST', path: '/v0/static-charges' });
    expect(last().json).to.deep.equal({
      minAmount: '10000',
      maxAmount: '10000',
      description: 'Entry',
      successMessage: 'Good luck',
      allowedSlots: 1,
      internalId: 'player-1',
      callbackUrl: 'https://game.example/cb/def',
    });
    expect(charge).to.include({ id: 'sc_1', slots: 0, status: 'active' });
  });

  it('staticCharges.get and update: GET and PATCH /v0/static-charges/{id}', async () => {
    service.reply(ok({ ...sampleCharge, slots: 1, status: 'inactive' }));
    const got = await api.staticCharges.get('sc_1');
    expect(last()).to.include({ method: 'GET', path: '/v0/static-charges/sc_1' });
    expect(got).to.include({ slots: 1, status: 'inactive' });

    service.reply(ok({ ...sampleCharge, description: 'New' }));
    const updated = await api.staticCharges.update('sc_1', { description: 'New', allowedSlots: 3 });
    expect(last()).to.include({ method: 'PATCH', path: '/v0/static-charges/sc_1' });
    expect(last().json).to.deep.equal({ description: 'New', allowedSlots: 3 });
    expect(updated.description).to.equal('New');
  });

  it('widgetUsers.create: POST /api/v1/widget/users', async () => {
    service.reply(
      widgetOk({ id: 'u1', reference_id: 'p1', email: 'a@b.co', outstanding_disclosures: [] }, 201),
    );
    const user = await api.widgetUsers.create({ reference_id: 'p1', email: 'a@b.co' });
    expect(last()).to.include({ method: 'POST', path: '/api/v1/widget/users' });
    expect(last().json).to.deep.equal({ reference_id: 'p1', email: 'a@b.co' });
    expect(user.id).to.equal('u1');
  });

  it('widgetUsers.deplete: POST /api/v1/widget/users/deplete with a generated UUID key', async () => {
    service.reply(widgetOk({ transfer_id: 't1', status: 'COMPLETED' }));
    const result = await api.widgetUsers.deplete({ user_id: 'u1', amount: 150 });
    expect(last()).to.include({ method: 'POST', path: '/api/v1/widget/users/deplete' });
    const sent = last().json as Record<string, unknown>;
    expect(sent).to.include({ user_id: 'u1', amount: 150, currency: 'USDZ' });
    expect(sent.idempotency_key).to.match(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(result).to.deep.equal({
      transfer_id: 't1',
      status: 'COMPLETED',
      idempotencyKey: sent.idempotency_key,
    });
  });

  it('widgetUsers.deplete keeps a caller-supplied key', async () => {
    const key = '3b241101-e2bb-4255-8caf-4136c566a962';
    service.reply(widgetOk({ transfer_id: 't2', status: 'COMPLETED' }));
    const result = await api.widgetUsers.deplete({
      user_id: 'u1',
      amount: 5,
      currency: 'GEMS',
      idempotency_key: key,
    });
    expect(last().json).to.deep.equal({
      user_id: 'u1',
      amount: 5,
      currency: 'GEMS',
      idempotency_key: key,
    });
    expect(result.idempotencyKey).to.equal(key);
  });

  it('widgetUsers.update: PATCH /api/v1/widget/users/{user_id} with only the email', async () => {
    service.reply(widgetOk({ id: 'u1', reference_id: 'p1', email: 'new@b.co' }));
    const user = await api.widgetUsers.update('u1', { email: 'new@b.co' });
    expect(last()).to.include({ method: 'PATCH', path: '/api/v1/widget/users/u1' });
    expect(last().json).to.deep.equal({ email: 'new@b.co' });
    expect(user.email).to.equal('new@b.co');
  });

  it('widgetUsers.acceptDisclosures: POST /api/v1/widget/users/{userId}/disclosures', async () => {
    service.reply(widgetOk({ acceptedDisclosureTypeIds: [2, 3] }, 201));
    const accepted = await api.widgetUsers.acceptDisclosures('u1', [2, 3, 2]);
    expect(last()).to.include({ method: 'POST', path: '/api/v1/widget/users/u1/disclosures' });
    expect(last().json).to.deep.equal({ acceptedDisclosureTypeIds: [2, 3] });
    expect(accepted.acceptedDisclosureTypeIds).to.deep.equal([2, 3]);
  });

  it('widgetSessions.create: POST /api/v1/widget/users/session', async () => {
    const session = {
      session_token: 'jwt',
      expires_at: '2026-11-21T01:00:00Z',
      widget_url: 'https://w/?session_token=jwt',
    };
    service.reply(widgetOk(session, 201));
    const got = await api.widgetSessions.create({
      email: 'a@b.co',
      reference_id: 'p1',
      webhook_url: 'https://game.example/hooks/widget',
      metadata: { room: 'r1' },
    });
    expect(last()).to.include({ method: 'POST', path: '/api/v1/widget/users/session' });
    expect(last().json).to.deep.equal({
      email: 'a@b.co',
      reference_id: 'p1',
      webhook_url: 'https://game.example/hooks/widget',
      metadata: { room: 'r1' },
    });
    expect(got).to.deep.equal(session);
  });

  it('widgetSessions.create accepts an access_token instead of an email', async () => {
    service.reply(widgetOk({ session_token: 'j', expires_at: 'x', widget_url: 'y' }, 201));
    await api.widgetSessions.create({ access_token: 'tok' });
    expect(last().json).to.deep.equal({ access_token: 'tok' });
  });

  it('ramp.createSession: POST /api/v1/ramp-widget', async () => {
    service.reply(ok({ session_token: 'ramp-jwt', expires_at: '2026-11-21T00:15:00Z' }));
    const session = await api.ramp.createSession({
      email: 'a@b.co',
      webhook_url: 'https://game.example/hooks/ramp',
      quote_currency: 'USD',
      base_currency: 'BTC',
      destination: 'player@example.com',
      reference_id: 'p1',
    });
    expect(last()).to.include({ method: 'POST', path: '/api/v1/ramp-widget' });
    expect(last().json).to.include({
      email: 'a@b.co',
      quote_currency: 'USD',
      base_currency: 'BTC',
    });
    expect(session.session_token).to.equal('ramp-jwt');
  });

  it('keeps fields it does not know, and unknown status values as text', async () => {
    service.reply(ok({ ...sampleWithdrawal, status: 'on-hold', brandNew: { x: 1 } }));
    const got = await api.withdrawalRequests.get('wr_1');
    expect(got.status).to.equal('on-hold');
    expect((got as Record<string, unknown>).brandNew).to.deep.equal({ x: 1 });
  });

  it('honours a base URL with a path prefix, and path overrides', async () => {
    const custom = new PaymentsApi({
      apiKey: KEY,
      baseUrl: `${service.url}/proxy/`,
      paths: { withdrawalRequestsGet: '/v1/withdrawals/{id}' },
    });
    try {
      service.reply(ok(sampleWithdrawal), ok({ balance: 1 }));
      await custom.withdrawalRequests.get('wr_1');
      expect(last().path).to.equal('/proxy/v1/withdrawals/wr_1');
      await custom.wallet.get();
      expect(last().path).to.equal('/proxy/v0/wallet');
    } finally {
      await custom.close();
    }
  });
});
