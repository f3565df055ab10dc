/**
 * The duel (examples/duel: React, issue 25) played in Chromium by two players, each page with a
 * browser wallet: a fake `window.webln` injected before the page loads hands each code to the
 * test process, where the kit's `devWallet` pays or claims it on the emulator, as a real wallet
 * would on its own. The client is the bundle `npm run example:duel` serves (built by
 * examples/duel/build.ts at start). Both players pay with one press, the match is funded only
 * once both paid, Alice clicks first and claims the pot with her wallet, and Bob's page never
 * holds Alice's codes: not in its DOM, not in any websocket frame it received (the bytes its
 * `room.state` is decoded from). A page without a wallet is told to scan the code, and pays
 * nothing. The client's line count (under 150) is checked with or without Chromium.
 */
import { readdir, readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { startDuel } from '../../examples/duel/main.js';
import { devWallet, devWalletTarget } from '../../src/client/index.js';
import { quietLogger } from '../support/game.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';
import { holdPort } from '../support/ports.js';

const CLIENT_DIR = new URL('../../examples/duel/client/', import.meta.url);

/** The duel client's own source lines (its .ts and .tsx files; not the html or css). */
async function clientLines(): Promise<number> {
  let lines = 0;
  for (const name of await readdir(CLIENT_DIR)) {
    if (!/\.tsx?$/.test(name)) continue;
    lines += (await readFile(new URL(name, CLIENT_DIR), 'utf8')).trimEnd().split('\n').length;
  }
  return lines;
}

interface Player {
  page: Page;
  /** The codes this page's wallet was handed, in order. */
  asked: string[];
  /** Every websocket frame the page received, as bytes. */
  frames: Buffer[];
}

describe('example duel: its client', () => {
  it('shows a paid match in under 150 lines of client code', async () => {
    const lines = await clientLines();
    console.log(`      examples/duel/client: ${lines} lines of TypeScript (React)`);
    expect(lines).to.be.above(50).and.below(150);
  });
});

describe('example duel (React) in a browser, two players with WebLN wallets', function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let duel: Awaited<ReturnType<typeof startDuel>> | undefined;
  const warnings: string[] = [];

  before(async function () {
    needChromium(this);
    // Built and served as `npm run example:duel` does (examples/duel/build.ts).
    const { port, release } = await holdPort();
    duel = await startDuel({
      port,
      beforeListen: release,
      log: () => {},
      lightning: { logger: { ...quietLogger, warn: (line: string) => void warnings.push(line) } },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await duel?.stop();
  });

  it('both pay with WebLN, the winner claims the pot, the loser never holds its code', async () => {
    const emulator = duel?.lightning.service.emulator;
    if (!emulator) throw new Error('the duel runs on its emulator here');
    const wallet = devWallet(emulator.devWalletUrl);

    const join = async (): Promise<Player> => {
      const page = (await (await browser?.newContext())?.newPage()) as Page;
      const player: Player = { page, asked: [], frames: [] };
      page.on('websocket', (ws) =>
        ws.on('framereceived', ({ payload }) => player.frames.push(Buffer.from(payload))),
      );
      await page.exposeFunction('testWallet', async (code: string) => {
        player.asked.push(code);
        // What a wallet does with an LNURL: pay a pay request, claim a withdraw request.
        if (devWalletTarget(code)?.kind === 'withdraw') await wallet.claim(code);
        else await wallet.pay(code);
      });
      // As text: a function would be sent as its source, which tsx's transform changes.
      await page.addInitScript({
        content: `window.webln = {
          enable: async () => {},
          sendPayment: async () => { throw new Error('this test wallet pays LNURLs only'); },
          lnurl: async (code) => { await window.testWallet(code); return { status: 'OK' }; },
        };`,
      });
      await page.goto(duel?.url as string);
      await page.click('#join');
      await page.waitForSelector('.entry.fee >> text=Pay with your wallet');
      return player;
    };
    const alice = await join();
    const bob = await join();
    for (const { page } of [alice, bob]) {
      await page.waitForSelector('#phase:has-text("0 of 2 paid, 2 of 2 here")');
      expect(await page.locator('img[alt="Your entry fee QR code"]').count()).to.equal(1);
      expect(await page.locator('.entry.fee a.qr').getAttribute('href')).to.match(
        /^lightning:LNURL1[0-9A-Z]+$/,
      );
    }

    // One paid: not funded, nobody can play yet.
    await alice.page.click('text=Pay with your wallet');
    await alice.page.waitForSelector('.entry.fee .status.completed');
    await bob.page.waitForSelector('#phase:has-text("1 of 2 paid")');
    for (const { page } of [alice, bob]) expect(await page.isDisabled('#click')).to.equal(true);

    // Both paid: funded, the button lights up on both screens.
    await bob.page.click('text=Pay with your wallet');
    for (const { page } of [alice, bob]) await page.waitForSelector('#click:enabled');
    await alice.page.click('#click');
    await alice.page.waitForSelector('#phase:has-text("You won!")');
    await bob.page.waitForSelector('#phase:has-text("You lost")');
    expect(await bob.page.isDisabled('#click')).to.equal(true);

    // The pot (2 x 100 sats) minus the 10% rake, a code only Alice's page receives.
    const payout = alice.page.locator('.entry.payout');
    await payout.locator('text=Claim with your wallet').waitFor();
    expect(await payout.textContent()).to.contain('180 sats');
    const link = (await payout.locator('a.qr').getAttribute('href')) ?? '';
    const payoutCode = link.replace(/^lightning:/, '');
    expect(payoutCode).to.match(/^LNURL1[0-9A-Z]+$/);
    await payout.locator('text=Claim with your wallet').click();
    await alice.page.waitForSelector('.entry.payout .status.completed');
    const claimed = emulator.control.withdrawalRequests().find((w) => w.status === 'completed');
    expect(claimed?.amount).to.equal('180000');

    expect(alice.asked).to.have.length(2);
    expect(bob.asked).to.have.length(1);
    const [aliceFee, aliceClaim] = alice.asked as [string, string];
    expect(aliceClaim).to.equal(payoutCode.toLowerCase());
    expect(devWalletTarget(aliceClaim)?.kind).to.equal('withdraw');
    expect(bob.asked[0]).to.not.equal(aliceFee);

    // Both were signed in (`POST /login`, the room's onAuth): no money moved for a bare session.
    expect(warnings.filter((w) => w.includes('client.auth'))).to.deep.equal([]);

    // Bob's page: no prize, no claim, only his own fee; none of Alice's codes anywhere in it.
    expect(await bob.page.locator('.entry').count()).to.equal(1);
    expect(await bob.page.locator('.entry.payout').count()).to.equal(0);
    expect(await bob.page.locator('text=Claim with your wallet').count()).to.equal(0);
    const bobPage = (await bob.page.content()).toLowerCase();
    const inFrames = (frames: Buffer[], code: string) =>
      frames.some((f) => f.includes(code.toLowerCase()) || f.includes(code.toUpperCase()));
    for (const code of [payoutCode, aliceFee]) {
      expect(bobPage).to.not.contain(code.toLowerCase());
      expect(inFrames(bob.frames, code), 'a frame Bob received holds it').to.equal(false);
      // The same look finds it where it was sent: in Alice's frames.
      expect(inFrames(alice.frames, code), 'a frame Alice received holds it').to.equal(true);
    }
  });

  it('without a browser wallet, Pay says to scan the code and pays nothing', async () => {
    const page = (await (await browser?.newContext())?.newPage()) as Page;
    await page.goto(duel?.url as string);
    await page.click('#join');
    const fee = page.locator('.entry.fee');
    await fee.locator('text=Pay with your wallet').click();
    await fee.locator('text=No wallet in this browser: scan the code.').waitFor();
    // The code is still there to scan or tap, and nothing was paid.
    expect(await fee.locator('a.qr').getAttribute('href')).to.match(/^lightning:LNURL1[0-9A-Z]+$/);
    expect(await fee.locator('.status').textContent()).to.equal('pending');
    expect(await fee.locator('button').isEnabled()).to.equal(true);
  });
});
