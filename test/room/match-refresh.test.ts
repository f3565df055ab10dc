/**
 * A room's match coalesces its reads (RoomMatch.refresh): while a read is in flight, every call
 * shares the one read made after it, so a burst of settlements of a big match's intents costs
 * two reads, not one each; and no caller gets an answer read before it called.
 */
import { expect } from 'chai';
import { RoomMatch, type RoomMatchDeps } from '../../src/room/match.js';
import type { MatchView } from '../../src/server/match/view.js';
import { eventually } from '../support/eventually.js';

function view(version: number): MatchView {
  return { id: 'm1', status: 'open', seats: 0, funded: false, updatedAt: version } as MatchView;
}

/** Calls whose `view` answers only when the test releases it, with the version current then. */
function heldViews() {
  let version = 0;
  const waiting: (() => void)[] = [];
  const calls = {
    reads: 0,
    view: () => {
      calls.reads++;
      const started = version;
      return new Promise<MatchView>((resolve) => waiting.push(() => resolve(view(started))));
    },
    keepAlive: async () => {},
  };
  return {
    calls,
    bump: () => ++version,
    release: () => {
      for (const answer of waiting.splice(0)) answer();
    },
  };
}

function match(calls: unknown): RoomMatch {
  const deps = {
    calls,
    enter: async () => {
      throw new Error('not used');
    },
    state: () => undefined,
    clock: { setInterval: () => ({ clear() {} }), setTimeout: () => ({ clear() {} }) },
    lingerMs: 0,
    onGone: () => {},
    onError: () => {},
  } as unknown as RoomMatchDeps;
  return new RoomMatch(view(0), deps, 30_000);
}

describe('room: a match coalesces its reads', () => {
  it('reads twice for a burst of 100 refreshes, and each caller gets a read begun after its call', async () => {
    const held = heldViews();
    const m = match(held.calls);
    const first = m.refresh();
    held.bump();
    // Called after version 1 exists: the read in flight (begun at 0) is too old for them.
    const later = Array.from({ length: 100 }, () => m.refresh());
    held.release();
    expect((await first).updatedAt).to.equal(0);
    // The queued read starts once the first ended; release it in turn.
    await eventually(() => held.calls.reads === 2, 1_000, 'the queued read');
    held.release();
    const answers = await Promise.all(later);
    expect(answers.every((a) => a.updatedAt === 1)).to.equal(true);
    expect(held.calls.reads).to.equal(2);
    expect(m.view.updatedAt).to.equal(1);
  });

  it('reads again for a refresh that comes after the reads ended', async () => {
    const held = heldViews();
    const m = match(held.calls);
    const one = m.refresh();
    held.release();
    await one;
    held.bump();
    const two = m.refresh();
    held.release();
    expect((await two).updatedAt).to.equal(1);
    expect(held.calls.reads).to.equal(2);
  });
});
