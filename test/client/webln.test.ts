/**
 * `pay` and `claim` in a page: through a WebLN provider when there is one (a fake here, that
 * records what it was asked and answers as told), falling back to the QR and the link when
 * there is none, the player declines, the wallet cannot follow an LNURL, or it fails. Garbage
 * never reaches the wallet.
 */
import { expect } from 'chai';
import {
  claim,
  InvalidArgumentError,
  lightningUri,
  pay,
  qrSvg,
  type WebLNProvider,
} from '../../src/client/index.js';
import { encodeBolt11, encodeLnurl } from '../../src/emulator/index.js';

const FEE = encodeLnurl('http://127.0.0.1:43123/lnurl/pay/fee-1');
const PRIZE = encodeLnurl('http://127.0.0.1:43123/lnurl/withdraw/prize-1');
const INVOICE = encodeBolt11({ amountMsat: 21_000, description: 'test' });
const PREIMAGE = 'ab'.repeat(32);

/** A wallet that records its calls; each step answers as `how` says. */
function fakeWallet(how: { enable?: 'ok' | 'decline'; act?: 'ok' | 'fail'; lnurl?: boolean } = {}) {
  const calls: string[] = [];
  const wallet: WebLNProvider = {
    async enable() {
      calls.push('enable');
      if (how.enable === 'decline') throw new Error('User rejected');
    },
    async sendPayment(invoice: string) {
      calls.push(`sendPayment ${invoice}`);
      if (how.act === 'fail') throw new Error('route not found');
      return { preimage: PREIMAGE };
    },
  };
  if (how.lnurl !== false) {
    wallet.lnurl = async (code: string) => {
      calls.push(`lnurl ${code}`);
      if (how.act === 'fail') throw new Error('cancelled');
      return { status: 'OK' };
    };
  }
  return { wallet, calls };
}

describe('client kit: paying and claiming through WebLN, or the QR', () => {
  it('pays an entry fee LNURL with webln.lnurl, after enable', async () => {
    const { wallet, calls } = fakeWallet();
    expect(await pay(FEE, { webln: wallet })).to.deep.equal({ via: 'webln', preimage: null });
    expect(calls).to.deep.equal(['enable', `lnurl ${FEE.toLowerCase()}`]);
  });

  it('pays an invoice with webln.sendPayment and hands back the preimage', async () => {
    const { wallet, calls } = fakeWallet();
    expect(await pay(`lightning:${INVOICE}`, { webln: wallet })).to.deep.equal({
      via: 'webln',
      preimage: PREIMAGE,
    });
    expect(calls).to.deep.equal(['enable', `sendPayment ${INVOICE}`]);
  });

  it('claims a payout LNURL with webln.lnurl; an invoice is not claimed', async () => {
    const { wallet, calls } = fakeWallet();
    expect(await claim(PRIZE, { webln: wallet })).to.deep.equal({ via: 'webln', preimage: null });
    expect(calls).to.deep.equal(['enable', `lnurl ${PRIZE.toLowerCase()}`]);
    const refused = await claim(INVOICE, { webln: wallet }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(InvalidArgumentError).with.property('field', 'code');
    expect(calls).to.have.length(2);
  });

  it('says to show the QR and the link when the page has no wallet', async () => {
    expect(await pay(FEE, { webln: null })).to.deep.equal({
      via: 'show',
      reason: 'no-wallet',
      uri: lightningUri(FEE),
      svg: qrSvg(FEE),
      error: null,
    });
    const labelled = await claim(PRIZE, { webln: null, label: 'Your prize QR code' });
    expect(labelled).to.deep.include({ via: 'show', reason: 'no-wallet' });
    expect(labelled.via === 'show' && labelled.svg).to.include('aria-label="Your prize QR code"');
  });

  it('says why when the wallet is declined, cannot follow an LNURL, or fails', async () => {
    const declined = fakeWallet({ enable: 'decline' });
    const result = await pay(FEE, { webln: declined.wallet });
    expect(result).to.deep.include({ via: 'show', reason: 'declined', uri: lightningUri(FEE) });
    expect(result.via === 'show' && (result.error as Error).message).to.equal('User rejected');
    expect(declined.calls).to.deep.equal(['enable']);

    const old = fakeWallet({ lnurl: false });
    expect(await claim(PRIZE, { webln: old.wallet })).to.deep.include({
      via: 'show',
      reason: 'unsupported',
    });
    // Without lnurl it can still pay an invoice.
    expect(await pay(INVOICE, { webln: old.wallet })).to.deep.include({ via: 'webln' });

    const failing = fakeWallet({ act: 'fail' });
    const failed = await pay(INVOICE, { webln: failing.wallet });
    expect(failed).to.deep.include({ via: 'show', reason: 'failed', svg: qrSvg(INVOICE) });
    expect(failed.via === 'show' && (failed.error as Error).message).to.equal('route not found');
  });

  it("finds the page's window.webln, and ignores an object that is not a provider", async () => {
    const scope = globalThis as { webln?: unknown };
    const { wallet, calls } = fakeWallet();
    try {
      scope.webln = wallet;
      expect(await pay(FEE)).to.deep.include({ via: 'webln' });
      expect(calls).to.have.length(2);
      scope.webln = { enable: 'yes' };
      expect(await pay(FEE)).to.deep.include({ via: 'show', reason: 'no-wallet' });
    } finally {
      delete scope.webln;
    }
    expect(await pay(FEE)).to.deep.include({ via: 'show', reason: 'no-wallet' });
  });

  it('refuses garbage before any wallet sees it', async () => {
    const { wallet, calls } = fakeWallet();
    for (const bad of ['', 'not a code', `${FEE}x`]) {
      for (const act of [pay, claim]) {
        const error = await act(bad, { webln: wallet }).catch((e: unknown) => e);
        expect(error, `${act.name}(${bad})`).to.be.instanceOf(InvalidArgumentError);
      }
    }
    expect(calls).to.deep.equal([]);
  });
});
