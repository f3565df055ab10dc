/**
 * The operator's console in a real browser (issue 24): an operator signed in by a cookie the
 * game's `authorize` checks opens the page, sees the balances and a settled match with its pot,
 * players and payouts, resolves an unknown payout, resumes the payouts the breaker paused
 * (three players' rewards answered 503), approves a held payout (the service then has exactly
 * one withdrawal request for it), pauses payouts with a reason and resumes them again, and
 * blocks a player; each action is then a line of the page's operator log, in the name
 * `authorize` gave. A browser without the cookie gets an empty 401.
 * Screenshots go to test-artifacts/, and docs/console.png with UPDATE_SCREENSHOT=1.
 */
import { mkdirSync } from 'node:fs';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { type Browser, chromium } from 'playwright-core';
import type { Intent } from '../../src/ledger/intent.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';

class EmptyRoom extends Room {}

const ARTIFACTS = 'test-artifacts';

/** The game's own check: its admin session cookie. */
const authorize = (request: Request) =>
  /(?:^|;\s*)admin=operator-session(?:;|$)/.test(request.headers.get('cookie') ?? '')
    ? 'alice-the-operator'
    : false;

const NAMES: Record<string, string> = { 'winner-w': 'Winnie', 'lucky-j': 'Lucky' };

