/**
 * The call targets: every PaymentsApi method that takes an input, every server helper of the
 * lightning object, and every room plugin helper. Each is fed arguments that are certainly
 * wrong (values.ts, specs.ts) and must answer with a rejected promise holding an
 * InvalidArgumentError, sending and recording nothing.
 *
 * `wallet.get()` takes no input and is not here; that a closed client rejects it is a unit test
 * (test/api/rejections.test.ts).
 */
import fc from 'fast-check';
import type { FuzzEnvironment } from '../environment.js';
import { refusal, type Target } from '../harness.js';
import * as spec from '../specs.js';
import {
  anything,
  badEmail,
  badIntIn,
  badLnAddress,
  badObject,
  badPathId,
  badTypeIds,
  pathId,
  text,
} from '../values.js';

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

/** One argument, bad. */
const one = (bad: fc.Arbitrary<unknown>) => bad.map((a) => [a]);

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

export function apiTargets(env: FuzzEnvironment): Target[] {
  const api = env.lightning.service.api;
  const typeIds = fc.subarray([2, 3, 6], { minLength: 1 });
  return [
    call('api.payments.send', api.payments, 'send', one(badObject(spec.payment))),
    call('api.payments.get', api.payments, 'get', one(badPathId)),
    call(
      'api.lnAddress.sendPayment',
      api.lnAddress,
      'sendPayment',
      one(badObject(spec.lnAddressPayment)),
    ),
    call(
      'api.lnAddress.validate',
      api.lnAddress,
      'validate',
      pair(
        spec.goodLnAddress,
        badLnAddress,
        fc.option(spec.callLimits.good, { nil: undefined }),
        badObject(spec.callLimits),
      ),
    ),
    call(
      'api.withdrawalRequests.create',
      api.withdrawalRequests,
      'create',
      one(badObject(spec.withdrawalRequest)),
    ),
    call('api.withdrawalRequests.get', api.withdrawalRequests, 'get', one(badPathId)),
    call(
      'api.staticCharges.create',
      api.staticCharges,
      'create',
      one(badObject(spec.staticCharge)),
    ),
    call('api.staticCharges.get', api.staticCharges, 'get', one(badPathId)),
    call(
      'api.staticCharges.update',
      api.staticCharges,
      'update',
      pair(pathId, badPathId, spec.staticChargeUpdate.good, badObject(spec.staticChargeUpdate)),
    ),
    call('api.widgetUsers.create', api.widgetUsers, 'create', one(badObject(spec.widgetUser))),
    call('api.widgetUsers.deplete', api.widgetUsers, 'deplete', one(badObject(spec.deplete))),
    call(
      'api.widgetUsers.update',
      api.widgetUsers,
      'update',
      pair(pathId, badPathId, spec.emailChange.good, badObject(spec.emailChange)),
    ),
    call(
      'api.widgetUsers.acceptDisclosures',
      api.widgetUsers,
      'acceptDisclosures',
      pair(pathId, badPathId, typeIds, badTypeIds),
    ),
    call(
      'api.widgetSessions.create',
      api.widgetSessions,
      'create',
      one(badObject(spec.widgetSession)),
    ),
    call('api.ramp.createSession', api.ramp, 'createSession', one(badObject(spec.rampSession))),
  ];
}

