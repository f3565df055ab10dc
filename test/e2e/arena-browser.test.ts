/**
 * The example game in a real browser: two players in two Chromium contexts sign in (each page
 * gets its own token from `POST /auth`), join the arena, pay their entry fees through the dev
 * wallet, play a round, and only the winner's page shows the prize QR code; the winner claims
 * it and sees it completed. In the shop, a purchase whose answer is lost says "not confirmed
 * yet" and then shows the outcome. Screenshots are saved under test-artifacts/ (and the
 * round's screenshot under docs/ when UPDATE_SCREENSHOT=1).
 */
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { startArena } from '../../examples/arena/main.js';
import { quietLogger } from '../support/game.js';
import { CHROMIUM, needChromium } from '../support/needs.js';
import { freePort } from '../support/ports.js';

const DEPLETE = '/api/v1/widget/users/deplete';

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
    // One attempt per API call, so that a lost answer is ambiguous at once (the shop step).
    arena = await startArena({
      port,
      log: () => {},
      lightning: { logger: quietLogger, api: { maxRetries: 0 } },
    });
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
    const open = async (name: string) => {
      const context = await browser?.newContext({ viewport: { width: 760, height: 1000 } });
      const page = (await context?.newPage()) as Page;
      await page.goto(arena?.url as string);
      await page.fill('#name', name);
      await page.click('#join-button');
      await page.waitForSelector('#game:not([hidden])');
      return page;
    };
    const alice = await open('Alice');
    const bob = await open('Bob');
    // Who each page is: the player id in the token the server gave it.
    const idOf = async (page: Page) => {
      const token = (await page.evaluate(() => sessionStorage.getItem('arena.token'))) as string;
      return arena?.auth.verify(token) as string;
    };
    const aliceId = await idOf(alice);
    expect(aliceId).to.not.equal(await idOf(bob));

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
    // Player ids stay on the server: never shown to anyone.
    expect(await bob.content()).not.to.contain(aliceId);
    expect(await alice.content()).not.to.contain(aliceId);
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

    // The deplete goes through but its answer is lost: the page says so, then the outcome.
    arena.lightning.emulator?.control.faults.add({
      method: 'POST',
      path: DEPLETE,
      mode: 'process-then-destroy',
      times: 1,
    });
    await bob.click('text=speed boots');
    await bob.waitForSelector('#shop-message:has-text("not confirmed yet")');
    await bob.waitForSelector('.entry:has-text("speed boots") .status.unknown');
    await bob.screenshot({ path: `${ARTIFACTS}/arena-5-not-confirmed.png` });
    await bob.waitForSelector('#shop-message:has-text("bought")', { timeout: 20_000 });
    await bob.waitForSelector(
      '.players li:has-text("Bob (you)"):has-text("owns golden hat, speed boots")',
    );
    await bob.waitForSelector('.entry:has-text("speed boots") .status.completed');
    await bob.screenshot({ path: `${ARTIFACTS}/arena-6-confirmed.png` });

    // A reload is the same player: the kept token is renewed for the same id, the same seat.
    await alice.reload();
    await alice.fill('#name', 'Alice');
    await alice.click('#join-button');
    await alice.waitForSelector('.players li:has-text("Alice (you)"):has-text("1 wins")');
    expect(await idOf(alice)).to.equal(aliceId);
  });
});
