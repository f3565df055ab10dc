/**
 * Every call of the client against the emulator: what comes back is typed, and it is what
 * the emulator's control reports about the same resource.
 */

import { expect } from 'chai';
import type {
  DepleteResult,
  DisclosureAcceptance,
  Payment,
  RampSessionAnswer,
  StaticCharge,
  Wallet,
  WidgetSessionAnswer,
  WidgetUser,
  WithdrawalRequest,
} from '../../src/api/index.js';
import { decodeLnurl, ManualClock } from '../../src/emulator/index.js';
import { verifyJwt } from '../../src/emulator/sessions.js';
import { useClientAndEmulator } from './setup.js';

const START = Date.UTC(2025, 5, 1, 12, 0, 0);

describe('e2e client -> emulator: every call', () => {
  let clock: ManualClock;
  const t = useClientAndEmulator(() => {
    clock = new ManualClock(START);
    return { clock };
  });

  it('wallet.get: balance in sats is the control wallet (msat) / 1000, rounded down', async () => {
    const wallet: Wallet = await t.api.wallet.get();
    expect(wallet.balance).to.equal(t.emu.control.wallet() / 1000);
    expect(wallet.balance).to.equal(1_000_000);
    t.emu.control.setWallet(123_456_789);
    expect((await t.api.wallet.get()).balance).to.equal(123_456);
    expect(wallet).to.include({ unit: 'sats' }); // unknown fields are kept
  });

  it('payments.send and payments.get: the payment the emulator recorded', async () => {
    const sent: Payment = await t.api.payments.send({
      amount: 21_000n,
      description: 'tournament prize',
      internalId: 'player-7',
      invoice: 'lnbc210n1fakeinvoice',
    });
    const [recorded, ...others] = t.emu.control.payments();
    expect(others).to.have.length(0);
    expect(recorded).to.include({
      id: sent.id,
      amount: '21000',
      description: 'tournament prize',
      internalId: 'player-7',
    });
    expect(sent).to.include({
      status: 'completed',
      amount: '21000',
      description: 'tournament prize',
      internalId: 'player-7',
      invoice: 'lnbc210n1fakeinvoice',
    });
    const read: Payment = await t.api.payments.get(sent.id);
    expect(read).to.deep.equal(sent);
    expect(read.status).to.equal(recorded?.status);
    expect(read.preimage)
      .to.equal(recorded?.preimage)
      .and.to.match(/^[0-9a-f]{64}$/);
  });

  it('withdrawalRequests.create and .get: fields, LNURL code and expiry match the control', async () => {
    const created: WithdrawalRequest = await t.api.withdrawalRequests.create({
      amount: 50_000n,
      description: 'Winner of round 12',
      internalId: 'player-42',
      callbackUrl: 'http://127.0.0.1:9/callbacks/tok',
      expiresIn: 600,
    });
    const [recorded, ...others] = t.emu.control.withdrawalRequests();
    expect(others).to.have.length(0);
    expect(recorded).to.deep.equal({ projectId: t.emu.projectId, ...created });
    expect(created).to.include({
      unit: 'msats',
      amount: '50000',
      status: 'pending',
      description: 'Winner of round 12',
      internalId: 'player-42',
      callbackUrl: 'http://127.0.0.1:9/callbacks/tok',
      createdAt: new Date(START).toISOString(),
      expiresAt: new Date(START + 600_000).toISOString(),
    });
    expect(created.invoice.expiresAt).to.equal(created.expiresAt);
    expect(decodeLnurl(created.invoice.request)).to.equal(
      `${t.emu.url}/lnurl/withdraw/${created.id}`,
    );
    expect(created.invoice.uri).to.equal(`lightning:${created.invoice.request}`);

    const read: WithdrawalRequest = await t.api.withdrawalRequests.get(created.id);
    expect(read).to.deep.equal(created);
  });

  it('staticCharges.create, .get and .update: the charge the control reports', async () => {
    const created: StaticCharge = await t.api.staticCharges.create({
      minAmount: 10_000,
      maxAmount: '20000',
      description: 'Entry fee',
      successMessage: 'You are in!',
      allowedSlots: 5,
      internalId: 'room-3',
      callbackUrl: 'http://127.0.0.1:9/charges/tok',
    });
    expect(created).to.include({
      unit: 'msats',
      slots: 0,
      minAmount: '10000',
      maxAmount: '20000',
      description: 'Entry fee',
      successMessage: 'You are in!',
      allowedSlots: 5,
      internalId: 'room-3',
      status: 'active',
      expiresAt: null,
    });
    expect(decodeLnurl(created.invoice.request)).to.equal(`${t.emu.url}/lnurl/pay/${created.id}`);
    expect(created.invoice.uri).to.equal(`lightning:${created.invoice.request}`);
    expect(t.emu.control.staticCharges()).to.deep.equal([
      { projectId: t.emu.projectId, ...created },
    ]);

    expect(await t.api.staticCharges.get(created.id)).to.deep.equal(created);

    clock.advance(1000);
    const updated: StaticCharge = await t.api.staticCharges.update(created.id, {
      description: 'Entry fee (finals)',
      maxAmount: 30_000n,
    });
    expect(updated).to.include({
      id: created.id,
      description: 'Entry fee (finals)',
      minAmount: '10000',
      maxAmount: '30000',
      successMessage: 'You are in!',
      allowedSlots: 5,
      status: 'active',
    });
    expect(t.emu.control.staticCharges()[0]).to.include({
      description: 'Entry fee (finals)',
      maxAmount: '30000',
    });
    expect(await t.api.staticCharges.get(created.id)).to.deep.equal(updated);
  });

  it('widgetUsers.create: the user the control lists; again with the same reference_id: the same user', async () => {
    const user: WidgetUser = await t.api.widgetUsers.create({
      reference_id: 'player-1',
      email: 'ada@example.com',
    });
    expect(user).to.include({ reference_id: 'player-1', email: 'ada@example.com' });
    expect(user.outstanding_disclosures).to.deep.equal([2, 3, 6]);
    expect(t.emu.control.users()).to.deep.equal([{ projectId: t.emu.projectId, ...user }]);

    const again = await t.api.widgetUsers.create({
      reference_id: 'player-1',
      email: 'ada@example.com',
    });
    expect(again.id).to.equal(user.id);
    expect(t.emu.control.users()).to.have.length(1);
  });

  it('widgetUsers.update: the new email is what the control reports', async () => {
    const user = await t.api.widgetUsers.create({ reference_id: 'p2', email: 'old@example.com' });
    const updated: WidgetUser = await t.api.widgetUsers.update(user.id, {
      email: 'new@example.com',
    });
    expect(updated).to.include({ id: user.id, reference_id: 'p2', email: 'new@example.com' });
    expect(t.emu.control.users()[0]).to.include({ id: user.id, email: 'new@example.com' });
  });

  it('widgetUsers.acceptDisclosures: accepted types leave the outstanding list', async () => {
    const user = await t.api.widgetUsers.create({ reference_id: 'p3', email: 'p3@example.com' });
    const accepted: DisclosureAcceptance = await t.api.widgetUsers.acceptDisclosures(
      user.id,
      [2, 6, 2],
    );
    expect(accepted.acceptedDisclosureTypeIds).to.deep.equal([2, 6]);
    expect(t.emu.control.users()[0]?.outstanding_disclosures).to.deep.equal([3]);
    expect(t.emu.control.count('POST', `/api/v1/widget/users/${user.id}/disclosures`)).to.equal(1);
  });

  it('widgetUsers.deplete: the transfer the control recorded, and the points it took', async () => {
    const userId = t.emu.control.createUser({ email: 'p4@example.com', referenceId: 'p4' });
    t.emu.control.setPoints(userId, 'USDZ', 1000);
    const result: DepleteResult = await t.api.widgetUsers.deplete({ user_id: userId, amount: 250 });
    expect(result.status).to.equal('COMPLETED');
    expect(result.idempotencyKey).to.match(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(t.emu.control.transfers()).to.have.length(1);
    expect(t.emu.control.transfers()[0]).to.include({
      transferId: result.transfer_id,
      userId,
      amount: 250,
      currency: 'USDZ',
      idempotencyKey: result.idempotencyKey,
      status: 'COMPLETED',
    });
    expect(t.emu.control.points(userId, 'USDZ')).to.equal(750);
  });

  it('widgetSessions.create: a JWT signed by the emulator, valid one hour, in widget_url', async () => {
    const session: WidgetSessionAnswer = await t.api.widgetSessions.create({
      email: 'p5@example.com',
      reference_id: 'sess-1',
      webhook_url: 'http://127.0.0.1:9/widget-hooks',
      metadata: { room: 'r1' },
    });
    const claims = verifyJwt(t.emu.control.sessionSecret, session.session_token, START);
    expect(claims).to.include({ kind: 'widget', email: 'p5@example.com', reference_id: 'sess-1' });
    expect(session.expires_at).to.equal(new Date(START + 3_600_000).toISOString());
    const url = new URL(session.widget_url);
    expect(`${url.origin}${url.pathname}`).to.equal(`${t.emu.url}/_emulator/widget`);
    expect(url.searchParams.get('session_token')).to.equal(session.session_token);
    const [recorded, ...others] = t.emu.control.sessions('widget');
    expect(others).to.have.length(0);
    expect(recorded).to.include({
      token: session.session_token,
      referenceId: 'sess-1',
      webhookUrl: 'http://127.0.0.1:9/widget-hooks',
      expiresAt: Date.parse(session.expires_at),
    });
    expect(recorded?.metadata).to.deep.equal({ room: 'r1' });
  });

  it('widgetSessions.create with an access_token: no email needed, OTP skipped', async () => {
    const session = await t.api.widgetSessions.create({ access_token: 'tok-123' });
    const claims = verifyJwt(t.emu.control.sessionSecret, session.session_token, START);
    expect(claims).to.include({ otp_required: false });
    expect(t.emu.control.sessions('widget')[0]).to.include({ otpSkipped: true, email: null });
  });

  it('ramp.createSession: a 15-minute purchase session the control knows', async () => {
    const session: RampSessionAnswer = await t.api.ramp.createSession({
      email: 'buyer@example.com',
      webhook_url: 'http://127.0.0.1:9/ramp-hooks',
      quote_currency: 'EUR',
      base_currency: 'BTC',
      destination: 'buyer@zbd.gg',
      reference_id: 'buy-1',
    });
    expect(verifyJwt(t.emu.control.sessionSecret, session.session_token, START)).to.include({
      kind: 'ramp',
    });
    expect(session.expires_at).to.equal(new Date(START + 15 * 60_000).toISOString());
    const [recorded, ...others] = t.emu.control.sessions('ramp');
    expect(others).to.have.length(0);
    expect(recorded).to.include({
      token: session.session_token,
      email: 'buyer@example.com',
      quoteCurrency: 'EUR',
      baseCurrency: 'BTC',
      destination: 'buyer@zbd.gg',
      referenceId: 'buy-1',
    });
    expect(t.emu.control.sessions('widget')).to.have.length(0);
  });

  it('sends each call once, on the path of the README table', async () => {
    const user = await t.api.widgetUsers.create({ reference_id: 'x', email: 'x@example.com' });
    t.emu.control.setPoints(user.id, 'USDZ', 10);
    const wr = await t.api.withdrawalRequests.create({ amount: 10_000, description: 'd' });
    const sc = await t.api.staticCharges.create({
      minAmount: 1000,
      maxAmount: 1000,
      description: 'd',
    });
    const p = await t.api.payments.send({ amount: 1, description: 'd', internalId: 'i' });
    await Promise.all([
      t.api.wallet.get(),
      t.api.payments.get(p.id),
      t.api.withdrawalRequests.get(wr.id),
      t.api.staticCharges.get(sc.id),
      t.api.staticCharges.update(sc.id, { description: 'e' }),
      t.api.widgetUsers.update(user.id, { email: 'y@example.com' }),
      t.api.widgetUsers.acceptDisclosures(user.id, [3]),
      t.api.widgetUsers.deplete({ user_id: user.id, amount: 10 }),
      t.api.widgetSessions.create({ email: 'y@example.com' }),
      t.api.ramp.createSession({ email: 'y@example.com', webhook_url: 'http://127.0.0.1:9/r' }),
    ]);
    const expected: Array<[string, string]> = [
      ['GET', '/v0/wallet'],
      ['POST', '/v0/payments'],
      ['GET', `/v0/payments/${p.id}`],
      ['POST', '/v0/withdrawal-requests'],
      ['GET', `/v0/withdrawal-requests/${wr.id}`],
      ['POST', '/v0/static-charges'],
      ['GET', `/v0/static-charges/${sc.id}`],
      ['PATCH', `/v0/static-charges/${sc.id}`],
      ['POST', '/api/v1/widget/users'],
      ['PATCH', `/api/v1/widget/users/${user.id}`],
      ['POST', `/api/v1/widget/users/${user.id}/disclosures`],
      ['POST', '/api/v1/widget/users/deplete'],
      ['POST', '/api/v1/widget/users/session'],
      ['POST', '/api/v1/ramp-widget'],
    ];
    for (const [method, path] of expected) {
      expect(t.emu.control.count(method, path), `${method} ${path}`).to.equal(1);
    }
    expect(t.emu.control.requests).to.have.length(expected.length);
  });
});
