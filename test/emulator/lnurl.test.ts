import { createHash, createPublicKey, verify } from 'node:crypto';
import * as secp from '@noble/secp256k1';
import { bech32 } from 'bech32';
import { expect } from 'chai';
import { request } from 'undici';
import { decodeBolt11, encodeBolt11 } from '../../src/emulator/index.js';
import { call, type Loose, useEmulator, useReceiver } from './helpers.js';

/** What a wallet does with a scanned code: bech32-decode it to the URL. */
function lnurlToUrl(code: string): string {
  const { prefix, words } = bech32.decode(code.replace(/^lightning:/i, '').toLowerCase(), 2000);
  expect(prefix).to.equal('lnurl');
  return Buffer.from(bech32.fromWords(words)).toString('utf8');
}

async function getJson(url: string): Promise<Loose> {
  const res = await request(url);
  return res.body.json();
}

/**
 * What a paying wallet checks before it pays: the signature over sha256(hrp || data words as
 * bytes) is valid and low-S for the payee key of tag n, and the recovery id recovers that
 * same key (wallets reading invoices without tag n rely on it). Verified with
 * @noble/secp256k1 and, as a second implementation, node:crypto (OpenSSL).
 */
function walletChecks(pr: string) {
  const { prefix, words } = bech32.decode(pr, 8192);
  const data = words.slice(0, -104);
  let bits = '';
  for (const w of data) bits += w.toString(2).padStart(5, '0');
  bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0');
  const bytes = Buffer.from(bits.match(/.{8}/g)?.map((b) => Number.parseInt(b, 2)) ?? []);
  const signed = Buffer.concat([Buffer.from(prefix), bytes]);
  const hash = createHash('sha256').update(signed).digest();
  const decoded = decodeBolt11(pr);
  const payee = Buffer.from(decoded.payeeNodeKey ?? '', 'hex');
  const signature = Buffer.from(decoded.signature, 'hex');
  const recovered = secp.recoverPublicKey(
    Buffer.concat([Buffer.from([decoded.recoveryId]), signature]),
    hash,
    { prehash: false },
  );
  const spki = Buffer.concat([
    Buffer.from('3036301006072a8648ce3d020106052b8104000a032200', 'hex'),
    payee,
  ]);
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  return {
    verifies: secp.verify(signature, hash, payee, { prehash: false, lowS: true }),
    recoversPayee: Buffer.from(recovered).equals(payee),
    opensslVerifies: verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature),
  };
}

const ACCEPTED = { verifies: true, recoversPayee: true, opensslVerifies: true };

