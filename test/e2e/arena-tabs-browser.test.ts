/**
 * The arena's tab in a real browser (issue 34): two players in two Chromium contexts play three
 * rounds; each round won credits Alice's tab, which her page shows in sats and in dollars (the
 * emulator's price), while a round played before her time in the room credits nothing. She
 * withdraws once, her page shows one code for the whole tab, she claims it with the dev
 * wallet and the tab reads 0. Bob's socket never carries her balance or her code.
 *
 * The server runs on a ManualClock: the time in the room passes when the test says.
 */
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Arena } from '../../examples/arena/main.js';
import { ManualClock } from '../../src/clock.js';
import { quietLogger } from '../support/game.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';
import { startArenaHeld } from './arena-support.js';

const ARTIFACTS = 'test-artifacts';
/** Amounts no fee, pot or prize of these rounds spells, so a frame that holds one holds a tab. */
const WON_MSAT = 7_777n;
const SURVIVED_MSAT = 3_333n;
const MIN_TIME_MS = 20_000;

describe('example arena in a browser: the tab (issue 34)', function () {
  this.timeout(120_000);
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

  it('a player earns three credits, withdraws once and claims; the other page never holds her balance or code', async () => {
    const clock = new ManualClock(Date.now());
    ({ arena } = await startArenaHeld({
      log: () => {},
      config: {
        roundWonCreditMsat: WON_MSAT,
        roundSurvivedCreditMsat: SURVIVED_MSAT,
        minTimeInRoomMs: MIN_TIME_MS,
        // Four rounds: the countdown is not what this test is about.
        countdownMs: 100,
        goAfterMs: { min: 100, max: 200 },
      },
      lightning: {
        clock,
        logger: quietLogger,
        fiat: { currency: 'USD' },
        reconciler: { intervalMs: 20, firstCheckMs: 2_000, maxBackoffMs: 10_000 },
      },
    }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const frames = new Map<Page, Buffer[]>();
    const open = async (name: string) => {
      const context = await browser?.newContext({ viewport: { width: 760, height: 1100 } });
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
    const tabOf = (page: Page) =>
      page
        .locator('#tab-balance')
        .textContent()
        .then((t) => t ?? '');

    /** One round: both pay their fee with the dev wallet, Alice clicks at GO and wins. */
    const round = async (n: number) => {
      for (const page of [alice, bob]) {
        await page.waitForSelector('.entry:has(.status.pending) >> text=Pay with dev wallet', {
          timeout: 20_000,
        });
        await page.click('.entry:has(.status.pending) >> text=Pay with dev wallet');
      }
      await alice.waitForSelector('#click.go', { timeout: 20_000 });
      await alice.click('#click');
      await bob.waitForSelector(`.players li:has-text("Alice"):has-text("${n} wins")`);
    };

    // The first round comes before her time in the room: it credits nothing, and says why.
    await round(1);
    await alice.waitForSelector('#tab-message:has-text("after 20 s in the arena")');
    expect(await tabOf(alice)).to.equal('0 sats ($0.00)');
    expect(await alice.locator('#withdraw').isDisabled()).to.equal(true);

    // Past it, each round won credits her tab: three credits, shown in sats and dollars.
    clock.advance(MIN_TIME_MS);
    const seen: string[] = [];
    for (const [n, sats] of [
      [2, '7.777 sats'],
      [3, '15.554 sats'],
      [4, '23.331 sats'],
    ] as const) {
      await round(n);
      await alice.waitForSelector(`#tab-balance:has-text("${sats}")`, { timeout: 10_000 });
      seen.push(await tabOf(alice));
    }
    expect(seen).to.deep.equal([
      '7.777 sats ($0.0078)',
      '15.554 sats ($0.016)',
      '23.331 sats ($0.023)',
    ]);
    await alice.screenshot({ path: `${ARTIFACTS}/arena-tab-1-credited.png`, fullPage: true });
    const aliceId = arena.auth.verify(
      (await alice.evaluate(() => sessionStorage.getItem('arena.token'))) as string,
    );
    expect(await arena.lightning.tabs.balance(aliceId)).to.equal(23_331);

    // One withdrawal: one code for the whole tab, only on her page; the tab reads 0.
    const before = arena.lightning.service.emulator?.control.withdrawalRequests().length ?? 0;
    await alice.click('#withdraw');
    await alice.waitForSelector('.entry:has-text("Your tab"):has(.status.pending) .qr svg');
    await alice.waitForSelector('#tab-balance:has-text("0 sats")');
    const requests = arena.lightning.service.emulator?.control.withdrawalRequests() ?? [];
    expect(requests.length - before).to.equal(1);
    const [claim] = (await arena.lightning.books.claims(aliceId)).filter((c) =>
      c.description.includes('Arena tab'),
    );
    expect(claim?.amountMsat).to.equal('23331');
    const code = claim?.code as string;
    await alice.screenshot({ path: `${ARTIFACTS}/arena-tab-2-withdrawn.png`, fullPage: true });

    await alice.click('.entry:has-text("Your tab") >> text=Claim with dev wallet');
    await alice.waitForSelector('.entry:has-text("Your tab") .status.completed', {
      timeout: 20_000,
    });
    await alice.waitForSelector('#history li:has-text("tab"):has-text("+23.331 sats")');
    await alice.screenshot({ path: `${ARTIFACTS}/arena-tab-3-claimed.png`, fullPage: true });

    // Bob's own tab is his (rounds survived); his socket never carried hers, nor her code.
    await bob.waitForSelector('#tab-balance:has-text("9.999 sats")');
    const carried = (page: Page, text: string) =>
      (frames.get(page) ?? []).some((frame) => frame.includes(text));
    // Five digits: no id or code of Bob's own is likely to spell one by chance.
    for (const balance of ['15554', '23331']) {
      expect(carried(alice, balance), `alice's socket carries ${balance}`).to.equal(true);
      expect(carried(bob, balance), `bob's socket carries ${balance}`).to.equal(false);
    }
    expect(carried(alice, code) || carried(alice, code.toLowerCase())).to.equal(true);
    expect(carried(bob, code) || carried(bob, code.toLowerCase())).to.equal(false);
    expect(await bob.content()).not.to.contain(code);
    expect(await bob.locator('.entry:has-text("Your tab")').count()).to.equal(0);
    await bob.screenshot({ path: `${ARTIFACTS}/arena-tab-4-other.png`, fullPage: true });
  });
});
