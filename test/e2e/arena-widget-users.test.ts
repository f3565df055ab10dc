/**
 * Issue 30, finding 3, against the example arena: a player who joins and leaves in a loop made a
 * widget user create on every join, each a token of the game's rate spent on a call that learns
 * nothing new. Now the arena remembers each player's widget user: one create per player, however
 * often they come back.
 */
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { type ArenaUnderTest, joinArena, signIn, startArenaUnderTest } from './arena-support.js';

const CREATE_USER = '/api/v1/widget/users';

describe('example arena: one widget user create per player (issue 30, finding 3)', function () {
  this.timeout(30_000);
  let t: ArenaUnderTest;
  beforeEach(async () => {
    t = await startArenaUnderTest();
  });
  afterEach(async () => t?.arena.stop());

  it('a player who joins and leaves 5 times makes one create; another player makes their own', async () => {
    const token = await signIn(t);
    for (let i = 0; i < 5; i++) {
      const player = await joinArena(t, { token, name: 'Looper' });
      // The history message is the last of the arena's join work.
      const before = player.history;
      await eventually(() => player.history !== before, 5_000, 'the join is done');
      await player.room.leave();
    }
    expect(t.emulator.control.count('POST', CREATE_USER)).to.equal(1);
    const other = await joinArena(t, { name: 'Other' });
    const before = other.history;
    await eventually(() => other.history !== before, 5_000, 'the join is done');
    expect(t.emulator.control.count('POST', CREATE_USER)).to.equal(2);
    const users = t.emulator.control.users().map((u) => u.reference_id);
    expect(users).to.have.members([t.arena.auth.verify(token), other.id]);
  });
});