describe('emulator: LNURL', () => {
  const t = useEmulator();
  const r = useReceiver();

  it('LUD-03: a wallet claims a withdrawal request over HTTP', async () => {
    const created = await call(t.emu, 'POST', '/v0/withdrawal-requests', {
      body: { amount: '21000', description: 'reward', expiresIn: 300, callbackUrl: r.receiver.url },
    });
    const wr = created.body.data;
    const url = lnurlToUrl(wr.invoice.request);
    expect(url.startsWith(t.emu.url)).to.equal(true);
    const params = await getJson(url);
    expect(params).to.include({
      tag: 'withdrawRequest',
      defaultDescription: 'reward',
      minWithdrawable: 21000,
      maxWithdrawable: 21000,
    });
    expect(params.k1).to.match(/^[0-9a-f]{64}$/);

    // LUD-08: the fast form carries the same parameters in the query.
    const fast = new URL(lnurlToUrl(wr.invoice.fastRequest));
    expect(fast.searchParams.get('k1')).to.equal(params.k1);
    expect(fast.searchParams.get('callback')).to.equal(params.callback);

    const before = t.emu.control.wallet();
    const claim = (k1: string, pr: string) =>
      getJson(`${params.callback}?k1=${k1}&pr=${encodeURIComponent(pr)}`);
    const good = encodeBolt11({ amountMsat: 21000, description: 'my wallet' });
    expect((await claim('00'.repeat(32), good)).status).to.equal('ERROR');
    const tooMuch = await claim(params.k1, encodeBolt11({ amountMsat: 22000 }));
    expect(tooMuch).to.include({ status: 'ERROR' });
    expect(tooMuch.reason).to.match(/maxWithdrawable/);
    expect((await claim(params.k1, encodeBolt11({ amountMsat: null }))).reason).to.match(
      /Amountless/,
    );
    expect((await claim(params.k1, 'lnbcnonsense')).status).to.equal('ERROR');
    expect(t.emu.control.wallet()).to.equal(before);

    expect(await claim(params.k1, good)).to.deep.equal({ status: 'OK' });
    expect(t.emu.control.wallet()).to.equal(before - 21000);
    expect(
      (await call(t.emu, 'GET', `/v0/withdrawal-requests/${wr.id}`)).body.data.status,
    ).to.equal('completed');
    const again = await claim(params.k1, good);
    expect(again.status).to.equal('ERROR');
    expect((await getJson(url)).status).to.equal('ERROR');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received.map((d) => d.body.status)).to.deep.equal(['completed']);
  });

  it('LUD-06: a payer gets an invoice for a static charge and control.payInvoice settles it', async () => {
    const created = await call(t.emu, 'POST', '/v0/static-charges', {
      body: {
        minAmount: '5000',
        maxAmount: '9000',
        description: 'Entry fee',
        successMessage: 'See you in the arena',
        allowedSlots: 1,
        callbackUrl: r.receiver.url,
      },
    });
    const charge = created.body.data;
    expect(charge.invoice.uri).to.equal(`lightning:${charge.invoice.request}`);
    const url = lnurlToUrl(charge.invoice.request);
    const params = await getJson(url);
    expect(params).to.include({ tag: 'payRequest', minSendable: 5000, maxSendable: 9000 });
    expect(JSON.parse(params.metadata)).to.deep.equal([['text/plain', 'Entry fee']]);

    const outOfRange = await getJson(`${params.callback}?amount=9001`);
    expect(outOfRange.status).to.equal('ERROR');

    const answer = await getJson(`${params.callback}?amount=7000`);
    expect(answer.routes).to.deep.equal([]);
    expect(answer.successAction).to.deep.equal({ tag: 'message', message: 'See you in the arena' });
    const invoice = decodeBolt11(answer.pr);
    expect(answer.pr.startsWith('lnbc70n1')).to.equal(true);
    expect(invoice.amountMsat).to.equal(7000n);
    expect(invoice.descriptionHash).to.equal(
      createHash('sha256').update(params.metadata).digest('hex'),
    );
    expect(invoice.paymentHash).to.match(/^[0-9a-f]{64}$/);
    expect(walletChecks(answer.pr)).to.deep.equal(ACCEPTED);

    const wallet = t.emu.control.wallet();
    const paid = t.emu.control.payInvoice(answer.pr);
    expect(paid).to.include({ status: 'OK', chargeId: charge.id, amountMsat: 7000 });
    expect(
      createHash('sha256')
        .update(Buffer.from((paid as { preimage: string }).preimage, 'hex'))
        .digest('hex'),
    ).to.equal(invoice.paymentHash);
    expect(t.emu.control.wallet()).to.equal(wallet + 7000);
    expect(t.emu.control.payInvoice(answer.pr).status).to.equal('ERROR');
    const read = await call(t.emu, 'GET', `/v0/static-charges/${charge.id}`);
    expect(read.body.data).to.include({ slots: 1, status: 'inactive' });
    expect((await getJson(url)).status).to.equal('ERROR');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received.map((d) => [d.body.slots, d.body.status])).to.deep.equal([
      [1, 'inactive'],
    ]);
  });

  it('encodes BOLT11 amounts with the right multiplier', () => {
    const cases: Array<[number, string]> = [
      [1, 'lnbc10p1'],
      [1000, 'lnbc10n1'],
      [250_000, 'lnbc2500n1'],
      [100_000_000, 'lnbc1m1'],
      [150_000_000_000, 'lnbc1500m1'],
      [100_000_000_000, 'lnbc11'],
    ];
    for (const [msat, prefix] of cases) {
      const pr = encodeBolt11({ amountMsat: msat, description: 'x' });
      expect(pr.startsWith(prefix), `${msat} -> ${pr.slice(0, 12)}`).to.equal(true);
      expect(decodeBolt11(pr).amountMsat).to.equal(BigInt(msat));
      expect(walletChecks(pr)).to.deep.equal(ACCEPTED);
    }
    // The checks can fail: the same data and signature under another amount is a forgery.
    const pr = encodeBolt11({ amountMsat: 1000, description: 'x' });
    const forged = bech32.encode('lnbc20n', bech32.decode(pr, 8192).words, 8192);
    expect(walletChecks(forged)).to.deep.equal({
      verifies: false,
      recoversPayee: false,
      opensslVerifies: false,
    });
  });
});

