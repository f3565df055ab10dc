import { expect } from 'chai';
import { call, useEmulator, useReceiver } from './helpers.js';

describe('emulator: callback delivery options', () => {
  const t = useEmulator();
  const r = useReceiver();

  async function rewardClaimed(tag: string): Promise<string> {
    const res = await call(t.emu, 'POST', '/v0/withdrawal-requests', {
      body: { amount: '10000', description: tag, callbackUrl: `${r.receiver.url}/${tag}` },
    });
    expect(t.emu.control.claimWithdrawal(res.body.data.id).status).to.equal('OK');
    return res.body.data.id;
  }

  it('delivers each callback once, unauthenticated, as JSON', async () => {
    await rewardClaimed('a');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received).to.have.length(1);
    const [d] = r.receiver.received;
    expect(d?.headers['content-type']).to.equal('application/json');
    expect(d?.headers).to.not.have.property('apikey');
    expect(t.emu.control.sentCallbacks().map((c) => [c.kind, c.status, c.outcome])).to.deep.equal([
      ['withdrawalRequest', 'completed', 'delivered'],
    ]);
  });

  it('drops callbacks (always, by predicate) and records them as dropped', async () => {
    t.emu.control.callbacks.set({ drop: true });
    await rewardClaimed('a');
    t.emu.control.callbacks.set({ drop: (url) => url.endsWith('/c') });
    await rewardClaimed('b');
    await rewardClaimed('c');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received.map((d) => d.path)).to.deep.equal(['/b']);
    expect(t.emu.control.callbackLog.map((c) => c.outcome)).to.deep.equal([
      'dropped',
      'delivered',
      'dropped',
    ]);
  });

  it('duplicates callbacks', async () => {
    t.emu.control.callbacks.set({ duplicate: 2 });
    const id = await rewardClaimed('a');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received).to.have.length(3);
    expect(new Set(r.receiver.received.map((d) => d.body.id))).to.deep.equal(new Set([id]));
  });

  it('delays callbacks', async () => {
    t.emu.control.callbacks.set({ delayMs: 300 });
    await rewardClaimed('a');
    // Undelayed, a callback queued after it overtakes it: while the delay runs, nothing of
    // the delayed one has reached the receiver.
    t.emu.control.callbacks.set({ delayMs: 0 });
    await rewardClaimed('b');
    await r.receiver.waitFor(1);
    expect(r.receiver.received.map((d) => d.path)).to.deep.equal(['/b']);
    expect(t.emu.control.callbackLog[0]).to.include({ outcome: 'pending', sentAt: null });
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received.map((d) => d.path)).to.deep.equal(['/b', '/a']);
  });

  it('reorders callbacks: held ones arrive newest first', async () => {
    t.emu.control.callbacks.set({ reorder: true, reorderWindowMs: 10_000 });
    await rewardClaimed('first');
    await rewardClaimed('second');
    await rewardClaimed('third');
    // Queued and held, none POSTed: an unheld callback is POSTed as it is queued.
    expect(t.emu.control.callbackLog.map((c) => [c.outcome, c.sentAt])).to.deep.equal([
      ['pending', null],
      ['pending', null],
      ['pending', null],
    ]);
    expect(r.receiver.received).to.have.length(0);
    await t.emu.control.callbacks.flush();
    expect(r.receiver.received.map((d) => d.path)).to.deep.equal(['/third', '/second', '/first']);
  });

  it('counts failed callbacks and never retries them', async () => {
    r.receiver.status = 500;
    await rewardClaimed('a');
    const res = await call(t.emu, 'POST', '/v0/withdrawal-requests', {
      body: { amount: '10000', description: 'x', callbackUrl: 'http://127.0.0.1:1/unreachable' },
    });
    t.emu.control.claimWithdrawal(res.body.data.id);
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received).to.have.length(1);
    expect(t.emu.control.callbacks.failures).to.equal(2);
    expect(t.emu.control.sentCallbacks().map((c) => c.outcome)).to.deep.equal(['failed', 'failed']);
    // A later callback, delivered, marks the point a retry would have been sent by.
    r.receiver.status = 200;
    await rewardClaimed('b');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received.map((d) => [d.path, d.body.description])).to.deep.equal([
      ['/a', 'a'],
      ['/b', 'b'],
    ]);
    expect(t.emu.control.callbacks.failures).to.equal(2);
    expect(t.emu.control.sentCallbacks().map((c) => c.outcome)).to.deep.equal([
      'failed',
      'failed',
      'delivered',
    ]);
  });

  it('takes delivery options at start', async () => {
    await t.emu.close();
    const { startEmulator } = await import('../../src/emulator/index.js');
    t.emu = await startEmulator({ callbacks: { duplicate: 1 } });
    await rewardClaimed('a');
    await t.emu.control.callbacks.idle();
    expect(r.receiver.received).to.have.length(2);
  });
});
