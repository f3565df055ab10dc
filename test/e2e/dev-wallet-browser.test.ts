/**
 * The emulator's dev wallet page in a real browser (issue 16, finding 8): two players' equal
 * entry fees are told apart by their player, amounts read in sats with the msats on hover,
 * each row says its kind and status, and the buttons do what a wallet (or the dashboard)
 * would. The page's screenshot is saved under test-artifacts/, and as docs/dev-wallet.png when
 * UPDATE_SCREENSHOT=1.
 */
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import { type Browser, chromium } from 'playwright-core';
import { PaymentsApi } from '../../src/api/client.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';

const ARTIFACTS = 'test-artifacts';

describe('emulator: the dev wallet page in a browser', function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let emu: Emulator | undefined;
  let api: PaymentsApi | undefined;

  before(function () {
    needChromium(this);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await api?.close();
    await emu?.close();
  });

  it('shows whose entry each row is, in sats (msats on hover), with its kind and status', async () => {
    emu = await startEmulator({ logger: { warn() {} } });
    api = new PaymentsApi({ apiKey: emu.apiKey, baseUrl: emu.url });
    const fee = (player: string) =>
      api?.staticCharges.create({
        minAmount: 21_000n,
        maxAmount: 21_000n,
        allowedSlots: 1,
        description: 'Duel entry',
        internalId: player,
      });
    const alices = await fee('alice');
    const bobs = await fee('bob');
    emu.control.payStaticCharge(bobs?.id ?? '');
    const prize = await api.withdrawalRequests.create({
      amount: 37_800n,
      description: 'Duel prize',
      internalId: 'bob',
    });
    const user = await api.widgetUsers.create({
      reference_id: 'alice',
      email: 'alice@example.com',
    });

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } });
    await page.goto(emu.devWalletUrl);
    await page.waitForSelector('#entries tr:nth-child(4)');
    const rows = await page.$$eval('#entries tr', (trs) =>
      trs
        .slice(1)
        .map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())),
    );
    // Newest first: player, kind, amount, description, status.
    expect(rows.map((r) => r.slice(0, 5))).to.deep.equal([
      ['bob', 'reward (withdrawal request)', '37.800 sats', 'Duel prize', 'pending'],
      ['bob', 'fee (static charge)', '21 sats', 'Duel entry', 'paid'],
      ['alice', 'fee (static charge)', '21 sats', 'Duel entry', 'active'],
    ]);
    const hovers = await page.$$eval('#entries td.amount abbr', (as) => as.map((a) => a.title));
    expect(hovers).to.deep.equal(['37,800 msats', '21,000 msats', '21,000 msats']);
    expect(await page.locator('#users').textContent()).to.include('alice@example.com');
    await page.screenshot({ path: `${ARTIFACTS}/dev-wallet.png`, fullPage: true });
    if (process.env.UPDATE_SCREENSHOT) {
      await page.screenshot({ path: 'docs/dev-wallet.png', fullPage: true });
    }

    // The buttons: Pay alice's fee, Claim bob's prize, Grant alice points.
    await page.click(`button[data-pay="${alices?.id}"]`);
    await page.click(`button[data-claim="${prize.id}"]`);
    // Typed and pressed in one turn of the page's loop: its 3-second refresh redraws the table,
    // and a value typed before a redraw and pressed after it would be lost.
    await page.evaluate(`(() => {
      document.querySelector('#pts-${user.id}').value = '2500';
      document.querySelector('button[data-grant="${user.id}"]').click();
    })()`);
    const control = emu.control;
    await eventually(() => control.points(user.id, 'USDZ') === 2500, 5000, 'the points');
    expect(control.staticCharges().map((c) => c.slots)).to.deep.equal([1, 1]);
    expect(control.withdrawalRequests()[0]?.status).to.equal('completed');
    await page.waitForSelector('#users td:has-text("2,500 USDZ")');
  });
});
