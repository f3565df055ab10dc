/**
 * Callback sources (issue 13, defence in depth): the sender read from X-Forwarded-For as the
 * game's proxies wrote it, checked against the service's published addresses and the game's
 * own, refreshed on a clock, refused when no list could ever be read.
 */
import type { IncomingMessage } from 'node:http';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { ManualClock } from '../../src/clock.js';
import { createLightning } from '../../src/lightning.js';
import {
  ClientAddresses,
  isAddressOrSubnet,
  PRIVATE_NETWORKS,
  senderAddress,
} from '../../src/server/client-address.js';
import { CallbackSources } from '../../src/server/sources.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

const behind = (proxies: number, proxyAddresses = PRIVATE_NETWORKS) =>
  new ClientAddresses({ proxies, proxyAddresses });

function headers(forwardedFor?: string): Headers {
  const h = new Headers();
  if (forwardedFor !== undefined) h.set('x-forwarded-for', forwardedFor);
  return h;
}

describe('callback sources', () => {
  it('reads the sender the given number of proxies from the right, never a claimed one', () => {
    expect(senderAddress('203.0.113.9', 1)).to.equal('203.0.113.9');
    // The sender claims 52.1.1.1; the proxy appended what it saw.
    expect(senderAddress('52.1.1.1, 203.0.113.9', 1)).to.equal('203.0.113.9');
    expect(senderAddress('52.1.1.1, 203.0.113.9, 10.0.0.2', 2)).to.equal('203.0.113.9');
    expect(senderAddress('203.0.113.9', 2)).to.equal(null);
    expect(senderAddress(null, 1)).to.equal(null);
    expect(senderAddress('not-an-ip', 1)).to.equal(null);
    expect(senderAddress('::ffff:203.0.113.9', 1)).to.equal('203.0.113.9');
    expect(senderAddress('[2001:db8::1]:443', 1)).to.equal('2001:db8::1');
    expect(senderAddress('203.0.113.9:5000', 1)).to.equal('203.0.113.9');
    expect(senderAddress(`${'1.1.1.1,'.repeat(400)}2.2.2.2`, 1)).to.equal(null);
  });

  it('with proxies 0, admits by the socket peer alone, and refuses when no peer is known', async () => {
    const sources = new CallbackSources(
      async () => ['198.51.100.7'],
      { refreshMs: 60_000, also: [] },
      behind(0),
      new ManualClock(0),
      { info() {}, warn() {}, error() {} },
    );
    expect(await sources.admits(headers('203.0.113.9'), '::ffff:198.51.100.7')).to.equal(true);
    expect(await sources.admits(headers('198.51.100.7'), '203.0.113.9')).to.equal(false);
    // The router's case: no socket, whatever X-Forwarded-For claims.
    expect(await sources.admits(headers('198.51.100.7'), null)).to.equal(false);
    expect(await sources.admits(headers('198.51.100.7'))).to.equal(false);
  });

  it('behind proxies, a known socket must be one of them (issue 22, finding 9)', async () => {
    const warned: string[] = [];
    const sources = new CallbackSources(
      async () => ['198.51.100.7'],
      { refreshMs: 60_000, also: [] },
      behind(1),
      new ManualClock(0),
      { info() {}, warn: (m: string) => warned.push(m), error() {} },
    );
    // Through a proxy on the private network: the entry it appended.
    expect(await sources.admits(headers('203.0.113.9, 198.51.100.7'), '10.0.0.5')).to.equal(true);
    // Around the proxy, straight from the internet, claiming the service's address.
    expect(await sources.admits(headers('198.51.100.7'), '203.0.113.50')).to.equal(false);
    expect(await sources.admits(headers('198.51.100.7'), '::ffff:203.0.113.50')).to.equal(false);
    expect(warned).to.have.length(1);
    expect(warned[0]).to.match(/not among clientAddress\.proxyAddresses: 203\.0\.113\.50/);
    // The router does not know the socket: the proxies' entry is all there is.
    expect(await sources.admits(headers('198.51.100.7'), null)).to.equal(true);
  });

  it('reads one client address: the socket, the proxies, or a header only when named', () => {
    const h = new Headers({
      'x-forwarded-for': '8.8.8.8, 203.0.113.9',
      'x-real-ip': '1.1.1.1',
      'cf-connecting-ip': '203.0.113.77',
    });
    // No proxy: the socket alone, whatever the headers say.
    expect(behind(0).of(h, '::ffff:198.51.100.1')).to.equal('198.51.100.1');
    expect(behind(0).of(h, null)).to.equal(null);
    // One proxy: the entry it appended; X-Real-IP is a client's claim unless named.
    expect(behind(1).of(h, '127.0.0.1')).to.equal('203.0.113.9');
    expect(behind(2).of(h, '127.0.0.1')).to.equal('8.8.8.8');
    const named = new ClientAddresses({
      proxies: 1,
      header: 'cf-connecting-ip',
      proxyAddresses: ['173.245.48.0/20'],
    });
    expect(named.of(h, '173.245.48.9')).to.equal('203.0.113.77');
    expect(named.of(h, '127.0.0.1')).to.equal(null);
    // Only what isIP accepts, never a long or listed value.
    const odd = (value: string) => behind(1).of(new Headers({ 'x-forwarded-for': value }), null);
    expect(odd('x'.repeat(12_000))).to.equal(null);
    expect(odd('not-an-ip')).to.equal(null);
    expect(odd(' 2001:DB8::1 ')).to.equal('2001:DB8::1');
    expect(
      new ClientAddresses({ proxies: 1, header: 'x-real-ip', proxyAddresses: [] }).of(
        new Headers({ 'x-real-ip': '1.1.1.1, 2.2.2.2' }),
        null,
      ),
    ).to.equal(null);
  });

  it("hands the game's own routes the same reading: lightning.service.clientAddress(req)", async () => {
    const request = (peer: string | undefined, h: Record<string, string> = {}) =>
      ({ headers: h, socket: { remoteAddress: peer } }) as unknown as IncomingMessage;
    const direct = createLightning({ ledger: ':memory:' });
    const proxied = createLightning({ ledger: ':memory:', clientAddress: { proxies: 1 } });
    try {
      // No proxy: the socket, whatever the client claims.
      const claims = { 'x-forwarded-for': '198.51.100.1', 'x-real-ip': '198.51.100.2' };
      expect(direct.service.clientAddress(request('::ffff:203.0.113.9', claims))).to.equal(
        '203.0.113.9',
      );
      expect(direct.service.clientAddress(request(undefined, claims))).to.equal(null);
      // One proxy: the entry it appended, only from a socket that is the proxy.
      const forwarded = { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' };
      expect(proxied.service.clientAddress(request('10.0.0.2', forwarded))).to.equal('203.0.113.9');
      expect(proxied.service.clientAddress(request('198.51.100.7', forwarded))).to.equal(null);
    } finally {
      await direct.close();
      await proxied.close();
    }
  });

  it('tells addresses and subnets from anything else', () => {
    for (const ok of ['10.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1']) {
      expect(isAddressOrSubnet(ok), ok).to.equal(true);
    }
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.1/8/1', '', '1.2.3.4/x']) {
      expect(isAddressOrSubnet(bad), bad).to.equal(false);
    }
  });

  it("admits the service's addresses and the game's own, and refuses the rest", async () => {
    const warned: string[] = [];
    const logger = { info() {}, warn: (m: string) => warned.push(m), error() {} };
    const sources = new CallbackSources(
      async () => ['198.51.100.7', '2001:db8::7'],
      { refreshMs: 60_000, also: ['10.1.0.0/16'] },
      behind(1),
      new ManualClock(0),
      logger,
    );
    expect(await sources.admits(headers('198.51.100.7'))).to.equal(true);
    expect(await sources.admits(headers('2001:db8::7'))).to.equal(true);
    expect(await sources.admits(headers('10.1.2.3'))).to.equal(true);
    expect(await sources.admits(headers('198.51.100.7, 203.0.113.9'))).to.equal(false);
    expect(await sources.admits(headers())).to.equal(false);
    expect(await sources.admits(headers('203.0.113.9'))).to.equal(false);
    // Refusals are told once a minute, with how many.
    expect(warned).to.have.length(1);
    expect(warned[0]).to.match(/1 callback\(s\) refused/);
  });

  it('reads the list again after refreshMs, keeping the last good one when that fails', async () => {
    const clock = new ManualClock(0);
    let answer: () => Promise<string[]> = async () => ['198.51.100.7'];
    let fetches = 0;
    const sources = new CallbackSources(
      () => {
        fetches++;
        return answer();
      },
      { refreshMs: 1_000, also: [] },
      behind(1),
      clock,
      { info() {}, warn() {}, error() {} },
    );
    expect(await sources.admits(headers('198.51.100.7'))).to.equal(true);
    expect(await sources.admits(headers('198.51.100.7'))).to.equal(true);
    expect(fetches).to.equal(1);
    clock.advance(1_000);
    answer = async () => {
      throw new Error('503');
    };
    expect(await sources.admits(headers('198.51.100.7'))).to.equal(true);
    expect(fetches).to.equal(2);
    answer = async () => ['198.51.100.8'];
    // The failed refresh kept the old list and its age: the next call refreshes again.
    await sources.admits(headers('198.51.100.7'));
    expect(fetches).to.equal(3);
    await sources.admits(headers('198.51.100.8'));
    expect(await sources.admits(headers('198.51.100.8'))).to.equal(true);
    expect(await sources.admits(headers('198.51.100.7'))).to.equal(false);
  });

  it('refuses every callback while no list could be read', async () => {
    const sources = new CallbackSources(
      async () => {
        throw new Error('down');
      },
      { refreshMs: 1_000, also: ['10.0.0.1'] },
      behind(1),
      new ManualClock(0),
      { info() {}, warn() {}, error() {} },
    );
    expect(await sources.admits(headers('10.0.0.1'))).to.equal(false);
  });
});

