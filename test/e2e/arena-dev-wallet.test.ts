/**
 * The arena's "Pay with dev wallet" and "Claim with dev wallet" buttons (issue 22, finding 7):
 * the emulator's own dev wallet routes answer no other web page now, so the buttons ask the
 * arena's server, `POST /dev-wallet/:action/:id`, which acts for the signed-in player and only
 * on that player's own fee or prize: no token is refused, and another player's token finds
 * nothing. The click in a browser is in arena-browser.test.ts.
 */
import { expect } from 'chai';
import {
  type ArenaUnderTest,
  chargesOf,
  joinArena,
  openFeeOf,
  startArenaUnderTest,
} from './arena-support.js';

describe("example arena: the dev wallet buttons act for their own player's entries only", function () {
  this.timeout(30_000);
  let t: ArenaUnderTest;
  beforeEach(async () => {
    t = await startArenaUnderTest();
  });
  afterEach(async () => t?.arena.stop());

  const press = async (action: string, id: string, token?: string) => {
    const res = await fetch(`http://127.0.0.1:${t.port}/dev-wallet/${action}/${id}`, {
      method: 'POST',
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    return { status: res.status, body: (await res.json()) as { status: string } };
  };

  it("pays Alice's fee for Alice alone: refused without a token, not found with Bob's", async () => {
    const alice = await joinArena(t, { name: 'Alice' });
    const bob = await joinArena(t, { name: 'Bob', roomId: alice.room.roomId });
    const fee = await openFeeOf(t, alice.id);
    const remoteId = fee.remoteId as string;

    expect((await press('pay', remoteId)).status).to.equal(401);
    expect((await press('pay', remoteId, 'not.a.token')).status).to.equal(401);
    expect((await press('pay', remoteId, bob.token)).status).to.equal(404);
    expect((await press('steal', remoteId, alice.token)).status).to.equal(404);
    expect(chargesOf(t, alice.id)[0]?.slots).to.equal(0);

    const paid = await press('pay', remoteId, alice.token);
    expect(paid).to.deep.include({ status: 200 });
    expect(paid.body.status).to.equal('OK');
    expect(chargesOf(t, alice.id)[0]?.slots).to.equal(1);
  });
});