export function serverTargets(env: FuzzEnvironment): Target[] {
  const l = env.lightning;
  const status = fc.constantFrom('completed', 'expired', 'failed');
  const badStatus = anything.filter(
    (v) => !['completed', 'expired', 'failed'].includes(v as string),
  );
  const note = text(1, 50).filter((s) => s.trim() !== '');
  const badNote = fc.oneof(
    anything.filter((v) => typeof v !== 'string'),
    fc.stringMatching(/^\s*$/),
    fc.string({ minLength: 501, maxLength: 560 }).filter((s) => s.trim().length > 500),
  );
  const name = text(1, 40).filter((s) => s.trim() !== '');
  const badName = fc.oneof(
    anything.filter((v) => typeof v !== 'string'),
    fc.stringMatching(/^\s*$/),
    fc.string({ minLength: 256, maxLength: 300 }).filter((s) => s.trim().length > 255),
  );
  const badPlayer = fc.oneof(
    anything.filter((v) => typeof v !== 'string'),
    fc.constant(''),
    fc.string({ minLength: 256, maxLength: 300 }),
  );
  return [
    call('lightning.reward', l, 'reward', one(badObject(spec.reward))),
    // Not a list, an empty one, one past 1,000, or a bad reward among good ones: refused whole.
    call(
      'lightning.rewardMany',
      l,
      'rewardMany',
      one(
        fc.oneof(
          anything.filter((v) => !Array.isArray(v)),
          fc.constant([]),
          spec.reward.good.map((good) => Array.from({ length: 1001 }, () => good)),
          fc
            .tuple(
              fc.array(spec.reward.good, { maxLength: 2 }),
              badObject(spec.reward),
              fc.array(spec.reward.good, { maxLength: 2 }),
            )
            .map(([before, bad, after]) => [...before, bad, ...after]),
        ),
      ),
    ),
    call('lightning.tabs.credit', l.tabs, 'credit', one(badObject(spec.credit))),
    call('lightning.tabs.withdraw', l.tabs, 'withdraw', one(badObject(spec.withdraw))),
    call('lightning.tabs.balance', l.tabs, 'balance', one(badPlayer)),
    call('lightning.chargeEntryFee', l, 'chargeEntryFee', one(badObject(spec.entryFee))),
    call('lightning.payAddress', l, 'payAddress', one(badObject(spec.addressPayment))),
    call('lightning.spendPoints', l, 'spendPoints', one(badObject(spec.spend))),
    call('lightning.books.refresh', l.books, 'refresh', one(spec.badIntentId)),
    call('lightning.books.tabs', l.books, 'tabs', one(badObject(spec.tabsQuery))),
    call('lightning.operator.refusals', l.operator, 'refusals', one(badIntIn(1, 1000))),
    // `undefined` is the default (100); every other value outside 1..1000 is wrong.
    call('lightning.operator.unknowns', l.operator, 'unknowns', one(badIntIn(1, 1000))),
    call(
      'lightning.operator.resolve',
      l.operator,
      'resolve',
      fc.oneof(
        fc.tuple(spec.badIntentId, status, note),
        fc.tuple(text(1, 40), badStatus, note),
        fc.tuple(text(1, 40), status, badNote),
      ),
    ),
    // The operator's actions: a name and a note are required; a bad one is refused first.
    call(
      'lightning.operator.pause',
      l.operator,
      'pause',
      fc.oneof(fc.tuple(badName, note), fc.tuple(name, badNote)),
    ),
    call(
      'lightning.operator.reissue',
      l.operator,
      'reissue',
      fc.oneof(fc.tuple(spec.badIntentId, name), fc.tuple(text(1, 40), badName)),
    ),
    call(
      'lightning.operator.block',
      l.operator,
      'block',
      fc.oneof(
        fc.tuple(badPlayer, name, note),
        fc.tuple(text(1, 40), badName, note),
        fc.tuple(text(1, 40), name, badNote),
      ),
    ),
    call(
      'lightning.operator.unblock',
      l.operator,
      'unblock',
      fc.oneof(fc.tuple(badPlayer, name), fc.tuple(text(1, 40), badName)),
    ),
  ];
}

export function roomTargets(env: FuzzEnvironment): Target[] {
  const plugin = env.room.plugins.lightning;
  const client = fc.constant(env.client);
  // Not a Client: any other value, a player id, or an object that only looks like a client.
  const lookalike = fc.record({
    sessionId: text(1, 20),
    userData: fc.record({ playerId: text(1, 20), email: spec.goodEmail }),
    auth: fc.option(fc.record({ id: text(1, 20) })),
  });
  const badClient = fc.oneof(anything, lookalike);
  // A player may be a Client or an id; what is neither, or an id too long to record, is wrong.
  const badPlayer = fc.oneof(
    anything.filter((v) => typeof v !== 'string'),
    fc.constant(''),
    fc.string({ minLength: 256, maxLength: 300 }),
  );
  const player = fc.oneof(client, text(1, 40));
  const typeIds = fc.subarray([2, 3, 6], { minLength: 1 });
  return [
    call(
      'room.reward',
      plugin,
      'reward',
      pair(player, badPlayer, spec.roomReward.good, badObject(spec.roomReward)),
    ),
    call(
      'room.payAddress',
      plugin,
      'payAddress',
      pair(player, badPlayer, spec.roomPayAddress.good, badObject(spec.roomPayAddress)),
    ),
    call(
      'room.chargeEntryFee',
      plugin,
      'chargeEntryFee',
      pair(player, badPlayer, spec.roomEntryFee.good, badObject(spec.roomEntryFee)),
    ),
    call(
      'room.spendPoints',
      plugin,
      'spendPoints',
      pair(client, badClient, spec.roomSpend.good, badObject(spec.roomSpend)),
    ),
    call(
      'room.openWidget',
      plugin,
      'openWidget',
      pair(
        client,
        badClient,
        fc.option(spec.roomWidget.good, { nil: undefined }),
        badObject(spec.roomWidget),
      ),
    ),
    call(
      'room.openPurchase',
      plugin,
      'openPurchase',
      pair(
        client,
        badClient,
        fc.option(spec.roomPurchase.good, { nil: undefined }),
        badObject(spec.roomPurchase),
      ),
    ),
    call(
      'room.acceptDisclosures',
      plugin,
      'acceptDisclosures',
      pair(client, badClient, typeIds, badTypeIds),
    ),
    call(
      'room.updateEmail',
      plugin,
      'updateEmail',
      pair(client, badClient, spec.goodEmail, fc.oneof(badEmail, fc.constant(undefined))),
    ),
  ];
}