describe('emulator: dev wallet', () => {
  const t = useEmulator();
  /** What the dev wallet page sends: no API key, the key of this start. */
  let keyed: { key: null; headers: Record<string, string> };
  beforeEach(() => {
    keyed = { key: null, headers: { 'x-emulator-key': t.emu.controlKey } };
  });

  it('claims and pays over HTTP under /_emulator/ with the dev wallet key, and sends no CORS headers', async () => {
    const wr = (
      await call(t.emu, 'POST', '/v0/withdrawal-requests', {
        body: { amount: '15000', description: 'r' },
      })
    ).body.data;
    const sc = (
      await call(t.emu, 'POST', '/v0/static-charges', {
        body: { minAmount: '3000', maxAmount: '8000', description: 'f' },
      })
    ).body.data;

    const state = await call(t.emu, 'GET', '/_emulator/state', keyed);
    expect(state.body.withdrawalRequests.map((w: { id: string }) => w.id)).to.deep.equal([wr.id]);
    expect(state.body.staticCharges.map((c: { id: string }) => c.id)).to.deep.equal([sc.id]);

    // No other origin may call it: a browser's preflight gets no CORS headers.
    const preflight = await call(
      t.emu,
      'OPTIONS',
      `/_emulator/withdrawal-requests/${wr.id}/claim`,
      {
        key: null,
        headers: {
          origin: 'http://game.local',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-emulator-key',
        },
      },
    );
    expect(preflight.headers['access-control-allow-origin']).to.equal(undefined);

    const before = t.emu.control.wallet();
    const claim = await call(t.emu, 'POST', `/_emulator/withdrawal-requests/${wr.id}/claim`, keyed);
    expect(claim.status).to.equal(200);
    expect(claim.body).to.deep.equal({ status: 'OK' });
    expect(claim.headers['access-control-allow-origin']).to.equal(undefined);
    const second = await call(
      t.emu,
      'POST',
      `/_emulator/withdrawal-requests/${wr.id}/claim`,
      keyed,
    );
    expect(second.status).to.equal(400);
    expect(second.body.status).to.equal('ERROR');

    const pay = await call(t.emu, 'POST', `/_emulator/static-charges/${sc.id}/pay`, {
      ...keyed,
      body: { amountMsat: 4000 },
    });
    expect(pay.body.status).to.equal('OK');
    const payDefault = await call(t.emu, 'POST', `/_emulator/static-charges/${sc.id}/pay`, keyed);
    expect(payDefault.body).to.include({ status: 'OK', amountMsat: 3000 });
    expect(t.emu.control.wallet()).to.equal(before - 15000 + 4000 + 3000);

    const params = await getJson(lnurlToUrl(sc.invoice.request));
    const { pr } = await getJson(`${params.callback}?amount=5000`);
    const paidByHttp = await call(t.emu, 'POST', '/_emulator/pay-invoice', {
      ...keyed,
      body: { pr },
    });
    expect(paidByHttp.body.status).to.equal('OK');
    const unknown = await call(t.emu, 'POST', '/_emulator/pay-invoice', {
      ...keyed,
      body: { pr: encodeBolt11({ amountMsat: 5000 }) },
    });
    expect(unknown.body.status).to.equal('ERROR');
    expect(t.emu.control.staticCharges()[0]?.slots).to.equal(3);

    const after = await call(t.emu, 'GET', '/_emulator/state', keyed);
    expect(after.body.withdrawalRequests).to.have.length(0);
    const page = await call(t.emu, 'GET', '/_emulator/', keyed);
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/html/);
    expect(page.body).to.match(/Claim/);
  });

  it('lists every entry with its player, kind and status, newest first, and grants a player points', async () => {
    const fee = (player: string) =>
      call(t.emu, 'POST', '/v0/static-charges', {
        body: {
          minAmount: '21000',
          maxAmount: '21000',
          allowedSlots: 1,
          description: 'Duel entry',
          internalId: player,
        },
      });
    const alices = (await fee('alice')).body.data;
    const bobs = (await fee('bob')).body.data;
    t.emu.control.payStaticCharge(bobs.id);
    const state = (await call(t.emu, 'GET', '/_emulator/state', keyed)).body;
    expect(
      state.entries.map((e: Loose) => [e.player, e.kind, e.minMsat, e.status, e.open]),
    ).to.deep.equal([
      ['bob', 'staticCharge', '21000', 'inactive', false],
      ['alice', 'staticCharge', '21000', 'active', true],
    ]);
    expect(state.staticCharges.map((c: Loose) => c.id)).to.deep.equal([alices.id]);

    const userId = t.emu.control.createUser({ email: 'a@example.com', referenceId: 'alice' });
    const grant = (body: unknown) =>
      call(t.emu, 'POST', `/_emulator/users/${userId}/points`, { ...keyed, body });
    expect((await grant({ amount: 1500 })).body).to.deep.equal({
      status: 'OK',
      currency: 'USDZ',
      points: 1500,
    });
    expect((await grant({ amount: '500' })).body.points).to.equal(2000);
    expect((await grant({ amount: -1 })).status).to.equal(400);
    expect(t.emu.control.points(userId, 'USDZ')).to.equal(2000);
    const users = (await call(t.emu, 'GET', '/_emulator/state', keyed)).body.users;
    expect(users).to.deep.equal([
      {
        id: userId,
        projectId: 'default',
        player: 'alice',
        // No name: the game gave none (control.namePlayers).
        playerName: null,
        email: 'a@example.com',
        points: { USDZ: 2000 },
      },
    ]);
  });
});
