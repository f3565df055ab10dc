/**
 * The arena's page with a browser wallet (issue 25): the client kit's `pay` finds the page's
 * `window.webln` (a fake injected before the page loads, which pays what it is handed through
 * the kit's `devWallet` in the test process, as a real wallet would pay it on its own), and
 * the fee is paid with one press of "Pay with your wallet"; a page without a wallet shows no
 * such button, only the QR, its `lightning:` link and the dev wallet.
 */
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Arena } from '../../examples/arena/main.js';
import { devWallet } from '../../src/client/index.js';
import { quietLogger } from '../support/game.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';
import { startArenaHeld } from './arena-support.js';

describe('example arena in a browser with a WebLN wallet', function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let arena: Arena | undefined;

  before(function () {
    needChromium(this);
  });

  after(async () => {
    await browser?.close();
    await arena?.stop();
  });

  it('pays the entry fee with one press through window.webln; without one, the QR and link', async () => {
    ({ arena } = await startArenaHeld({
      log: () => {},
      lightning: { logger: quietLogger },
    }));
    const emulator = arena.lightning.service.emulator;
    if (!emulator) throw new Error('the arena runs on its emulator here');
    const wallet = devWallet(emulator.devWalletUrl);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    /** What the page's wallet was asked to do. */
    const asked: string[] = [];
    const open = async (name: string, withWallet: boolean): Promise<Page> => {
      const page = (await (await browser?.newContext())?.newPage()) as Page;
      if (withWallet) {
        await page.exposeFunction('testWalletPays', async (code: string) => {
          asked.push(code);
          return wallet.pay(code);
        });
        // As text: a function would be sent as its source, which tsx's transform changes.
        await page.addInitScript({
          content: `window.webln = {
            enable: async () => {},
            sendPayment: async () => { throw new Error('this test wallet pays LNURLs only'); },
            lnurl: async (code) => { await window.testWalletPays(code); return { status: 'OK' }; },
          };`,
        });
      }
      await page.goto(arena?.url as string);
      await page.fill('#name', name);
      await page.click('#join-button');
      await page.waitForSelector('#game:not([hidden])');
      return page;
    };
    const alice = await open('Alice', true);
    const bob = await open('Bob', false);
    // With two players the round asks each for the entry fee.
    for (const page of [alice, bob]) await page.waitForSelector('[aria-label="Entry fee QR code"]');

    // Bob's page has no wallet: the QR, tappable as a lightning: link, and the dev wallet.
    expect(await bob.locator('text=Pay with your wallet').count()).to.equal(0);
    const link = await bob.locator('.entry a.qr').getAttribute('href');
    expect(link).to.match(/^lightning:LNURL1[0-9A-Z]+$/);
    await bob.waitForSelector('text=Pay with dev wallet');

    await alice.click('text=Pay with your wallet');
    // The entry's status says it was paid (the row is drawn again then, the button gone).
    await alice.waitForSelector('.entry .status.completed', { timeout: 20_000 });
    expect(asked).to.have.length(1);
    expect(asked[0]).to.match(/^lnurl1[0-9a-z]+$/);
    await bob.waitForSelector('#pot:has-text("1 of 2 paid")');
  });
});
