/**
 * The example game in a real browser: two players in two Chromium contexts sign in (each page
 * gets its own token from `POST /auth`), join the arena, see the round's pot, pay their entry
 * fees through the dev wallet, play a round, and only the winner's page shows the prize QR
 * code; the winner claims it and sees it completed. In the shop, a purchase whose answer is
 * lost says "not confirmed yet" and then shows the outcome. Then a round is called off: Alice
 * pays, Bob does not by the deadline; Alice's page shows her refund QR code, she claims it
 * through the dev wallet and her history says so, and Bob's page never receives that code.
 * Last, Bob leaves a round Alice paid into, before GO: another refund, hers.
 *
 * The server runs on a ManualClock, so the pay deadline comes when the test says.
 * Screenshots are saved under test-artifacts/ (and the round's screenshot under docs/ when
 * UPDATE_SCREENSHOT=1).
 */
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { arenaConfig } from '../../examples/arena/config.js';
import type { Arena } from '../../examples/arena/main.js';
import { ManualClock } from '../../src/clock.js';
import { quietLogger } from '../support/game.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';
import { startArenaHeld } from './arena-support.js';

const DEPLETE = '/api/v1/widget/users/deplete';

const ARTIFACTS = 'test-artifacts';

describe('example arena in a browser', function () {
  this.timeout(90_000);
  let browser: Browser | undefined;
  let arena: Arena | undefined;

  before(function () {
    needChromium(this);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await arena?.stop();
  });

  it('two players pay, play, and only the winner sees and claims the prize; a round called off refunds who paid', async () => {
    const clock = new ManualClock(Date.now());
    // One attempt per API call, so that a lost answer is ambiguous at once (the shop step).
    ({ arena } = await startArenaHeld({
      log: () => {},
      // Three rounds: a short countdown, the same steps.
      config: { countdownMs: 300, goAfterMs: { min: 200, max: 400 } },
      lightning: {
        clock,
        logger: quietLogger,
        api: { maxRetries: 0 },
        reconciler: { intervalMs: 20, firstCheckMs: 2_000, maxBackoffMs: 10_000 },
      },
    }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    /** Every WebSocket frame each page received: what its player's socket was ever sent. */
    const frames = new Map<Page, Buffer[]>();
    const open = async (name: string) => {
      const context = await browser?.newContext({ viewport: { width: 760, height: 1000 } });
      const page = (await context?.newPage()) as Page;
      const received: Buffer[] = [];
      frames.set(page, received);
      page.on('websocket', (ws) =>
        ws.on('framereceived', ({ payload }) => received.push(Buffer.from(payload))),
      );
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

    // Each sees their own entry fee, with a QR code and the dev wallet button, and the pot.
    for (const page of [alice, bob]) {
      await page.waitForSelector('[aria-label="Entry fee QR code"]');
      expect(await page.locator('.entry').count()).to.equal(1);
      await page.waitForSelector('#pot:has-text("Pot 0 sats · 0 of 2 paid · 10% rake")');
    }
    await alice.screenshot({ path: `${ARTIFACTS}/arena-1-entry-fee.png`, fullPage: true });
    await alice.click('text=Pay with dev wallet');
    await bob.waitForSelector('#pot:has-text("Pot 100 sats · 1 of 2 paid")');
    await bob.waitForSelector('.players li:has-text("Alice · paid")');
    await bob.click('text=Pay with dev wallet');
    for (const page of [alice, bob]) {
      await page.waitForSelector('.entry .status.completed', { timeout: 20_000 });
    }

    // The round: Alice clicks as soon as GO shows; Bob waits.
    await alice.waitForSelector('#click.go', { timeout: 20_000 });
    await alice.click('#click');
    await alice.waitForSelector('text=You won 180 sats', { timeout: 10_000 });
    await alice.waitForSelector('[aria-label="Your prize QR code"]', { timeout: 10_000 });
    await bob.waitForSelector('#result:has-text("Alice won 180 sats.")');
    await bob.waitForSelector(
      '#last-pot:has-text("Pot 200 sats · 180 sats to the winner · 20 sats to the house (10% rake)")',
    );
    await bob.waitForSelector('.players li:has-text("Alice · paying… · 1 wins")');
    expect(await bob.locator('[aria-label="Your prize QR code"]').count()).to.equal(0);
    expect(await bob.locator('text=Your prize').count()).to.equal(0);
    // Player ids stay on the server: never shown to anyone.
    expect(await bob.content()).not.to.contain(aliceId);
    expect(await alice.content()).not.to.contain(aliceId);
    await alice.screenshot({ path: `${ARTIFACTS}/arena-2-winner.png`, fullPage: true });
    await bob.screenshot({ path: `${ARTIFACTS}/arena-2-loser.png`, fullPage: true });
    if (process.env.UPDATE_SCREENSHOT) await alice.screenshot({ path: 'docs/arena-round.png' });

    // The winner claims through the dev wallet and sees the prize completed.
    await alice.click('text=Claim with dev wallet');
    await alice.waitForSelector('.entry:has-text("Your prize") .status.completed', {
      timeout: 20_000,
    });
    // The banner follows: nothing is left to claim below.
    await alice.waitForSelector('#result:has-text("You won 180 sats and claimed it.")');
    // The operator's console (its link as npm start prints it) names players as they named
    // themselves, their ids beside.
    const signIn = await fetch(arena.consoleUrl as string, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const read = await fetch(
      new URL(`/lightning/console/api/intents?player=${aliceId}`, arena.url),
      {
        headers: { cookie, accept: 'application/json' },
      },
    );
    const { intents } = (await read.json()) as { intents: { playerName?: string }[] };
    expect(intents.length).to.be.above(0);
    expect(intents.map((i) => i.playerName)).to.deep.equal(intents.map(() => 'Alice'));
    await alice.screenshot({ path: `${ARTIFACTS}/arena-3-claimed.png`, fullPage: true });

    // The shop: points spent, and the short-balance case is a friendly message.
    await bob.click('text=golden hat');
    await bob.waitForSelector('#shop-message:has-text("You bought the golden hat")');
    await bob.click('text=lucky charm');
    await bob.waitForSelector('#shop-message:has-text("Not enough points")');
    await bob.screenshot({ path: `${ARTIFACTS}/arena-4-shop.png`, fullPage: true });

    // The deplete goes through but its answer is lost: the page says so, then the outcome.
    arena.lightning.service.emulator?.control.faults.add({
      method: 'POST',
      path: DEPLETE,
      mode: 'process-then-destroy',
      times: 1,
    });
    await bob.click('text=speed boots');
    await bob.waitForSelector('#shop-message:has-text("not confirmed yet")');
    await bob.waitForSelector('.entry:has-text("speed boots") .status.unknown');
    await bob.screenshot({ path: `${ARTIFACTS}/arena-5-not-confirmed.png`, fullPage: true });
    clock.advance(3_000); // the reconciler re-sends the deplete with the same key
    await bob.waitForSelector('#shop-message:has-text("bought")', { timeout: 20_000 });
    await bob.waitForSelector(
      '.players li:has-text("Bob (you)"):has-text("owns golden hat, speed boots")',
    );
    await bob.waitForSelector('.entry:has-text("speed boots") .status.completed');
    await bob.screenshot({ path: `${ARTIFACTS}/arena-6-confirmed.png`, fullPage: true });

    // The next round opened as the last one ended. Alice pays; Bob lets the deadline pass.
    await alice.click('.entry:has(.status.pending) >> text=Pay with dev wallet');
    await bob.waitForSelector('#pot:has-text("1 of 2 paid")');
    clock.advance(arenaConfig.feeExpiresIn * 1000);
    await alice.waitForSelector('[aria-label="Your refund QR code"]', { timeout: 10_000 });
    await alice.waitForSelector('#result:has-text("Round called off: Bob did not pay in time")');
    await alice.waitForSelector('#last-pot:has-text("Pot 100 sats · refunded to who paid")');
    await bob.waitForSelector('#result:has-text("Round called off: Bob did not pay in time")');
    await bob.waitForSelector('#again:visible');
    await bob.waitForSelector('#phase:has-text("You sit out")');
    const [refund] = await arena.lightning.books.claims(aliceId);
    expect(refund?.description).to.contain('refund');
    const code = refund?.code as string;
    await alice.screenshot({ path: `${ARTIFACTS}/arena-7-refund.png`, fullPage: true });
    await bob.screenshot({ path: `${ARTIFACTS}/arena-7-called-off.png`, fullPage: true });

    // She claims it through the dev wallet; her page says so, in her history too.
    await alice.click('.entry:has-text("Your refund") >> text=Claim with dev wallet');
    await alice.waitForSelector('.entry:has-text("Your refund") .status.completed', {
      timeout: 20_000,
    });
    await alice.waitForSelector(
      '#history li:has-text("refund"):has-text("+100 sats"):has-text("claimed")',
    );
    await alice.screenshot({ path: `${ARTIFACTS}/arena-8-refund-claimed.png`, fullPage: true });
    // Bob's socket never carried Alice's refund code, and his page never showed a refund.
    const sawCode = (page: Page) =>
      (frames.get(page) ?? []).some(
        (frame) => frame.includes(code) || frame.includes(code.toUpperCase()),
      );
    expect(sawCode(alice)).to.equal(true); // the check can see a code when one is sent
    expect(sawCode(bob)).to.equal(false);
    expect(await bob.content()).not.to.contain(code);
    expect(await bob.locator('text=Your refund').count()).to.equal(0);

    // A reload is the same player: the kept token is renewed for the same id, the same seat,
    // and the same history.
    await alice.reload();
    await alice.fill('#name', 'Alice');
    await alice.click('#join-button');
    await alice.waitForSelector('.players li:has-text("Alice (you)"):has-text("1 wins")');
    expect(await idOf(alice)).to.equal(aliceId);
    await alice.waitForSelector('#history li:has-text("refund"):has-text("claimed")');

    // Bob plays again, then leaves before GO a round Alice paid into: her fee is refunded.
    await bob.click('#again');
    await alice.waitForSelector('.entry:has(.status.pending) >> text=Pay with dev wallet');
    await alice.click('.entry:has(.status.pending) >> text=Pay with dev wallet');
    await bob.waitForSelector('#pot:has-text("1 of 2 paid")');
    await bob.context().close();
    await alice.waitForSelector('#result:has-text("Round called off: Bob left before GO")');
    await alice.waitForSelector('.entry:has-text("Your refund"):has(.status.pending) .qr svg');
    await alice.screenshot({ path: `${ARTIFACTS}/arena-9-left-before-go.png`, fullPage: true });
    expect(await arena.lightning.books.claims(aliceId)).to.have.length(1);
  });
});
