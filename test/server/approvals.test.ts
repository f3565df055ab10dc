/**
 * Payout approvals (issue 24): with `approvals`, a reward, a match's payout or a payment to a
 * Lightning address above the line is recorded `held`, nothing sent, and the player's entry says
 * so; `lightning.operator.approve` sends it (exactly one request at the service), `lightning.operator.reject` ends
 * it failed without a request (a match's payout to the house, journaled), each one line in the
 * operator log. A match waits in `settling` for its held payouts. Played against the emulator
 * with a real room (test/room/support.ts).
 */
import { expect } from 'chai';
import { LN_ADDRESS_DOMAIN } from '../../src/emulator/index.js';
import { OperatorRefusedError, PayoutsPausedError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { OperatorAction } from '../../src/ledger/operator-log.js';
import { type Arena, serverClient, startArena } from '../room/support.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';

function gist(line: OperatorAction) {
  const { seq: _seq, at: _at, ...rest } = line;
  return rest;
}

async function refusal<E extends Error>(
  call: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ${type.name}`).to.be.instanceOf(type);
  return err as E;
}

describe('payout approvals: held, then approved or rejected by an operator', function () {
  this.timeout(30_000);
  let game: Game | undefined;
  afterEach(async () => {
    await game?.stop();
    game = undefined;
  });

  async function arena(options: Parameters<typeof startArena>[0] = {}) {
    game = await startArena({
      reconciler: { enabled: false },
      approvals: { aboveMsat: 50_000 },
      ...options,
    });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const settled: Intent[] = [];
    const held: Intent[] = [];
    game.lightning.on('settled', (intent) => settled.push(intent));
    game.lightning.on('held', (intent) => held.push(intent));
    const requests = () => game?.emulator.control.count('POST', '/v0/withdrawal-requests') ?? 0;
    return { game, room, alice, settled, held, requests };
  }

  it('holds a reward above the line: nothing sent, the entry says held; approve sends it once', async () => {
    const { game, room, alice, held, requests } = await arena();
    const small = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 50_000,
      description: 'at the line',
    });
    expect(small.status).to.equal('pending');
    expect(requests()).to.equal(1);

    const big = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 80_000,
      description: 'jackpot',
    });
    expect(big).to.include({ status: 'held', code: '' });
    expect(requests(), 'nothing sent for the held one').to.equal(1);
    expect(held.map((i) => i.id)).to.deep.equal([big.id]);
    await eventually(
      () => room.state.lightning.rewards.get(big.id)?.status === 'held',
      5_000,
      "the player's entry says held",
    );
    expect((await game.lightning.operator.held()).map((i) => i.id)).to.deep.equal([big.id]);

    const sent = await game.lightning.operator.approve(big.id, 'ann');
    expect(sent.status).to.equal('pending');
    expect(sent.code).to.be.a('string').and.not.equal('');
    expect(sent.history.map((h) => h.to)).to.deep.equal(['held', 'creating', 'pending']);
    expect(requests(), 'exactly one request for the approved payout').to.equal(2);
    await eventually(
      () => room.state.lightning.rewards.get(big.id)?.code === sent.code,
      5_000,
      'the code reaches its player',
    );
    expect(await game.lightning.operator.held()).to.deep.equal([]);
    expect((await game.lightning.operator.log()).actions.map(gist)).to.deep.equal([
      {
        by: 'ann',
        action: 'approve',
        intentId: big.id,
        playerId: 'alice',
        before: 'held',
        after: 'creating',
        note: '',
      },
    ]);
    // Approved once: a second approval is refused, nothing sent again, no second line.
    await refusal(game.lightning.operator.approve(big.id, 'bo'), OperatorRefusedError);
    expect(requests()).to.equal(2);
    expect((await game.lightning.operator.log()).actions).to.have.length(1);
  });

  it('reject ends a held reward failed, never sent, settled once, the money back to the house', async () => {
    const { game, room, alice, settled, requests } = await arena();
    const big = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 90_000,
      description: 'suspicious',
    });
    expect(big.status).to.equal('held');
    const rejected = await game.lightning.operator.reject(big.id, 'ann', 'bot farm');
    expect(rejected).to.include({ status: 'failed', error: 'rejected by operator ann: bot farm' });
    expect(settled.map((i) => [i.id, i.status])).to.deep.equal([[big.id, 'failed']]);
    expect(requests()).to.equal(0);
    await eventually(
      () => room.state.lightning.rewards.get(big.id)?.status === 'failed',
      5_000,
      'the entry follows',
    );
    expect(await game.lightning.books.ledger.balances(['inflight', 'house:rewards'])).to.deep.equal(
      [
        { account: 'inflight', unit: 'msats', balance: '0' },
        { account: 'house:rewards', unit: 'msats', balance: '0' },
      ],
    );
    expect((await game.lightning.operator.log()).actions.map(gist)).to.deep.equal([
      {
        by: 'ann',
        action: 'reject',
        intentId: big.id,
        playerId: 'alice',
        before: 'held',
        after: 'failed',
        note: 'bot farm',
      },
    ]);
    await refusal(game.lightning.operator.approve(big.id, 'ann'), OperatorRefusedError);
    await refusal(game.lightning.operator.reject(big.id, 'ann', 'again'), OperatorRefusedError);
    expect(requests()).to.equal(0);
  });

  it("holds what would take a player's day past perPlayerPerDayMsat, across their payouts", async () => {
    const { game, room, alice, requests } = await arena({
      approvals: { aboveMsat: 1_000_000, perPlayerPerDayMsat: 100_000 },
    });
    const client = serverClient(room, alice);
    const first = await room.plugins.lightning.reward(client, {
      amountMsat: 60_000,
      description: 'win',
    });
    const second = await room.plugins.lightning.reward(client, {
      amountMsat: 60_000,
      description: 'win',
    });
    expect([first.status, second.status]).to.deep.equal(['pending', 'held']);
    // Another player's day is their own.
    const bob = await game.lightning.reward({
      playerId: 'bob',
      amountMsat: 60_000,
      description: 'win',
    });
    expect(bob.status).to.equal('pending');
    expect(requests()).to.equal(2);
  });

  it('approve refuses while payouts are paused, and the payout stays held', async () => {
    const { game, room, alice, requests } = await arena();
    const big = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 80_000,
      description: 'jackpot',
    });
    await game.lightning.operator.pause('ann', 'incident');
    await refusal(game.lightning.operator.approve(big.id, 'ann'), PayoutsPausedError);
    expect((await game.lightning.books.ledger.get(big.id))?.status).to.equal('held');
    await game.lightning.operator.resume('ann');
    expect((await game.lightning.operator.approve(big.id, 'ann')).status).to.equal('pending');
    expect(requests()).to.equal(1);
  });

  it('holds a payment to a Lightning address; approving sends exactly one payment', async () => {
    const { game } = await arena();
    const sends = () => game.emulator.control.count('POST', '/v0/ln-address/send-payment');
    const sent = await game.lightning.payAddress({
      playerId: 'alice',
      lnAddress: `alice@${LN_ADDRESS_DOMAIN}`,
      amountMsat: 70_000,
      comment: 'grand prize',
    });
    expect(sent.status).to.equal('held');
    expect(sends()).to.equal(0);
    const approved = await game.lightning.operator.approve(sent.id, 'ann');
    expect(['pending', 'completed']).to.include(approved.status);
    expect(sends()).to.equal(1);
    expect(approved.meta).to.include({ approvedBy: 'ann', comment: 'grand prize' });
  });

  async function fundedMatch(target: Game, players: string[]) {
    const match = await target.lightning.matches.open({
      entryFeeMsat: 40_000,
      claimExpiresIn: 600,
      seats: players.length,
    });
    for (const playerId of players) {
      const fee = await target.lightning.matches.enter({ matchId: match.id, playerId });
      expect(target.emulator.control.payStaticCharge(fee.remoteId as string).status).to.equal('OK');
    }
    await eventually(
      async () => (await target.lightning.matches.get(match.id)).funded,
      5_000,
      'the fees paid',
    );
    return match;
  }

  it('a match waits in settling for its held payout, and settles once it is approved', async () => {
    const { game, requests } = await arena();
    const match = await fundedMatch(game, ['alice', 'bob']);
    const settledMatches: string[] = [];
    game.lightning.on('match.settled', (view) => settledMatches.push(view.id));
    // 80,000 to alice (held), nothing to bob.
    const decided = await game.lightning.matches.settle(match.id, { alice: 1 });
    expect(decided.status).to.equal('settling');
    const payoutId = decided.payouts[0]?.intentId as string;
    expect((await game.lightning.books.ledger.get(payoutId))?.status).to.equal('held');
    expect(requests()).to.equal(0);
    expect((await game.lightning.matches.get(match.id)).status).to.equal('settling');

    await game.lightning.operator.approve(payoutId, 'ann');
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).status === 'settled',
      5_000,
      'the match settles once its payout is made',
    );
    expect(settledMatches).to.deep.equal([match.id]);
    expect(requests()).to.equal(1);
  });

  it('a rejected match payout goes to the house, journaled; the match settles, never paying it', async () => {
    const { game, requests } = await arena({ reconciler: { intervalMs: 20 } });
    const match = await fundedMatch(game, ['alice', 'bob']);
    const decided = await game.lightning.matches.settle(match.id, { alice: 1 });
    const payoutId = decided.payouts[0]?.intentId as string;
    await game.lightning.operator.reject(payoutId, 'ann', 'collusion');
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).status === 'settled',
      5_000,
      'the match settles',
    );
    expect(requests(), 'no claim code for the rejected payout, ever').to.equal(0);
    expect(
      await game.lightning.books.ledger.balances([
        `escrow:${match.id}`,
        'house:rejected',
        'inflight',
      ]),
    ).to.deep.equal([
      { account: `escrow:${match.id}`, unit: 'msats', balance: '0' },
      { account: 'house:rejected', unit: 'msats', balance: '80000' },
      { account: 'inflight', unit: 'msats', balance: '0' },
    ]);
    const group = await game.lightning.books.ledger.byGroup(match.id);
    expect(group.filter((i) => i.meta.payKey !== undefined).map((i) => i.id)).to.deep.equal([
      payoutId,
    ]);
    expect((await game.lightning.books.audit()).findings).to.deep.equal([]);
  });

  it("a rejected match payout is its winner's documented end: no audit finding, no error line, no alert", async () => {
    const errors: string[] = [];
    const { game: started } = await arena({
      reconciler: { intervalMs: 20 },
      audit: { settleMs: 1 },
      alerts: {},
      logger: { info() {}, warn() {}, error: (line: string) => errors.push(line) },
    });
    const game = started;
    const findings: unknown[] = [];
    const alerts: unknown[] = [];
    game.lightning.on('audit', (found) => findings.push(...found));
    game.lightning.on('alert', (alert) => alerts.push(alert));
    const match = await fundedMatch(game, ['alice', 'bob']);
    const decided = await game.lightning.matches.settle(match.id, { alice: 1 });
    await game.lightning.operator.reject(
      decided.payouts[0]?.intentId as string,
      'ann',
      'collusion',
    );
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).status === 'settled',
      5_000,
      'the match settles',
    );
    // Past the audit's settleMs after the match's last entry: its winners are checked now.
    const lastAt = Math.max(
      ...(await game.lightning.books.journal({ matchId: match.id })).entries.map((e) => e.at),
    );
    await eventually(() => Date.now() > lastAt + 1, 1_000, 'the settle time passes');
    const report = await game.lightning.books.audit();
    expect(report.findings).to.deep.equal([]);
    expect(findings).to.deep.equal([]);
    expect(alerts).to.deep.equal([]);
    expect(game.lightning.operator.alerts()).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  it('never holds a refund: an aborted match gives every fee back at once', async () => {
    const { game, requests } = await arena({ approvals: { aboveMsat: 1 } });
    const match = await fundedMatch(game, ['alice']);
    const aborted = await game.lightning.matches.abort(match.id, 'server restart');
    expect(aborted.status).to.equal('aborted');
    expect(await game.lightning.operator.held()).to.deep.equal([]);
    expect(requests()).to.equal(1);
  });
});
