/**
 * The example game in a real browser: two players in two Chromium contexts join the arena,
 * pay their entry fees through the dev wallet, play a round, and only the winner's page shows
 * the prize QR code; the winner claims it and sees it completed. Screenshots are saved under
 * test-artifacts/ (and the round's screenshot under docs/ when UPDATE_SCREENSHOT=1).
 */
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { startArena } from '../../examples/arena/main.js';
import { CHROMIUM, needChromium } from '../support/needs.js';
import { freePort } from '../support/ports.js';

const ARTIFACTS = 'test-artifacts';

describe('example arena in a browser', function () {
  this.timeout(90_000);
  let browser: Browser | undefined;
  let arena: Awaited<ReturnType<typeof startArena>> | undefined;

  before(function () {
    needChromium(this);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await arena?.stop();
  });

  it('two players pay, play, and only the winner sees and claims the prize', async () => {
    const port = await freePort();
    arena = await startArena(port);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const open = async (player: string, name: string) => {
      const context = await browser?.newContext({ viewport: { width: 760, height: 1000 } });
      const page = (await context?.newPage()) as Page;
      await page.goto(`${arena?.url}?player=${player}`);
      await page.fill('#name', name);
      await page.click('#join-button');
      await page.waitForSelector('#game:not([hidden])');
      return page;
    };
    const alice = await open('alice-0000-player', 'Alice');
    const bob = await open('bob-00000-player', 'Bob');

    // Each sees their own entry fee, with a QR code and the dev wallet button.
    for (const page of [alice, bob]) {
      await page.waitForSelector('canvas[aria-label="Entry fee QR code"]');
      expect(await page.locator('.entry').count()).to.equal(1);
    }
    await alice.screenshot({ path: `${ARTIFACTS}/arena-1-entry-fee.png` });
    for (const page of [alice, bob]) await page.click('text=Pay with dev wallet');
    for (const page of [alice, bob]) {
      await page.waitForSelector('.entry .status.completed', { timeout: 20_000 });
    }

    // The round: Alice clicks as soon as GO shows; Bob waits.
    await alice.waitForSelector('#click.go', { timeout: 20_000 });
    await alice.click('#click');
    await alice.waitForSelector('text=You won', { timeout: 10_000 });
    await alice.waitForSelector('canvas[aria-label="Your prize QR code"]', { timeout: 10_000 });
    await bob.waitForSelector('text=Round over.');
    await bob.waitForSelector('.players li:has-text("Alice · not paid · 1 wins")');
    expect(await bob.locator('canvas[aria-label="Your prize QR code"]').count()).to.equal(0);
    expect(await bob.locator('text=Your prize').count()).to.equal(0);
    // Player ids are bearer secrets here (joining as someone gets their codes): never shown.
    expect(await bob.content()).not.to.contain('alice-0000-player');
    await alice.screenshot({ path: `${ARTIFACTS}/arena-2-winner.png` });
    await bob.screenshot({ path: `${ARTIFACTS}/arena-2-loser.png` });
    if (process.env.UPDATE_SCREENSHOT) await alice.screenshot({ path: 'docs/arena-round.png' });

    // The winner claims through the dev wallet and sees the prize completed.
    await alice.click('text=Claim with dev wallet');
    await alice.waitForSelector('.entry:has-text("Your prize") .status.completed', {
      timeout: 20_000,
    });
    await alice.screenshot({ path: `${ARTIFACTS}/arena-3-claimed.png` });

    // The shop: points spent, and the short-balance case is a friendly message.
    await bob.click('text=golden hat');
    await bob.waitForSelector('#shop-message:has-text("You bought the golden hat")');
    await bob.click('text=lucky charm');
    await bob.waitForSelector('#shop-message:has-text("Not enough points")');
    await bob.screenshot({ path: `${ARTIFACTS}/arena-4-shop.png` });
  });
});
