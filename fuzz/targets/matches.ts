/**
 * The match targets: open, enter, settle, abort and view, on the server and in the room. Each
 * argument list holds at least one certainly wrong argument beside good ones, aimed at the
 * environment's open matches (that only alice paid into): a settle naming someone who never
 * paid in, a share too small to weigh a millionth, an entry with a bad Lightning address, an
 * abort without a reason. Each must be refused with an InvalidArgumentError, the matches left
 * open, nothing sent, recorded or emitted.
 *
 * Cost: per input the call itself; the refusals after the edge read the match and its group.
 */
import fc from 'fast-check';
import type { FuzzEnvironment } from '../environment.js';
import { refusal, type Target } from '../harness.js';
import * as spec from '../specs.js';
import { anything, badObject, text } from '../values.js';

type Method = (...args: unknown[]) => unknown;

/** A target that calls `method` of `owner` with each generated argument list. */
function call(name: string, owner: object, method: string, args: fc.Arbitrary<unknown[]>): Target {
  const fn = (owner as Record<string, Method>)[method] as Method;
  return {
    name,
    inputs: args,
    attempt: (input) => refusal(() => fn.apply(owner, input as unknown[])),
  };
}

/** Two arguments, at least one bad. */
function pair(
  goodFirst: fc.Arbitrary<unknown>,
  badFirst: fc.Arbitrary<unknown>,
  goodSecond: fc.Arbitrary<unknown>,
  badSecond: fc.Arbitrary<unknown>,
): fc.Arbitrary<unknown[]> {
  return fc.oneof(
    fc.tuple(badFirst, goodSecond),
    fc.tuple(goodFirst, badSecond),
    fc.tuple(badFirst, badSecond),
  );
}

export function matchTargets(env: FuzzEnvironment): Target[] {
  const l = env.lightning;
  const plugin = env.room.plugins.lightning;
  const roomMatch = env.matches.room;
  const matchId = fc.constant(env.matches.server);
  // A room match's `enter` takes a player as the room helpers do (a Client or an id, see
  // calls.ts): what is neither, or an id too long to record, is wrong.
  const player = fc.oneof(fc.constant(env.client), text(1, 40));
  const badPlayer = fc.oneof(
    anything.filter((v) => typeof v !== 'string'),
    fc.constant(''),
    fc.string({ minLength: 256, maxLength: 300 }),
  );
  return [
    call(
      'lightning.matches.open',
      l.matches,
      'open',
      badObject(spec.openMatch).map((a) => [a]),
    ),
    call(
      'lightning.matches.enter',
      l.matches,
      'enter',
      badObject(spec.enterMatch(env.matches.server)).map((a) => [a]),
    ),
    call(
      'lightning.matches.settle',
      l.matches,
      'settle',
      pair(matchId, spec.badMatchId, spec.goodShares, spec.badShares),
    ),
    call(
      'lightning.matches.abort',
      l.matches,
      'abort',
      pair(matchId, spec.badMatchId, spec.goodReason, spec.badReason),
    ),
    call(
      'lightning.matches.get',
      l.matches,
      'get',
      spec.badMatchId.map((a) => [a]),
    ),
    call(
      'room.openMatch',
      plugin,
      'openMatch',
      badObject(spec.roomOpenMatch).map((a) => [a]),
    ),
    call(
      'room.match.enter',
      roomMatch,
      'enter',
      pair(player, badPlayer, spec.roomMatchEntry.good, badObject(spec.roomMatchEntry)),
    ),
    call(
      'room.match.settle',
      roomMatch,
      'settle',
      spec.badShares.map((a) => [a]),
    ),
    call(
      'room.match.abort',
      roomMatch,
      'abort',
      spec.badReason.map((a) => [a]),
    ),
  ];
}