describe('operator console in a browser', function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let game: Game | undefined;

  before(function () {
    needChromium(this);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await game?.stop();
  });

  it('an operator sees a match and its money, resolves an unknown, resumes, approves a held payout, pauses and resumes payouts, blocks a player, and finds each in the operator log', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      {
        reconciler: { enabled: false },
        api: { timeoutMs: 300, maxRetries: 0 },
        breaker: { failures: 3, windowMs: 60_000 },
        approvals: { aboveMsat: 500_000 },
        // Names from the game's records: people, not ids, where the operator reads.
        console: { authorize, via: 'listener', playerName: (id) => NAMES[id] },
      },
    );
    const { lightning, emulator } = game;
    // A match: two fees paid, settled to its winner.
    const match = await lightning.matches.open({ entryFeeMsat: 100_000, rake: 0.1 });
    for (const playerId of ['winner-w', 'loser-l']) {
      const fee = await lightning.matches.enter({ matchId: match.id, playerId });
      emulator.control.payStaticCharge(fee.remoteId as string);
      await eventually(
        async () => (await lightning.books.ledger.get(fee.id))?.status === 'completed',
      );
    }
    await lightning.matches.settle(match.id, { 'winner-w': 1 });
    // A jackpot above the approvals' line: held, nothing sent.
    const jackpot = await lightning.reward({
      playerId: 'lucky-j',
      amountMsat: 600_000,
      description: 'jackpot',
    });
    expect(jackpot.status).to.equal('held');
    const requests = () => emulator.control.count('POST', '/v0/withdrawal-requests');
    // Three players' rewards answered 503: three unknowns, and payouts paused.
    emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 503,
      times: 3,
    });
    for (const playerId of ['p1', 'p2', 'p3']) {
      await lightning
        .reward({ playerId, amountMsat: 20_000, description: 'bonus' })
        .catch(() => {});
    }
    const unknown = (await lightning.operator.unknowns())[0] as Intent;
    expect(lightning.operator.paused).to.not.equal(null);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const origin = `http://127.0.0.1:${game.port}`;
    const page$ = `${origin}/lightning/console`;

    // A browser without the cookie (Chromium shows an empty 401 as an error page).
    const refused = await (await browser.newContext()).request.get(page$);
    expect(refused.status()).to.equal(401);
    expect(await refused.text()).to.equal('');

    const context = await browser.newContext({ viewport: { width: 1200, height: 1100 } });
    await context.addCookies([{ name: 'admin', value: 'operator-session', url: origin }]);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(page$);

    // Balances, live: the rake of the settled match, the payout owed to the winner.
    await page.waitForSelector('#balances .card:has-text("Rake") .value:has-text("20 sats")');
    await page.waitForSelector(
      '#balances .card:has-text("Owed to players") .value:has-text("180 sats")',
    );
    // The match with its pot, players and payout.
    const row = page.locator(`#matches tr:has-text("${match.id}")`);
    await row.waitFor();
    expect(await row.textContent()).to.contain('200 sats');
    expect(await row.textContent()).to.contain('Winnie (winner-w): 180 sats (pending)');
    expect(await row.textContent()).to.contain('loser-l: fee completed');
    // What needs a person.
    await page.waitForSelector('#needs:has-text("Payouts paused")');
    await page.waitForSelector(`#needs .resolve[data-intent="${unknown.id}"]`);
    await page.waitForSelector(`#needs .approval[data-intent="${jackpot.id}"]`);
    // An intent's history and journal.
    const lucky = page.locator(`#intents tr:has-text("${jackpot.id}") span[title="lucky-j"]`);
    expect(await lucky.textContent()).to.equal('Lucky');
    await page.click(`#intents tr:has-text("Winnie")`);
    await page.waitForSelector('#detail:has-text("Journal")');
    await page.screenshot({ path: `${ARTIFACTS}/console-1.png`, fullPage: true });
    if (process.env.UPDATE_SCREENSHOT)
      await page.screenshot({ path: 'docs/console.png', fullPage: true });

    // Resolve the unknown: it moves once, with the note.
    const settled: Intent[] = [];
    lightning.on('settled', (i) => settled.push(i));
    const resolve = page.locator(`#needs .resolve[data-intent="${unknown.id}"]`);
    await resolve.locator('select').selectOption('failed');
    await resolve.locator('input').fill('no such withdrawal at the service');
    // The page refreshes while the operator types (every 3 s, rebuilding the forms): what was
    // chosen and typed outlives it.
    const shown = (await page.locator('#updated').textContent()) ?? '';
    await page.locator('#updated', { hasNotText: shown }).waitFor({ timeout: 15_000 });
    expect(await resolve.locator('input').inputValue()).to.equal(
      'no such withdrawal at the service',
    );
    expect(await resolve.locator('select').inputValue()).to.equal('failed');
    await resolve.locator('button').click();
    await page.waitForSelector(`#message:has-text("Resolved ${unknown.id} as failed")`);
    expect((await lightning.books.ledger.get(unknown.id))?.status).to.equal('failed');
    expect(settled.map((i) => i.id)).to.deep.equal([unknown.id]);
    await page.waitForSelector(`#needs .resolve[data-intent="${unknown.id}"]`, {
      state: 'detached',
    });

    // Resume the paused payouts.
    await page.click('#resume');
    await page.waitForSelector('#message:has-text("Payouts resumed")');
    expect(lightning.operator.paused).to.equal(null);
    await page.waitForSelector('#needs:not(:has-text("Payouts paused"))');

    // Approve the held jackpot: sent now, exactly one withdrawal request for it.
    const jackpotRow = page.locator(`#intents tr:has-text("${jackpot.id}")`);
    expect(await jackpotRow.textContent()).to.contain('held');
    const before = requests();
    const approval = page.locator(`#needs .approval[data-intent="${jackpot.id}"]`);
    await approval.locator('button:has-text("Approve")').click();
    await page.waitForSelector(`#message:has-text("Approved ${jackpot.id}: pending")`);
    expect(requests()).to.equal(before + 1);
    const sent = await lightning.books.ledger.get(jackpot.id);
    expect(sent?.status).to.equal('pending');
    expect(
      emulator.control.withdrawalRequests().filter((w) => w.id === sent?.remoteId),
    ).to.have.length(1);
    await page.waitForSelector(`#needs .approval[data-intent="${jackpot.id}"]`, {
      state: 'detached',
    });
    // The Intents table is read again after the action, as the banner is: no Show pressed.
    await page.waitForSelector(`#intents tr:has-text("${jackpot.id}"):has-text("pending")`);

    // Pause them again, with a reason (Pause shows where Resume was), and resume.
    await page.fill('#pause-why', 'wallet top-up');
    await page.click('#pause');
    await page.waitForSelector('#message:has-text("Payouts paused.")');
    expect(lightning.operator.paused).to.include({
      cause: 'operator',
      by: 'alice-the-operator',
      reason: 'wallet top-up',
    });
    await page.waitForSelector('#needs:has-text("Payouts paused: wallet top-up")');
    await page.click('#resume');
    await page.waitForSelector('#message:has-text("Payouts resumed")');
    expect(lightning.operator.paused).to.equal(null);

    // Block a player chosen in the intents filter.
    await page.fill('#player', 'p2');
    await page.fill('#block-why', 'chargebacks');
    await page.click('#block');
    await page.waitForSelector('#message:has-text("Blocked p2.")');
    expect(await lightning.books.ledger.isBlocked('p2')).to.equal(true);

    // Each action is a line of the page's operator log, in the operator's name, newest first.
    const line = (action: string) =>
      page.locator(`#oplog tr[data-action="${action}"]:has-text("alice-the-operator")`);
    await line('block').waitFor();
    expect(await line('resolve').textContent()).to.contain(unknown.id);
    expect(await line('resolve').textContent()).to.contain('no such withdrawal at the service');
    expect(await line('pause').textContent()).to.contain('wallet top-up');
    expect(await line('resume').count()).to.equal(2);
    expect(await line('block').textContent()).to.contain('chargebacks');
    const order = await page
      .locator('#oplog tr[data-action]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(await line('approve').textContent()).to.contain(jackpot.id);
    expect(order).to.deep.equal(['block', 'resume', 'pause', 'approve', 'resume', 'resolve']);
    await page.screenshot({ path: `${ARTIFACTS}/console-2.png`, fullPage: true });
    expect(errors).to.deep.equal([]);
  });
});