describe('callback sources on the route', () => {
  let game: Game | undefined;
  afterEach(async () => game?.stop());

  async function post(url: string, forwardedFor: string | undefined, body: unknown) {
    const res = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
      },
      body: JSON.stringify(body),
    });
    await res.body.dump();
    return res.statusCode;
  }

  it("refuses a callback from outside the service's addresses before touching anything", async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false }, clientAddress: { proxies: 1 }, callbackSources: {} },
    );
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 21_000,
      description: 'win',
    });
    game.emulator.control.claimWithdrawal(reward.remoteId as string);
    const url = game.callbackUrl(reward.callbackToken as string);
    const reads = () => game?.emulator.control.count('GET', /^\/v0\/withdrawal-requests\//) ?? 0;

    // From an address the service does not use, or with none at all, or a claimed one.
    expect(await post(url, '203.0.113.9', { id: reward.remoteId })).to.equal(403);
    expect(await post(url, undefined, { id: reward.remoteId })).to.equal(403);
    expect(await post(url, '127.0.0.1, 203.0.113.9', { id: reward.remoteId })).to.equal(403);
    expect(reads()).to.equal(0);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('pending');

    // The service's own address (the emulator publishes 127.0.0.1), as the proxy wrote it.
    expect(await post(url, '198.51.100.1, 127.0.0.1', { id: reward.remoteId })).to.equal(200);
    expect(reads()).to.equal(1);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('completed');
  });

  it('refuses nonsense settings at start, naming the option', () => {
    expect(() => createLightning({ callbackSources: { also: ['example.com'] } })).to.throw(
      /callbackSources/,
    );
    expect(() => createLightning({ clientAddress: { proxies: -1 } })).to.throw(/proxies/);
    // The proxies are counted once, in clientAddress, for the callbacks and the region gate.
    expect(() => createLightning({ callbackSources: { proxies: 1 } } as never)).to.throw(
      /callbackSources/,
    );
    // A header the client could set itself, with no proxy to overwrite it.
    expect(() => createLightning({ clientAddress: { header: 'x-real-ip' } })).to.throw(
      /clientAddress.*header/,
    );
    expect(() =>
      createLightning({ clientAddress: { proxies: 1, proxyAddresses: ['proxy.internal'] } }),
    ).to.throw(/proxyAddresses/);
  });
});
