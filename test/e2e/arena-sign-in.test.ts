/**
 * Issue 22, finding 8, replayed against the example arena: `POST /auth` handed a token to every
 * guest who asked, so one script made 40 guests, and each, a new player to every per-player
 * limit, got a widget user and a charge. Now one address makes at most `signInsPerMinute` new
 * guests (429 with Retry-After past it), by the address the library reads (`clientAddress`:
 * the socket, or what the game's own proxies wrote), never a header the client sent; a player
 * who brings a valid token is signed in again whatever the count. The limiter's memory is
 * bounded. The library's side, `limits.maxOpenPerGame`, is in test/server/limits.test.ts.
 */
import { expect } from 'chai';
import { arenaConfig } from '../../examples/arena/config.js';
import { GuestLimit, keyOf } from '../../examples/arena/sign-in-limit.js';
import { eventually } from '../support/eventually.js';
import { type ArenaUnderTest, joinArena, startArenaUnderTest } from './arena-support.js';

/** `POST /auth` as a script sends it: no token, or the one given, and any other headers. */
async function signInAs(t: ArenaUnderTest, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${t.port}/auth`, { method: 'POST', headers });
  const body = (await res.json()) as { token?: string; error?: string };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), ...body };
}

describe('example arena: new guests per address (issue 22, finding 8)', function () {
  this.timeout(30_000);
  let t: ArenaUnderTest | undefined;
  afterEach(async () => {
    await t?.arena.stop();
    t = undefined;
  });

  it('40 guests from one address: the limit get tokens, the rest 429 with Retry-After', async () => {
    // The arena's own default, as `npm start` runs it.
    const limit = arenaConfig.signInsPerMinute;
    expect(limit).to.equal(5);
    t = await startArenaUnderTest({ config: { signInsPerMinute: limit } });
    const arena = t;
    const answers = await Promise.all(Array.from({ length: 40 }, () => signInAs(arena)));
    const tokens = answers.flatMap((a) => (a.token ? [a.token] : []));
    expect(tokens).to.have.length(limit);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).to.have.length(40 - limit);
    for (const a of refused) {
      expect(Number(a.retryAfter)).to.be.within(1, 60);
      expect(a.error).to.match(/too many new players/);
      expect(a.token).to.equal(undefined);
    }
    // What the guests can do with what they got: play as at most `limit` players (a round
    // opens as soon as two want one), so the service holds at most that many charges.
    for (const token of tokens) await joinArena(arena, { token });
    const charges = () => arena.emulator.control.staticCharges().length;
    await eventually(() => charges() >= 2, 5_000, 'a round');
    expect(charges()).to.be.at.most(limit);

    // A player who comes back with a valid token is signed in again, counted or not.
    const back = await signInAs(arena, { authorization: `Bearer ${tokens[0]}` });
    expect(back.status).to.equal(200);
    expect(arena.arena.auth.verify(back.token)).to.equal(arena.arena.auth.verify(tokens[0]));
    // A forged or foreign token is a new guest, and counts as one.
    expect((await signInAs(arena, { authorization: 'Bearer a.b.c' })).status).to.equal(429);
    // The window ends: new guests again, as many as before.
    arena.clock.advance(60_000);
    const later = await Promise.all(Array.from({ length: limit + 2 }, () => signInAs(arena)));
    expect(later.filter((a) => a.status === 200)).to.have.length(limit);
  });

  it('reads the address as clientAddress says: a claimed X-Forwarded-For changes nothing', async () => {
    // No proxy (the default): the socket's peer, whatever the client writes.
    t = await startArenaUnderTest({ config: { signInsPerMinute: 2 } });
    const direct = t;
    const spoofed = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        signInAs(direct, { 'x-forwarded-for': `198.51.100.${i}`, 'x-real-ip': `192.0.2.${i}` }),
      ),
    );
    expect(spoofed.filter((a) => a.status === 200)).to.have.length(2);
    await direct.arena.stop();

    // Behind one proxy (loopback is one of the game's): the entry it appended, from the right.
    t = await startArenaUnderTest({
      config: { signInsPerMinute: 2 },
      lightning: { clientAddress: { proxies: 1 } },
    });
    const proxied = t;
    const via = (entries: string) => signInAs(proxied, { 'x-forwarded-for': entries });
    expect((await via('203.0.113.7')).status).to.equal(200);
    expect((await via('198.51.100.1, 203.0.113.7')).status).to.equal(200);
    // A third guest of 203.0.113.7, whatever it claims on the left.
    expect((await via('198.51.100.2, 203.0.113.7')).status).to.equal(429);
    // Another address behind the same proxy has its own window.
    expect((await via('203.0.113.8')).status).to.equal(200);
  });
});

describe('example arena: GuestLimit', () => {
  it('keeps at most maxAddresses windows, dropping the oldest first', () => {
    let now = 0;
    const limit = new GuestLimit({
      perWindow: 2,
      windowMs: 1_000,
      maxAddresses: 3,
      now: () => now,
    });
    for (let i = 0; i < 100; i++) {
      expect(limit.take(`192.0.2.${i}`)).to.equal(0);
      expect(limit.size).to.be.at.most(3);
    }
    // The newest keep their count; windows that ended are dropped as soon as another opens.
    expect(limit.take('192.0.2.99')).to.equal(0);
    expect(limit.take('192.0.2.99')).to.equal(1_000);
    now = 400;
    expect(limit.take('192.0.2.99')).to.equal(600);
    now = 1_000;
    expect(limit.take('203.0.113.1')).to.equal(0);
    expect(limit.size).to.equal(1);
    expect(limit.take('192.0.2.99')).to.equal(0);
  });

  it('counts an IPv6 /64 as one address, and every unknown address together', () => {
    expect(keyOf('2001:db8:1:2:3:4:5:6')).to.equal('2001:db8:1:2::/64');
    expect(keyOf('2001:db8:1:2::9')).to.equal('2001:db8:1:2::/64');
    expect(keyOf('2001:db8::1')).to.equal('2001:db8:0:0::/64');
    expect(keyOf('::1')).to.equal('0:0:0:0::/64');
    expect(keyOf('203.0.113.7')).to.equal('203.0.113.7');
    const limit = new GuestLimit({ perWindow: 1, now: () => 0 });
    expect(limit.take('2001:db8:1:2::1')).to.equal(0);
    expect(limit.take('2001:db8:1:2:ffff::2')).to.be.greaterThan(0);
    expect(limit.take(null)).to.equal(0);
    expect(limit.take(null)).to.be.greaterThan(0);
    expect(() => new GuestLimit({ perWindow: 0 })).to.throw(/perWindow/);
  });
});
