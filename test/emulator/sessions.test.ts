import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/emulator/index.js';
import { call, useEmulator, useReceiver } from './helpers.js';

function verifyHs256(token: string, secret: string) {
  const [header, payload, signature] = token.split('.');
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return {
    valid: expected === signature,
    header: JSON.parse(Buffer.from(header ?? '', 'base64url').toString()),
    claims: JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()),
  };
}

describe('emulator: widget sessions', () => {
  const clock = new ManualClock(Date.UTC(2030, 5, 1, 12, 0, 0, 250));
  const t = useEmulator(() => ({ clock }));

  it('returns 201 with an HS256 JWT that expires at expires_at, and a widget_url carrying it', async () => {
    const res = await call(t.emu, 'POST', '/api/v1/widget/users/session', {
      body: { email: 'ada@example.com', reference_id: 's-1', metadata: { level: 3 } },
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ success: true, error: null });
    const { session_token, expires_at, widget_url } = res.body.data;
    const jwt = verifyHs256(session_token, t.emu.control.sessionSecret);
    expect(jwt.valid).to.equal(true);
    expect(jwt.header).to.deep.equal({ alg: 'HS256', typ: 'JWT' });
    expect(jwt.claims.exp * 1000).to.equal(Date.parse(expires_at));
    expect(Date.parse(expires_at)).to.be.greaterThan(clock.now());
    expect(jwt.claims.email).to.equal('ada@example.com');
    expect(verifyHs256(session_token, 'another secret').valid).to.equal(false);

    const url = new URL(widget_url);
    expect(url.searchParams.get('session_token')).to.equal(session_token);
    expect(widget_url.startsWith(t.emu.url)).to.equal(true);
    const page = await call(t.emu, 'GET', `${url.pathname}${url.search}`, { key: null });
    expect(page.status).to.equal(200);
    expect(page.body).to.match(/Session valid/);

    clock.set(Date.parse(expires_at));
    const expired = await call(t.emu, 'GET', `${url.pathname}${url.search}`, { key: null });
    expect(expired.status).to.equal(401);
  });

  it('requires email unless access_token is supplied (which skips OTP)', async () => {
    const missing = await call(t.emu, 'POST', '/api/v1/widget/users/session', { body: {} });
    expect(missing.status).to.equal(400);
    expect(missing.body.error.message).to.match(/email/);
    const withToken = await call(t.emu, 'POST', '/api/v1/widget/users/session', {
      body: { access_token: 'existing-token' },
    });
    expect(withToken.status).to.equal(201);
    const { claims } = verifyHs256(withToken.body.data.session_token, t.emu.control.sessionSecret);
    expect(claims.otp_required).to.equal(false);
    const bad = await call(t.emu, 'POST', '/api/v1/widget/users/session', {
      body: { email: 'a@example.com', webhook_url: 'nope' },
    });
    expect(bad.status).to.equal(400);
  });
});

describe('emulator: ramp sessions and webhooks', () => {
  const t = useEmulator({ webhookSecret: 'whsec_test' });
  const r = useReceiver();

  it('creates a 15-minute ramp session; email and webhook_url are required', async () => {
    const before = Date.now();
    const res = await call(t.emu, 'POST', '/api/v1/ramp-widget', {
      body: {
        email: 'ada@example.com',
        webhook_url: `${r.receiver.url}/ramp`,
        quote_currency: 'EUR',
        base_currency: 'BTC',
      },
    });
    expect(res.status).to.equal(200);
    const { session_token, expires_at, widget_url } = res.body.data;
    expect(session_token).to.be.a('string');
    const lifetime = Date.parse(expires_at) - before;
    expect(lifetime).to.be.within(14 * 60_000, 15 * 60_000 + 1000);
    expect(new URL(widget_url).searchParams.get('session_token')).to.equal(session_token);
    for (const body of [{ email: 'ada@example.com' }, { webhook_url: r.receiver.url }]) {
      expect((await call(t.emu, 'POST', '/api/v1/ramp-widget', { body })).status).to.equal(400);
    }
  });

  it('fires signed ramp webhooks to the session webhook_url', async () => {
    const res = await call(t.emu, 'POST', '/api/v1/ramp-widget', {
      body: {
        email: 'ada@example.com',
        webhook_url: `${r.receiver.url}/ramp`,
        reference_id: 'buy-1',
      },
    });
    const token = res.body.data.session_token;
    const first = await t.emu.control.fireRampWebhook(token, 'ramp.purchase.completed', {
      amount: '25.00',
    });
    expect(first.ok).to.equal(true);
    await t.emu.control.fireRampWebhook('buy-1', 'ramp.purchase.failed');
    await t.emu.control.fireRampWebhook('buy-1', 'ramp.kyc.completed', { user_id: 'u-1' });
    const received = await r.receiver.waitFor(3);
    expect(received.map((d) => d.body)).to.deep.equal([
      {
        type: 'ramp.purchase.completed',
        data: { amount: '25.00', currency: 'USD', reference_id: 'buy-1' },
      },
      { type: 'ramp.purchase.failed', data: { reference_id: 'buy-1' } },
      { type: 'ramp.kyc.completed', data: { user_id: 'u-1' } },
    ]);
    const ids = new Set(received.map((d) => d.headers['x-zbd-event-id']));
    expect(ids.size).to.equal(3);
    for (const d of received) {
      expect(d.path).to.equal('/ramp');
      expect(d.headers['x-zbd-event-type']).to.equal(d.body.type);
      const expected = createHmac('sha256', 'whsec_test').update(d.raw).digest('hex');
      expect(d.headers['x-zbd-signature']).to.equal(expected);
    }
    expect(t.emu.control.webhookLog).to.have.length(3);
  });

  it('signs nothing without a secret, and fires widget webhooks too', async () => {
    t.emu.control.webhookSecret = undefined;
    const res = await call(t.emu, 'POST', '/api/v1/widget/users/session', {
      body: {
        email: 'ada@example.com',
        webhook_url: `${r.receiver.url}/widget`,
        reference_id: 'w-1',
      },
    });
    await t.emu.control.fireWidgetWebhook(res.body.data.session_token, 'widget.cashout.completed', {
      amount: 5,
    });
    const [d] = await r.receiver.waitFor(1);
    expect(d?.body).to.deep.equal({
      type: 'widget.cashout.completed',
      data: { reference_id: 'w-1', amount: 5 },
    });
    expect(d?.headers).to.not.have.property('x-zbd-signature');
    expect(d?.headers['x-zbd-event-type']).to.equal('widget.cashout.completed');
    let error: unknown;
    await t.emu.control.fireRampWebhook('no-such-session', 'ramp.purchase.failed').catch((e) => {
      error = e;
    });
    expect(error).to.be.instanceOf(Error);
  });
});
