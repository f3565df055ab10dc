/**
 * The operator's console routes (issue 24): off unless mounted, nothing without the game's
 * `authorize` (an empty 401 on every route, through the router and the listener alike),
 * actions only by a same-origin POST that carries the console's header, a resolve through the
 * console moving its intent once and firing `settled` once, every other action (pause,
 * resume, reissue, block, unblock) going through the engine and landing once in the operator
 * log with the console operator's name, refusals answered 409 with their code and changing
 * nothing, the operator log's route, and CSV exports escaped and streamed a row at a time.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { ConfigurationError, PlayerBlockedError } from '../../src/errors.js';
import { INTENT_KINDS, INTENT_STATUSES, type Intent } from '../../src/ledger/intent.js';
import type { OperatorAction, OperatorLogPage } from '../../src/ledger/operator-log.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { csvCell, csvRow } from '../../src/operator/csv.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

const TOKEN = 'Bearer operator-secret';
const authorize = (request: Request) =>
  request.headers.get('authorization') === TOKEN ? 'alice' : false;

const GETS = [
  '',
  '/api/overview',
  '/api/intents',
  '/api/intents/some-id',
  '/api/matches',
  '/api/matches/some-id',
  '/export/journal.csv',
  '/export/intents.csv',
  '/api/oplog',
  '/api/oplog?playerId=p1',
  '/export/oplog.csv',
  '/api/tabs',
  '/api/refusals',
];

/** An answer's JSON, typed as the test reads it. */
const answerOf = async <T = { ok?: boolean; result?: unknown; error?: string; code?: string }>(
  res: Response,
) => (await res.json()) as T;

/** What a spreadsheet reads as a formula: the field's first character past any spaces. */
const FORMULA = /^ *[=+\-@]/;

/**
 * A CSV as a spreadsheet splits it with `separator`: a quote opens a quoted field only at the
 * field's start (`""` inside is a quote; what follows the closing quote is kept as it is), and
 * a line break outside quotes ends the row.
 */
function readCsv(text: string, separator: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (field === '' && text[i] === '"') {
      for (i++; i < text.length; i++) {
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i++;
        } else if (text[i] === '"') {
          i++;
          break;
        } else field += text[i];
      }
      continue;
    }
    const c = text[i] as string;
    if (c === separator) {
      row.push(field);
      field = '';
    } else if (c === '\r' || c === '\n') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** A reward written as another process would, with its one journal entry (the console finds
 * intents through the journal). */
function createdReward(store: LedgerStore, playerId: string, description: string, now: number) {
  return store.create(
    { kind: 'reward', roomId: null, playerId, amount: '1000', unit: 'msats', description },
    now,
    {},
    [
      {
        tag: 'created',
        debit: 'house:rewards',
        credit: 'inflight',
        amount: '1000',
        unit: 'msats',
        why: 'reward created',
      },
    ],
  );
}

