/**
 * One parse per call, where it enters (issue 23, item 4): a room helper parses its arguments,
 * and neither its host, the operation nor the API client parses them again; a server method or
 * an API call made directly is parsed once by itself. Counted on the parse channel of
 * src/parse.ts. Before this, a room's reward was parsed three times (room, operation,
 * namespace), a match entry six.
 *
 * The types hold the inner layers to it: the host takes what a parse returns, so handing it
 * a game's unparsed input does not compile.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { expect } from 'chai';
import type { z } from 'zod';
import { pathId } from '../../src/api/inputs.js';
import { LN_ADDRESS_DOMAIN } from '../../src/emulator/index.js';
import { PARSE_CHANNEL, type ParseEvent } from '../../src/parse.js';
import type { MoneyCalls } from '../../src/room/host.js';
import type { RewardInput } from '../../src/server/operations/inputs.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

/**
 * The parses of a call's input while `run` ran. An id checked where it goes into a path is not
 * one: the engine's re-reads of the service (a match's abort closing a fee) check the remote
 * id they read by, which may have come from a callback's body.
 */
async function parsesDuring(run: () => Promise<unknown>): Promise<z.ZodType[]> {
  const seen: z.ZodType[] = [];
  const count = (message: unknown) => {
    const { schema } = message as ParseEvent;
    if (schema !== pathId) seen.push(schema);
  };
  subscribe(PARSE_CHANNEL, count);
  try {
    await run();
  } finally {
    unsubscribe(PARSE_CHANNEL, count);
  }
  return seen;
}

describe('one parse per call', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('parses each room helper, server method and API call once, where it enters', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const client = serverClient(room, alice);
    const plugin = room.plugins.lightning;
    const lightning = game.lightning;
    const ok = { amountMsat: 20_000, description: 'x' };

    const calls: [string, () => Promise<unknown>][] = [
      ['room reward', () => plugin.reward(client, ok)],
      ['room chargeEntryFee', () => plugin.chargeEntryFee(client, ok)],
      [
        'room payAddress',
        () =>
          plugin.payAddress(client, {
            amountMsat: 20_000,
            lnAddress: `alice@${LN_ADDRESS_DOMAIN}`,
          }),
      ],
      ['room openMatch', () => plugin.openMatch({ entryFeeMsat: 10_000 })],
      ['lightning.reward', () => lightning.reward({ ...ok, playerId: 'bob' })],
      ['lightning.matches.open', () => lightning.matches.open({ entryFeeMsat: 10_000 })],
      [
        'api.withdrawalRequests.create',
        () => lightning.service.api.withdrawalRequests.create({ amount: 20_000, description: 'x' }),
      ],
    ];
    const counted: Record<string, number> = {};
    const expected: Record<string, number> = {};
    for (const [name, run] of calls) {
      counted[name] = (await parsesDuring(run)).length;
      expected[name] = 1;
    }
    const match = await plugin.openMatch({ entryFeeMsat: 10_000 });
    counted['room match.enter'] = (await parsesDuring(() => match.enter(client))).length;
    expected['room match.enter'] = 1;
    counted['room match.abort'] = (await parsesDuring(() => match.abort('test'))).length;
    expected['room match.abort'] = 1;
    expect(counted).to.deep.equal(expected);
  });

  it('hands the host what a parse returned: a game’s unparsed input is a type error', () => {
    const host: Pick<MoneyCalls, 'reward'> = {
      reward: async () => {
        throw new Error('not called');
      },
    };
    // A game's input: an amount not yet turned into a digit string, no expiry, no room.
    const unparsed: RewardInput = { playerId: 'alice', amountMsat: 20_000, description: 'x' };
    // @ts-expect-error the host takes the parsed reward (ParsedReward), not the game's input
    const send = () => host.reward(unparsed);
    expect(send).to.be.a('function');
  });
});
