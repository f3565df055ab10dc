/**
 * `devWallet`: refuses anything but the emulator before a code leaves (no key in the URL, a
 * server that is not the emulator, an emulator of another start), then pays entry fees and
 * invoices and claims rewards on a real emulator, as a player's wallet would, and says why
 * when the emulator refuses.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import {
  ConfigurationError,
  DevWalletError,
  devWallet,
  devWalletTarget,
  InvalidArgumentError,
  LightningError,
} from '../../src/client/index.js';
import { call, useEmulator } from '../emulator/helpers.js';

/** A server that is not the emulator: answers `answer` to everything, records each path. */
async function impostor(answer: { status: number; body: string }) {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, paths, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('client kit: devWallet', () => {
  const t = useEmulator();

  const newFee = async (minAmount = '5000', maxAmount = '9000') =>
    (
      await call(t.emu, 'POST', '/v0/static-charges', {
        body: { minAmount, maxAmount, description: 'Entry fee', allowedSlots: 1 },
      })
    ).body.data as { id: string; invoice: { request: string } };
  const newReward = async (amount = '21000') =>
    (
      await call(t.emu, 'POST', '/v0/withdrawal-requests', {
        body: { amount, description: 'Prize', expiresIn: 300 },
      })
    ).body.data as { id: string; invoice: { request: string } };

  it('refuses a URL that cannot be the dev wallet, at once', () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/_emulator/#key=k', t.emu.url]) {
      expect(() => devWallet(url), url)
        .to.throw(ConfigurationError)
        .with.property('field', 'url');
    }
    expect(() => devWallet(t.emu.url)).to.throw(/carries no dev wallet key/);
  });

  it('refuses a server that is not the emulator, before any code is sent to it', async () => {
    const fee = await newFee();
    for (const answer of [
      { status: 404, body: '{"success":false,"message":"Not found"}' },
      { status: 200, body: '{"status":"OK"}' },
      { status: 200, body: '<html>' },
    ]) {
      const other = await impostor(answer);
      try {
        const wallet = devWallet(`${other.url}/_emulator/#key=${t.emu.controlKey}`);
        const error = await wallet.pay(fee.invoice.request).catch((e: unknown) => e);
        expect(error, answer.body).to.be.instanceOf(ConfigurationError);
        expect((error as Error).message).to.include('is not a colyseus-lightning emulator');
        expect(other.paths).to.deep.equal(['GET /_emulator/state']);
        expect(other.paths.join()).to.not.include(fee.id);
      } finally {
        await other.close();
      }
    }
    expect(t.emu.control.staticCharges()[0]?.slots).to.equal(0);
  });

  it('says when the emulator cannot be reached, and asks again on the next call', async () => {
    const fee = await newFee();
    let down = true;
    const wallet = devWallet(t.emu.devWalletUrl, {
      fetch: (input, init) =>
        down ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init),
    });
    const error = await wallet.pay(fee.invoice.request).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(DevWalletError);
    expect((error as Error).message).to.include('could not be reached');
    down = false;
    expect((await wallet.pay(fee.invoice.request)).amountMsat).to.equal('5000');
  });

  it('refuses the key of another start of the emulator, saying so', async () => {
    const fee = await newFee();
    const wallet = devWallet(`${t.emu.url}/_emulator/#key=not-this-start`);
    const error = await wallet.pay(fee.invoice.request).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.include('from another start of the emulator');
    expect(t.emu.control.count('POST', /^\/_emulator\//)).to.equal(0);
  });

  it('pays an entry fee (its minimum, or the amount asked) and claims a reward', async () => {
    const wallet = devWallet(t.emu.devWalletUrl);
    expect(wallet.url).to.equal(t.emu.url);
    const fee = await newFee();
    const paid = await wallet.pay(fee.invoice.request);
    expect(paid.amountMsat).to.equal('5000');
    expect(paid.preimage).to.match(/^[0-9a-f]{64}$/);
    expect(t.emu.control.staticCharges().find((c) => c.id === fee.id)?.slots).to.equal(1);

    const other = await newFee();
    expect(
      (await wallet.pay(`lightning:${other.invoice.request}`, { amountMsat: 7000n })).amountMsat,
    ).to.equal('7000');

    const reward = await newReward();
    await wallet.claim(reward.invoice.request);
    expect(t.emu.control.withdrawalRequests().find((w) => w.id === reward.id)?.status).to.equal(
      'completed',
    );
    // The emulator was checked once for this wallet, not before each call.
    expect(t.emu.control.count('GET', '/_emulator/state')).to.equal(1);
  });

  it('takes the key as an option, and pays an invoice the LNURL-pay callback issued', async () => {
    const wallet = devWallet(t.emu.url, { key: t.emu.controlKey });
    const fee = await newFee();
    const { pr } = (await (
      await fetch(`${t.emu.url}/lnurl/pay/${fee.id}/callback?amount=6000`)
    ).json()) as { pr: string };
    expect((await wallet.pay(pr)).amountMsat).to.equal('6000');
    expect(t.emu.control.staticCharges().find((c) => c.id === fee.id)?.slots).to.equal(1);
  });

  it('says why the emulator refused: a fee paid twice, a reward claimed twice', async () => {
    const wallet = devWallet(t.emu.devWalletUrl);
    const fee = await newFee();
    await wallet.pay(fee.invoice.request);
    const twice = await wallet.pay(fee.invoice.request).catch((e: unknown) => e);
    expect(twice).to.be.instanceOf(DevWalletError).and.instanceOf(LightningError);
    expect(twice).to.include({ code: 'LN_DEV_WALLET', status: 400 });
    expect((twice as DevWalletError).reason).to.equal('Static charge is inactive');

    const reward = await newReward();
    await wallet.claim(reward.invoice.request);
    const again = await wallet.claim(reward.invoice.request).catch((e: unknown) => e);
    expect(again).to.be.instanceOf(DevWalletError);
    expect((again as DevWalletError).reason).to.equal('Withdrawal request already claimed');
    expect((again as Error).message).to.include("the emulator's dev wallet refused");
  });

  it('refuses a reward given to pay, a fee given to claim, and garbage', async () => {
    const wallet = devWallet(t.emu.devWalletUrl);
    const fee = await newFee();
    const reward = await newReward();
    const refused = async (p: Promise<unknown>, pattern: RegExp) => {
      const error = await p.catch((e: unknown) => e);
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect((error as Error).message).to.match(pattern);
    };
    await refused(wallet.pay(reward.invoice.request), /reward to claim/);
    await refused(wallet.claim(fee.invoice.request), /fee to pay/);
    await refused(wallet.pay('garbage'), /not an LNURL or a BOLT11 invoice/);
    await refused(wallet.pay(fee.invoice.request, { amountMsat: '5.5' }), /amountMsat/);
    expect(t.emu.control.count('POST', /^\/_emulator\//)).to.equal(0);
  });

  it("finds what an emulator's code points at, for a game server's own dev wallet route", async () => {
    const fee = await newFee();
    const reward = await newReward();
    expect(devWalletTarget(fee.invoice.request)).to.deep.include({ kind: 'pay', id: fee.id });
    expect(devWalletTarget(reward.invoice.request)).to.deep.include({
      kind: 'withdraw',
      id: reward.id,
    });
    expect(devWalletTarget(fee.invoice.request)?.url).to.equal(`${t.emu.url}/lnurl/pay/${fee.id}`);
    expect(devWalletTarget('garbage')).to.equal(null);
  });
});