describe('operator console routes', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  const start = (via: 'router' | 'listener', options: Parameters<typeof startGame>[1] = {}) =>
    startGame(
      { empty: EmptyRoom },
      {
        reconciler: { enabled: false },
        api: { timeoutMs: 300, maxRetries: 0 },
        breaker: { failures: 3, windowMs: 60_000 },
        console: { authorize, via },
        ...options,
      },
    );
  /** The whole operator log, as the engine keeps it. */
  const log = async (): Promise<OperatorAction[]> =>
    (await game.lightning.operator.log({ limit: 1000 })).actions;
  const url = (sub: string) => `http://127.0.0.1:${game.port}/lightning/console${sub}`;
  const origin = () => `http://127.0.0.1:${game.port}`;
  const post = (sub: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url(sub), {
      method: 'POST',
      headers: {
        authorization: TOKEN,
        'content-type': 'application/json',
        'x-lightning-console': 'action',
        origin: origin(),
        ...headers,
      },
      body: JSON.stringify(body),
    });

  /** Three players' rewards answered 503: three unknowns, and the breaker trips. */
  async function unknowns(): Promise<Intent[]> {
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      status: 503,
      times: 3,
    });
    for (const playerId of ['p1', 'p2', 'p3']) {
      await game.lightning
        .reward({ playerId, amountMsat: 20_000, description: 'x' })
        .catch(() => {});
    }
    return game.lightning.operator.unknowns();
  }

  it('needs authorize: without it, a ConfigurationError, and nothing is mounted', async () => {
    game = await start('router');
    expect(() => game.lightning.operator.console.endpoints({} as never)).to.throw(
      ConfigurationError,
      /authorize/,
    );
    expect(() => game.lightning.operator.console.attach(undefined, {} as never)).to.throw(
      ConfigurationError,
    );
  });

  for (const via of ['router', 'listener'] as const) {
    describe(`through the ${via}`, () => {
      it('answers every route an empty 401 without authorization, or with a wrong one', async () => {
        game = await start(via);
        await unknowns();
        for (const sub of GETS) {
          for (const headers of [{}, { authorization: 'Bearer wrong' }]) {
            const res = await fetch(url(sub), { headers });
            expect(res.status, sub).to.equal(401);
            expect(await res.text(), sub).to.equal('');
          }
        }
        const [first] = await game.lightning.operator.unknowns();
        const res = await post(
          '/api/actions/resolve',
          { id: first?.id, status: 'failed', note: 'x' },
          { authorization: 'Bearer wrong' },
        );
        expect(res.status).to.equal(401);
        expect(await res.text()).to.equal('');
        expect((await game.lightning.books.ledger.get(first?.id as string))?.status).to.equal(
          'unknown',
        );
      });

      it('a resolve through the console moves the intent once and fires settled once', async () => {
        game = await start(via);
        const [first] = await unknowns();
        const settled: Intent[] = [];
        game.lightning.on('settled', (i) => settled.push(i));
        const overview = (await (
          await fetch(url('/api/overview'), { headers: { authorization: TOKEN } })
        ).json()) as { unknowns: Intent[] };
        expect(overview.unknowns.map((i: Intent) => i.id)).to.include(first?.id);
        // Secrets of the route and the player never reach the console.
        expect(JSON.stringify(overview)).not.to.match(/callbackToken|"code"|idempotencyKey/);
        const body = { id: first?.id, status: 'failed', note: 'the service has no record' };
        const answers = await Promise.all([
          post('/api/actions/resolve', body),
          post('/api/actions/resolve', body),
        ]);
        expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
        const loser = answers.find((a) => a.status === 409) as Response;
        expect((await answerOf(loser)).code).to.equal('LN_OPERATOR_REFUSED');
        const moved = await game.lightning.books.ledger.get(first?.id as string);
        expect(moved?.status).to.equal('failed');
        expect(moved?.history.at(-1)?.note).to.match(/resolved by operator alice: the service/);
        expect(settled.map((i) => i.id)).to.deep.equal([first?.id]);
        const lines = await log();
        expect(lines.map((l) => [l.action, l.by, l.intentId, l.after])).to.deep.equal([
          ['resolve', 'alice', first?.id, 'failed'],
        ]);
      });

      it('acts only on a same-origin POST with the console header; a GET changes nothing', async () => {
        game = await start(via);
        const [first] = await unknowns();
        expect(game.lightning.operator.paused).to.not.equal(null);
        const body = { id: first?.id, status: 'failed', note: 'x' };
        const refused = [
          await post('/api/actions/resolve', body, { 'x-lightning-console': '' }),
          await post('/api/actions/resolve', body, { origin: 'https://evil.example' }),
          await post('/api/actions/resolve', body, { 'sec-fetch-site': 'cross-site' }),
          await post('/api/actions/resume', {}, { origin: 'null' }),
        ];
        expect(refused.map((r) => r.status)).to.deep.equal([403, 403, 403, 403]);
        const asGet = await fetch(url('/api/actions/resume'), {
          headers: { authorization: TOKEN },
        });
        expect(asGet.status).to.be.oneOf([404, 405]);
        const plain = await post('/api/actions/resume', {}, { 'content-type': 'text/plain' });
        expect(plain.status).to.equal(415);
        expect((await game.lightning.books.ledger.get(first?.id as string))?.status).to.equal(
          'unknown',
        );
        expect(game.lightning.operator.paused).to.not.equal(null);

        expect(await log()).to.deep.equal([]);

        const resumed = await post('/api/actions/resume', {});
        expect(resumed.status).to.equal(200);
        const answer = await answerOf<{ ok: boolean; result: OperatorAction }>(resumed);
        expect(answer.ok).to.equal(true);
        expect(answer.result).to.include({ action: 'resume', by: 'alice', after: 'running' });
        expect(game.lightning.operator.paused).to.equal(null);
      });

      it('a read sent from another origin with the operator credentials gets an empty 403; the operator reads and navigates as before', async () => {
        game = await start(via);
        await unknowns();
        await game.lightning.operator.block('p1', 'ann', 'test');
        const other = `http://127.0.0.1:${game.port + 1}`;
        const read = (sub: string, headers: Record<string, string>) =>
          fetch(url(sub), { headers: { authorization: TOKEN, ...headers } });
        // What a browser sends with a page of another port or subdomain's credentialed fetch, a
        // no-cors load (<script src>), a sandboxed frame's fetch, and an Origin alone.
        const foreign: Record<string, string>[] = [
          { origin: other, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' },
          { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' },
          { origin: 'null', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
          { origin: 'https://evil.example' },
        ];
        for (const sub of ['/api/overview', '/api/intents', '/api/oplog', '/api/intents/x', '']) {
          for (const headers of foreign) {
            const res = await read(sub, headers);
            expect(res.status, `${sub} ${JSON.stringify(headers)}`).to.equal(403);
            expect(await res.text(), sub).to.equal('');
          }
        }
        for (const sub of ['/export/journal.csv', '/export/oplog.csv']) {
          const res = await read(sub, foreign[0] ?? {});
          expect(res.status, sub).to.equal(403);
          expect(await res.text(), sub).to.equal('');
        }
        // The operator's own browser: the page's fetches, a typed address, a link to the page.
        const own: Record<string, string>[] = [
          { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' },
          { origin: origin(), 'sec-fetch-site': 'same-origin' },
          { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' },
          {},
        ];
        for (const headers of own) {
          const res = await read('/api/overview', headers);
          expect(res.status, JSON.stringify(headers)).to.equal(200);
          expect(await answerOf<{ unknowns: unknown[] }>(res)).to.have.property('unknowns');
        }
        // undici's request, as fetch writes its own Sec-Fetch-Mode.
        const link = await request(url(''), {
          headers: {
            authorization: TOKEN,
            'sec-fetch-site': 'cross-site',
            'sec-fetch-mode': 'navigate',
            'sec-fetch-dest': 'document',
          },
        });
        expect(link.statusCode).to.equal(200);
        expect(await link.body.text()).to.match(/^<!doctype html>/i);
        if (via === 'listener') {
          const csv = await read('/export/oplog.csv', { 'sec-fetch-site': 'same-origin' });
          expect(csv.status).to.equal(200);
          expect(await csv.text()).to.contain(',ann,block,');
        }
      });

      it('pause, resume, block and unblock: through the engine, one line each naming the operator; refusals 409 and change nothing', async () => {
        game = await start(via);
        // Refused by its input before anything is read: a pause must say why.
        const bare = await post('/api/actions/pause', {});
        expect(bare.status).to.equal(400);
        expect((await answerOf(bare)).code).to.equal('LN_INVALID_ARGUMENT');
        // Refused by the state: nothing is paused.
        const early = await post('/api/actions/resume', {});
        expect(early.status).to.equal(409);
        expect(await answerOf(early)).to.include({ code: 'LN_OPERATOR_REFUSED' });
        expect(await log()).to.deep.equal([]);

        const paused: unknown[] = [];
        game.lightning.on('paused', (p) => paused.push(p));
        const pause = await post('/api/actions/pause', { why: 'wallet top-up' });
        expect(pause.status).to.equal(200);
        expect(game.lightning.operator.paused).to.include({ cause: 'operator', by: 'alice' });
        expect(paused).to.have.length(1);
        const again = await post('/api/actions/pause', { why: 'twice' });
        expect(again.status).to.equal(409);
        expect((await answerOf(again)).code).to.equal('LN_OPERATOR_REFUSED');
        expect(game.lightning.operator.paused).to.include({ by: 'alice', reason: 'wallet top-up' });
        expect((await post('/api/actions/resume', {})).status).to.equal(200);
        expect(game.lightning.operator.paused).to.equal(null);

        const block = await post('/api/actions/block', { playerId: 'mallory', why: 'chargebacks' });
        expect(block.status).to.equal(200);
        const refused = await game.lightning
          .reward({ playerId: 'mallory', amountMsat: 1_000, description: 'x' })
          .catch((e: unknown) => e);
        expect(refused).to.be.instanceOf(PlayerBlockedError);
        const twice = await post('/api/actions/block', { playerId: 'mallory', why: 'again' });
        expect(twice.status).to.equal(409);
        expect((await answerOf(twice)).code).to.equal('LN_OPERATOR_REFUSED');
        expect((await post('/api/actions/unblock', { playerId: 'mallory' })).status).to.equal(200);
        expect(await game.lightning.books.ledger.isBlocked('mallory')).to.equal(false);
        const stray = await post('/api/actions/unblock', { playerId: 'mallory' });
        expect(stray.status).to.equal(409);
        const extra = await post('/api/actions/block', { playerId: 'x', why: 'y', by: 'eve' });
        expect(extra.status, 'the operator is who authorize says, never the body').to.equal(400);

        expect(
          (await log()).map((l) => [l.action, l.by, l.playerId, l.before, l.after, l.note]),
        ).to.deep.equal([
          ['pause', 'alice', null, 'running', 'paused', 'wallet top-up'],
          ['resume', 'alice', null, 'paused (operator)', 'running', ''],
          ['block', 'alice', 'mallory', 'unblocked', 'blocked', 'chargebacks'],
          ['unblock', 'alice', 'mallory', 'blocked', 'unblocked', ''],
        ]);
        // The log's route: the same lines, filtered and paged at the edge.
        const get = (sub: string) => fetch(url(sub), { headers: { authorization: TOKEN } });
        const all = await answerOf<OperatorLogPage>(await get('/api/oplog'));
        expect(all.actions.map((l) => l.action)).to.deep.equal([
          'pause',
          'resume',
          'block',
          'unblock',
        ]);
        const mallory = await answerOf<OperatorLogPage>(
          await get('/api/oplog?playerId=mallory&limit=1'),
        );
        expect(mallory.actions.map((l) => l.action)).to.deep.equal(['block']);
        const rest = await answerOf<OperatorLogPage>(
          await get(`/api/oplog?playerId=mallory&after=${mallory.next}`),
        );
        expect(rest).to.deep.include({ next: null });
        expect(rest.actions.map((l) => l.action)).to.deep.equal(['unblock']);
        const later = await answerOf<OperatorLogPage>(
          await get(`/api/oplog?since=${Date.now() + 60_000}`),
        );
        expect(later.actions).to.deep.equal([]);
        for (const bad of ['?limit=0', '?limit=1001', '?after=x', '?since=soon', '?player=p1']) {
          const res = await get(`/api/oplog${bad}`);
          expect(res.status, bad).to.equal(400);
        }
      });

      it("reissue: an expired match payout whose code was shown gets a new code once, in the operator's name", async function () {
        this.timeout(20_000);
        const clock = new ManualClock(Date.now());
        const emulator = await startEmulator({ clock, logger: quietLogger });
        game = await start(via, { emulator, clock, reconciler: { intervalMs: 20 } });
        const stop = game.stop.bind(game);
        game.stop = async () => {
          await stop();
          await emulator.close();
        };
        const { lightning } = game;
        const match = await lightning.matches.open({
          entryFeeMsat: 25_000,
          claimExpiresIn: 600,
          seats: 1,
        });
        const fee = await lightning.matches.enter({ matchId: match.id, playerId: 'alice-player' });
        emulator.control.payStaticCharge(fee.remoteId as string);
        await eventually(
          async () => (await lightning.matches.get(match.id)).funded,
          5_000,
          'fee paid',
        );
        const decided = await lightning.matches.settle(match.id, { 'alice-player': 1 });
        const payoutId = decided.payouts[0]?.intentId as string;
        await eventually(
          async () => (await lightning.books.ledger.get(payoutId))?.status === 'pending',
          5_000,
          'the code shown',
        );
        // Still claimable: refused, nothing changed.
        const open = await post('/api/actions/reissue', { id: payoutId });
        expect(open.status).to.equal(409);
        expect((await answerOf(open)).code).to.equal('LN_OPERATOR_REFUSED');
        expect(await log()).to.deep.equal([]);

        clock.advance(601_000);
        await eventually(
          async () => (await lightning.books.ledger.get(payoutId))?.status === 'expired',
          5_000,
          'the payout expired',
        );
        const res = await post('/api/actions/reissue', { id: payoutId });
        expect(res.status).to.equal(200);
        const { result } = await answerOf<{
          result: { id: string; attempt: string; status: string };
        }>(res);
        expect(result).to.deep.equal({ id: payoutId, attempt: `${payoutId}:2`, status: 'pending' });
        expect((await lightning.books.ledger.get(result.attempt))?.playerId).to.equal(
          'alice-player',
        );
        const second = await post('/api/actions/reissue', { id: payoutId });
        expect(second.status).to.equal(409);
        expect((await log()).map((l) => [l.action, l.by, l.intentId, l.after])).to.deep.equal([
          ['reissue', 'alice', payoutId, result.attempt],
        ]);
      });

      it("shows players' tabs largest first, a page at a time, and the tab calls refused; bad input is a 400", async () => {
        game = await start(via);
        const { tabs } = game.lightning;
        const credits: [string, number][] = [
          ['ann', 30_000],
          ['ben', 70_000],
          ['cal', 50_000],
        ];
        for (const [playerId, amountMsat] of credits) {
          await tabs.credit({ playerId, amountMsat, description: 'round won' });
        }
        const past = await tabs
          .withdraw({ playerId: 'ann', amountMsat: 40_000, description: 'cash out' })
          .catch((e: unknown) => e);
        expect(past).to.have.property('code', 'LN_INSUFFICIENT_FUNDS');
        const read = (sub: string) => fetch(url(sub), { headers: { authorization: TOKEN } });
        type Page = { tabs: { playerId: string; balanceMsat: string }[]; next: string | null };

        const first = await read('/api/tabs?limit=2');
        expect(first.status).to.equal(200);
        const one = await answerOf<Page>(first);
        expect(one.tabs).to.deep.equal([
          { playerId: 'ben', balanceMsat: '70000' },
          { playerId: 'cal', balanceMsat: '50000' },
        ]);
        const two = await answerOf<Page>(
          await read(`/api/tabs?limit=2&after=${encodeURIComponent(one.next as string)}`),
        );
        expect(two).to.deep.equal({
          tabs: [{ playerId: 'ann', balanceMsat: '30000' }],
          next: null,
        });

        const refusals = await answerOf<{
          recent: { call: string; playerId: string; amountMsat: string; code: string }[];
          counts: { call: string; code: string; count: number }[];
        }>(await read('/api/refusals'));
        expect(refusals.recent).to.have.length(1);
        expect(refusals.recent[0]).to.include({
          call: 'tabs.withdraw',
          playerId: 'ann',
          amountMsat: '40000',
          code: 'LN_INSUFFICIENT_FUNDS',
        });
        expect(refusals.counts).to.deep.equal([
          { call: 'tabs.withdraw', code: 'LN_INSUFFICIENT_FUNDS', count: 1 },
        ]);

        const bad = [
          '/api/tabs?limit=0',
          '/api/tabs?limit=1001',
          '/api/tabs?limit=two',
          '/api/tabs?after=nonsense',
          '/api/tabs?after=',
          '/api/tabs?player=ann',
          '/api/refusals?limit=-1',
          '/api/refusals?since=1',
        ];
        for (const sub of bad) {
          const res = await read(sub);
          expect(res.status, sub).to.equal(400);
          expect((await answerOf(res)).error, sub).to.be.a('string');
        }
      });

      it('serves the page with a policy that runs only its own script', async () => {
        game = await start(via);
        const res = await fetch(url(''), { headers: { authorization: TOKEN } });
        expect(res.status).to.equal(200);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp).to.match(/script-src 'sha256-[^']+'/);
        expect(csp).to.contain("frame-ancestors 'none'");
        const html = await res.text();
        expect(html).not.to.match(/innerHTML|src="http|href="http/);
        // Every status an intent can be in is a filter (a queued payout was not), every kind too.
        const choices = (name: string) =>
          [
            ...(html.match(new RegExp(`<select name="${name}"[^]*?</select>`))?.[0] ?? '').matchAll(
              /<option>([^<]+)<\/option>/g,
            ),
          ].map((m) => m[1]);
        expect(choices('status')).to.have.members([...INTENT_STATUSES]);
        expect(choices('kind')).to.have.members([...INTENT_KINDS]);
      });
    });
  }

  describe('CSV', () => {
    it('escapes quotes, commas and line breaks, and makes formulas inert', () => {
      expect(csvCell('plain')).to.equal('plain');
      expect(csvCell('a,b')).to.equal('"a,b"');
      expect(csvCell('say "hi"')).to.equal('"say ""hi"""');
      expect(csvCell('two\nlines')).to.equal('"two\nlines"');
      expect(csvCell('=HYPERLINK("http://x")')).to.equal(`"'=HYPERLINK(""http://x"")"`);
      for (const start of ['+', '-', '@', '\t', '\r']) {
        expect(csvCell(`${start}1`).replace(/^"/, '')).to.match(/^'/);
      }
      expect(csvCell(null)).to.equal('');
      expect(csvRow(['a', 1, null])).to.equal('a,1,\r\n');
    });

    it('streams the journal and intents of a time range, row by row, past 1,000 rows', async function () {
      this.timeout(30_000);
      game = await start('listener');
      const now = Date.now();
      // 1,100 intents written as another process would, each with one journal entry.
      for (let n = 0; n < 1_100; n++) {
        await createdReward(
          game.store,
          `p${n}`,
          n === 7 ? '=cmd|" /c calc"!A1, then\nmore' : `reward ${n}`,
          now,
        );
      }
      const get = (sub: string) => fetch(url(sub), { headers: { authorization: TOKEN } });
      const journal = await get(`/export/journal.csv?since=${now - 1000}&until=${now + 1000}`);
      expect(journal.status).to.equal(200);
      expect(journal.headers.get('content-type')).to.match(/^text\/csv/);
      expect(journal.headers.get('content-length')).to.equal(null); // streamed, not built whole
      let chunks = 0;
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of journal.body as unknown as AsyncIterable<Uint8Array>) {
        chunks++;
        text += decoder.decode(chunk, { stream: true });
      }
      expect(chunks).to.be.greaterThan(1);
      const lines = text.split('\r\n');
      expect(lines[0]).to.equal('seq,id,at,intent,player,match,debit,credit,amount,unit,step,why');
      expect(lines.filter((l) => l.length > 0)).to.have.length(1_101);

      const intents = await (await get(`/export/intents.csv?since=${now - 1000}`)).text();
      const rows = intents.split('\r\n').filter((l) => l.length > 0);
      expect(rows).to.have.length(1_101); // a cell's own newline is \n, inside quotes: no row
      expect(intents).to.contain(`"'=cmd|"" /c calc""!A1, then\nmore"`);
      // Out of range: the header alone.
      const none = await (await get(`/export/intents.csv?since=${now + 120_000}`)).text();
      expect(none).to.equal(
        'id,kind,status,player,room,match,amount,unit,description,remote_id,created_at,updated_at,error\r\n',
      );
    });

    it('streams the operator log, its notes escaped, filtered by player', async () => {
      game = await start('listener');
      await game.lightning.operator.block('p1', 'ann', '=HYPERLINK("http://x"), said "hi"');
      await game.lightning.operator.block('p2', 'ann', 'second');
      await game.lightning.operator.unblock('p1', 'bo');
      const get = (sub: string) => fetch(url(sub), { headers: { authorization: TOKEN } });
      const res = await get('/export/oplog.csv?playerId=p1');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-length')).to.equal(null);
      expect(res.headers.get('content-disposition')).to.contain('lightning-oplog.csv');
      const rows = (await res.text()).split('\r\n').filter((l) => l.length > 0);
      expect(rows[0]).to.equal('seq,at,by,action,intent,player,before,after,note');
      expect(rows).to.have.length(3);
      expect(rows[1]).to.contain(
        `,ann,block,,p1,unblocked,blocked,"'=HYPERLINK(""http://x""), said ""hi""`,
      );
      expect(rows[2]).to.match(/,bo,unblock,,p1,blocked,unblocked,$/);
      expect((await get('/export/oplog.csv?player=p1')).status).to.equal(400);
    });

    it('a player id with a formula after a `;` or a tab is inert however the file is split (a `;` reading, as Excel in German and French locales)', async () => {
      game = await start('listener');
      const now = Date.now();
      // A tab is no id's (src/ids.ts): the description carries one, after a `;` reading's cut.
      const ids = ['x;=1+1;', "dde;=cmd|' /C calc'!A0;", 'a +SUM(1)', 'b,@x', 'c; "=1', '-d'];
      for (const playerId of ids) {
        await createdReward(game.store, playerId, 'win;=HYPERLINK("http://x")\t+SUM(1)', now);
      }
      const res = await fetch(url(`/export/intents.csv?since=${now - 1000}`), {
        headers: { authorization: TOKEN },
      });
      expect(res.status).to.equal(200);
      const text = await res.text();
      // Read with the comma the file was written for, each id is whole (only a `'` added).
      const byComma = readCsv(text, ',');
      const players = byComma.slice(1).map((r) => r[3]);
      expect(players).to.have.length(ids.length);
      for (const id of ids) {
        expect(players.map((p) => p?.replaceAll("'", ''))).to.include(id.replaceAll("'", ''));
      }
      for (const separator of [',', ';', '\t']) {
        for (const row of readCsv(text, separator)) {
          for (const field of row) {
            expect(field, `read with ${JSON.stringify(separator)}`).not.to.match(FORMULA);
          }
        }
      }
    });

    it('through the router, refuses to stream rather than cut a file short', async () => {
      game = await start('router');
      const res = await fetch(url('/export/journal.csv'), { headers: { authorization: TOKEN } });
      expect(res.status).to.equal(501);
      expect(((await res.json()) as { error: string }).error).to.match(/operator\.console\.attach/);
    });
  });
});
