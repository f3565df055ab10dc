/**
 * The emulator's dev wallet page in a real browser (issue 16, finding 8): two players' equal
 * entry fees are told apart by their player, amounts read in sats with the msats on hover,
 * each row says its kind and status, and the buttons do what a wallet (or the dashboard)
 * would. The page's screenshot is saved under test-artifacts/, and as docs/dev-wallet.png when
 * UPDATE_SCREENSHOT=1.
 *
 * And what any other web page the developer opens can do to it (issue 22, finding 7): nothing.
 * A page of another origin can neither read the reward codes nor claim; a page that rebinds
 * its own name to 127.0.0.1 (DNS rebinding: the emulator's origin under another name) has no
 * key; the page opened without its key says so and shows nothing.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

    // The game's names for its players, where a person reads (bob's; alice has none).
    emu.control.namePlayers((id) => (id === 'bob' ? 'Bob' : undefined));
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
      ['Bob', 'reward (withdrawal request)', '37.800 sats', 'Duel prize', 'pending'],
      ['Bob', 'fee (static charge)', '21 sats', 'Duel entry', 'paid'],
      ['alice', 'fee (static charge)', '21 sats', 'Duel entry', 'active'],
    ]);
    const hovers = await page.$$eval('#entries td.amount abbr', (as) => as.map((a) => a.title));
    expect(hovers).to.deep.equal(['37,800 msats', '21,000 msats', '21,000 msats']);
    const named = await page.$$eval('#entries td:first-child abbr', (as) => as.map((a) => a.title));
    expect(named).to.deep.equal(['bob', 'bob']);
    // The amount to pay is typed in sats too (sent in msats: the fee below is paid in full).
    expect(await page.inputValue(`#amt-${alices?.id}`)).to.equal('21');
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

  it('lets no other web page read a reward code or claim one, not even under a rebound name', async () => {
    const target = await startEmulator({ logger: { warn() {} } });
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>x</title>');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    // rebound.test resolves to 127.0.0.1, as an attacker's name does after DNS rebinding.
    const rebinding = await chromium.launch({
      executablePath: CHROMIUM,
      args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP rebound.test 127.0.0.1'],
    });
    const client = new PaymentsApi({ apiKey: target.apiKey, baseUrl: target.url });
    try {
      const prize = await client.withdrawalRequests.create({
        amount: 50_000n,
        description: 'Duel prize',
        internalId: 'alice',
      });
      const before = target.control.wallet();
      const page = await rebinding.newPage();

      // Another origin: what its script could get out of the emulator, every way a page can ask.
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const attempts = (await page.evaluate(`(async (base, id) => {
        const tries = {
          state: () => fetch(base + '/_emulator/state').then((r) => r.text()),
          stateWithHeader: () =>
            fetch(base + '/_emulator/state', { headers: { 'x-emulator-key': 'guess' } }).then((r) => r.text()),
          claim: () =>
            fetch(base + '/_emulator/withdrawal-requests/' + id + '/claim', { method: 'POST', body: '{}' }).then((r) => r.text()),
          claimNoCors: () =>
            fetch(base + '/_emulator/withdrawal-requests/' + id + '/claim', { method: 'POST', mode: 'no-cors', body: '{}' })
              .then((r) => 'opaque:' + r.type),
        };
        const out = {};
        for (const [name, run] of Object.entries(tries)) {
          out[name] = await run().then((text) => 'read:' + text, (e) => 'failed:' + e.name);
        }
        return out;
      })(${JSON.stringify(target.url)}, ${JSON.stringify(prize.id)})`)) as Record<string, string>;
      expect(attempts).to.deep.equal({
        state: 'failed:TypeError',
        stateWithHeader: 'failed:TypeError',
        claim: 'failed:TypeError',
        claimNoCors: 'read:opaque:opaque',
      });

      // The emulator's own origin under the rebound name: same origin, but no key.
      const port = new URL(target.url).port;
      await page.goto(`http://rebound.test:${port}/_emulator/`);
      await page.waitForSelector('#nokey:not([hidden])');
      const rebound = (await page.evaluate(`(async (id) => {
        const state = await fetch('/_emulator/state');
        const claim = await fetch('/_emulator/withdrawal-requests/' + id + '/claim', { method: 'POST' });
        return { state: state.status, stateText: await state.text(), claim: claim.status };
      })(${JSON.stringify(prize.id)})`)) as { state: number; stateText: string; claim: number };
      expect(rebound.state).to.equal(401);
      expect(rebound.stateText).to.not.include(prize.id);
      expect(rebound.claim).to.equal(401);
      expect(await page.locator('#entries tr').count()).to.equal(0);

      // Nothing was claimed; the developer's own page (its URL carries the key) still claims.
      expect(target.control.withdrawalRequests()[0]?.status).to.equal('pending');
      expect(target.control.wallet()).to.equal(before);
      await page.goto(target.devWalletUrl);
      await page.click(`button[data-claim="${prize.id}"]`);
      await eventually(
        () => target.control.withdrawalRequests()[0]?.status === 'completed',
        5000,
        'the claim from the dev wallet page',
      );
    } finally {
      await rebinding.close();
      await client.close();
      evil.closeAllConnections();
      await new Promise<void>((resolve) => evil.close(() => resolve()));
      await target.close();
    }
  });
});
