/**
 * A settle's shares name their winners by own keys: a `__proto__` key (as `JSON.parse` of a
 * client's or a script's body makes one) names no player and is refused, never dropped from the
 * parsed shares so that the pot went to the others without a word (found by `npm run fuzz`,
 * seed -820146784, room.match.settle).
 */
import { expect } from 'chai';
import { sharesInput } from '../../src/server/match/terms.js';

describe('a settle’s shares', () => {
  it('refuses a __proto__ winner instead of dropping it', () => {
    const shares = JSON.parse('{"alice":1,"__proto__":1}') as unknown;
    const parsed = sharesInput.safeParse(shares);
    expect(parsed.success).to.equal(false);
    expect(parsed.error?.issues[0]?.path).to.deep.equal(['__proto__']);
  });

  it('takes plain winners as they are', () => {
    expect(sharesInput.parse({ alice: 2, constructor: 1 })).to.deep.equal({
      alice: 2,
      constructor: 1,
    });
  });
});
