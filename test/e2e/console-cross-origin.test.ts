/**
 * Issue 30, finding 2: the console's data is never read by a page of another origin. An
 * operator signed in to the console by a cookie visits a page served from another port of the
 * same host (same site, another origin: what another subdomain of the game's would be), which
 * fetches the console's JSON with `credentials: 'include'`. Through Colyseus's router, which
 * reflects any Origin with credentials allowed, and through `operator.console.attach`, the page reads
 * nothing: no balance, no player, no held payout, no line of the operator log. The same browser
 * following a link from that page to the console gets the page, which shows the balances.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { type Browser, chromium } from 'playwright-core';
import { type Game, startGame } from '../support/game.js';
import { CHROMIUM, CHROMIUM_ARGS, needChromium } from '../support/needs.js';

class EmptyRoom extends Room {}

const authorize = (request: Request) =>
  /(?:^|;\s*)admin=operator-session(?:;|$)/.test(request.headers.get('cookie') ?? '')
    ? 'alice-the-operator'
    : false;

/** What the other origin's page read of each console route: status and body, or the error. */
type Read = { sub: string; status?: number; body?: string; error?: string };

describe('operator console: a page of another origin reads nothing', function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let game: Game | undefined;
  let other: Server | undefined;

  before(async function () {
    needChromium(this);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterEach(async () => {
    await game?.stop();
    game = undefined;
    await new Promise((resolve) => (other ? other.close(resolve) : resolve(undefined)));
    other = undefined;
  });
  after(async () => {
    await browser?.close();
  });

  for (const via of ['router', 'listener'] as const) {
    it(`through the ${via}: a credentialed fetch from another port gets no data; a link from it opens the console`, async () => {
      game = await startGame(
        { empty: EmptyRoom },
        { reconciler: { enabled: false }, console: { authorize, via } },
      );
      // Something to leak: a blocked player, and a line of the operator log naming them.
      await game.lightning.operator.block('secret-player-7', 'alice', 'chargeback');
      const consoleUrl = `http://127.0.0.1:${game.port}/lightning/console`;

      other = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><a id="go" href="${consoleUrl}">console</a>`);
      });
      await new Promise<void>((resolve) => other?.listen(0, '127.0.0.1', resolve));
      const { port } = other.address() as AddressInfo;
      const page$ = `http://127.0.0.1:${port}/`;

      const context = await (browser as Browser).newContext();
      // The operator's session: a cookie of the host, sent to every port of it (same site).
      await context.addCookies([
        { name: 'admin', value: 'operator-session', url: `http://127.0.0.1:${game.port}` },
      ]);
      const page = await context.newPage();
      await page.goto(page$);
      const reads: Read[] = await page.evaluate(async (base) => {
        const out: { sub: string; status?: number; body?: string; error?: string }[] = [];
        for (const sub of ['/api/overview', '/api/intents', '/api/oplog', '']) {
          try {
            const res = await fetch(base + sub, { credentials: 'include' });
            out.push({ sub, status: res.status, body: await res.text() });
          } catch (err) {
            out.push({ sub, error: String(err) });
          }
        }
        return out;
      }, consoleUrl);
      expect(reads).to.have.length(4);
      for (const read of reads) {
        // Refused (an empty 403 the router's CORS headers let the page see), or not readable at
        // all (no CORS header: the fetch fails): never a byte of the console's.
        if (read.error === undefined) {
          expect(read.status, read.sub).to.equal(403);
          expect(read.body, read.sub).to.equal('');
        }
        expect(JSON.stringify(read)).not.to.match(/secret-player-7|balances|chargeback/);
      }
      if (via === 'router') {
        // The router lets the page see the answer: it is the refusal, not a CORS error.
        expect(reads.map((r) => r.status)).to.deep.equal([403, 403, 403, 403]);
      }

      // The operator's own click from that page: the console opens and reads its data.
      await page.click('#go');
      await page.waitForURL(consoleUrl);
      await page.waitForSelector('#balances .card');
      expect(await page.textContent('body')).to.contain('secret-player-7');
    });
  }
});
