/**
 * The argument objects of every public call, as the contract describes them: a generator of
 * good ones, and per field a generator of values that are certainly wrong. The fuzz targets
 * turn each into bad arguments with `badObject` (values.ts).
 *
 * Cost: pure arbitraries.
 */
import fc from 'fast-check';
import {
  anything,
  badCurrency,
  badDateTime,
  badEmail,
  badId,
  badIntIn,
  badLnAddress,
  badMetadata,
  badMsat,
  badPositiveInt,
  badRampCurrency,
  badText,
  badUrl,
  badUuid,
  goodId,
  notOfType,
  type ObjectSpec,
  text,
} from './values.js';

export const goodMsat = fc.oneof(
  fc.integer({ min: 1, max: 1_000_000_000 }),
  fc.bigInt({ min: 1n, max: 10n ** 12n }),
  fc.integer({ min: 1, max: 1_000_000_000 }).map(String),
);
export const goodEmail = fc.constantFrom('a@example.com', 'player.one@game.example');
export const goodLnAddress = fc.constantFrom(
  'alice@emulator.test',
  'Bob.Smith+tag@pay.example.com',
  'x_1-2@a.io',
);
const goodUrl = fc.constantFrom('https://game.example/cb/1', 'http://127.0.0.1:9/hook');
const goodMetadata = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
/** A text field that must not be empty and has no stated maximum. */
const badNonEmpty = fc.oneof(notOfType('string'), fc.constant(''));
/** A positive integer field that may also be null (allowedSlots: no cap). */
const badSlots = badPositiveInt.filter((v) => v !== null);

// ---- PaymentsApi, in the service's words ---------------------------------------------------

export const withdrawalRequest: ObjectSpec = {
  good: fc.record(
    {
      amount: goodMsat,
      description: text(0, 50),
      internalId: text(0, 40),
      callbackUrl: goodUrl,
      expiresIn: fc.integer({ min: 1, max: 1_000_000 }),
    },
    { requiredKeys: ['amount', 'description'] },
  ),
  bad: {
    amount: badMsat,
    description: badText(0, 1000),
    internalId: badText(0, 255),
    callbackUrl: badUrl,
    expiresIn: badPositiveInt,
  },
  required: ['amount', 'description'],
};

export const payment: ObjectSpec = {
  good: fc.record(
    {
      amount: goodMsat,
      description: text(0, 50),
      internalId: text(0, 40),
      callbackUrl: goodUrl,
      invoice: text(1, 40),
    },
    { requiredKeys: ['amount', 'description', 'internalId'] },
  ),
  bad: {
    amount: badMsat,
    description: badText(0, 1000),
    internalId: badText(0, 255),
    callbackUrl: badUrl,
    invoice: badNonEmpty,
  },
  required: ['amount', 'description', 'internalId'],
};

export const lnAddressPayment: ObjectSpec = {
  good: fc.record(
    {
      lnAddress: goodLnAddress,
      amount: goodMsat,
      comment: text(0, 50),
      internalId: text(0, 40),
      callbackUrl: goodUrl,
    },
    { requiredKeys: ['lnAddress', 'amount'] },
  ),
  bad: {
    lnAddress: badLnAddress,
    amount: badMsat,
    comment: badText(0, 255),
    internalId: badText(0, 255),
    callbackUrl: badUrl,
  },
  required: ['lnAddress', 'amount'],
};

/** The bounds of one call (`lnAddress.validate(address, limits)`); absent is valid. */
export const callLimits: ObjectSpec = {
  good: fc.record(
    {
      timeoutMs: fc.integer({ min: 1, max: 600_000 }),
      maxRetries: fc.integer({ min: 0, max: 10 }),
    },
    { requiredKeys: [] },
  ),
  bad: { timeoutMs: badIntIn(1, 600_000), maxRetries: badIntIn(0, 10) },
  required: [],
  optional: true,
};

const chargeFields = {
  description: text(0, 50),
  successMessage: text(0, 144),
  allowedSlots: fc.option(fc.integer({ min: 1, max: 100 })),
  internalId: text(0, 40),
  callbackUrl: goodUrl,
  identifier: text(1, 64),
};
const badChargeFields = {
  minAmount: badMsat,
  maxAmount: badMsat,
  description: badText(0, 1000),
  successMessage: badText(0, 144),
  allowedSlots: badSlots,
  internalId: badText(0, 255),
  callbackUrl: badUrl,
  identifier: badText(1, 64),
};

export const staticCharge: ObjectSpec = {
  good: fc
    .tuple(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.record(chargeFields, { requiredKeys: ['description'] }),
    )
    .map(([amount, rest]) => ({ minAmount: amount, maxAmount: amount, ...rest })),
  bad: badChargeFields,
  required: ['minAmount', 'maxAmount', 'description'],
  // A range upside down is wrong even though each end is a fine amount.
  also: fc
    .tuple(fc.integer({ min: 2, max: 1_000_000 }), fc.record(chargeFields))
    .map(([amount, rest]) => ({ ...rest, description: 'x', minAmount: amount, maxAmount: 1 })),
};

const { identifier: _identifier, ...updateFields } = chargeFields;

export const staticChargeUpdate: ObjectSpec = {
  good: fc.record({ ...updateFields, expiresAt: fc.option(fc.constant('2030-01-01T00:00:00Z')) }),
  bad: {
    ...badChargeFields,
    // Chosen at creation, never changed: any value at all is wrong.
    identifier: notOfType(),
    expiresAt: badDateTime,
  },
  required: [],
};

export const widgetUser: ObjectSpec = {
  good: fc.record({ reference_id: text(1, 40), email: goodEmail }),
  bad: { reference_id: badText(1, 255), email: badEmail },
  required: ['reference_id', 'email'],
};

export const deplete: ObjectSpec = {
  good: fc.record(
    {
      user_id: text(1, 40),
      amount: fc.integer({ min: 1, max: 1_000_000 }),
      currency: fc.constantFrom('USDZ', 'PTS'),
      idempotency_key: fc.uuid({ version: 4 }),
    },
    { requiredKeys: ['user_id', 'amount'] },
  ),
  bad: {
    user_id: badText(1, 255),
    amount: badPositiveInt,
    currency: badCurrency,
    idempotency_key: badUuid,
  },
  required: ['user_id', 'amount'],
};

export const emailChange: ObjectSpec = {
  good: fc.record({ email: goodEmail }),
  bad: { email: badEmail },
  required: ['email'],
};

const sessionFields = {
  email: goodEmail,
  webhook_url: goodUrl,
  reference_id: text(0, 40),
  metadata: goodMetadata,
  access_token: text(1, 20),
};

export const widgetSession: ObjectSpec = {
  good: fc.record(sessionFields, { requiredKeys: ['email'] }),
  bad: {
    email: badEmail,
    webhook_url: badUrl,
    reference_id: badText(0, 255),
    metadata: badMetadata,
    access_token: badNonEmpty,
  },
  required: [],
  // Neither an email nor an access token: the widget cannot know who the user is.
  also: fc.record(sessionFields).map(({ email: _e, access_token: _t, ...rest }) => rest),
};

export const rampSession: ObjectSpec = {
  good: fc.record(
    {
      email: goodEmail,
      webhook_url: goodUrl,
      destination: text(1, 40),
      quote_currency: fc.constantFrom('USD', 'EUR'),
      base_currency: fc.constantFrom('BTC'),
      reference_id: text(0, 40),
      metadata: goodMetadata,
    },
    { requiredKeys: ['email', 'webhook_url'] },
  ),
  bad: {
    email: badEmail,
    webhook_url: badUrl,
    destination: badNonEmpty,
    quote_currency: badRampCurrency,
    base_currency: badRampCurrency,
    reference_id: badText(0, 255),
    metadata: badMetadata,
  },
  required: ['email', 'webhook_url'],
};

// ---- the server's helpers, in the game's words ---------------------------------------------

const moneyFields = {
  playerId: goodId,
  roomId: fc.option(text(1, 40)),
  amountMsat: goodMsat,
  description: text(1, 50),
  expiresIn: fc.integer({ min: 10, max: 7 * 24 * 3600 }),
};
const badMoneyFields = {
  playerId: badId,
  roomId: badText(1, 255).filter((v) => v !== null),
  amountMsat: badMsat,
  description: badText(1, 1000),
  expiresIn: badIntIn(10, 7 * 24 * 3600),
};

export const reward: ObjectSpec = {
  good: fc.record(moneyFields, { requiredKeys: ['playerId', 'amountMsat', 'description'] }),
  bad: badMoneyFields,
  required: ['playerId', 'amountMsat', 'description'],
};

/** A tab's credit: a reward's fields but its claim time, and a key. */
const { expiresIn: _claimTime, ...creditFields } = moneyFields;
const { expiresIn: _badClaimTime, ...badCreditFields } = badMoneyFields;
export const credit: ObjectSpec = {
  good: fc.record(
    { ...creditFields, key: text(1, 200) },
    { requiredKeys: ['playerId', 'amountMsat', 'description'] },
  ),
  bad: { ...badCreditFields, key: badText(1, 200) },
  required: ['playerId', 'amountMsat', 'description'],
};

/** A tab's withdrawal: a reward's fields, its amount optional (the whole tab). */
export const withdraw: ObjectSpec = {
  good: fc.record(moneyFields, { requiredKeys: ['playerId', 'description'] }),
  bad: badMoneyFields,
  required: ['playerId', 'description'],
};

/** A page of tabs: the `next` of an earlier page (a balance, an account), and a size. */
export const tabsQuery: ObjectSpec = {
  good: fc.record(
    {
      after: fc
        .tuple(
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          fc.stringMatching(/^[a-z0-9-]{1,40}$/),
        )
        .map(([balance, owner]) => `${balance}:tab:${owner}`),
      limit: fc.integer({ min: 1, max: 1000 }),
    },
    { requiredKeys: [] },
  ),
  bad: {
    after: fc.oneof(
      badText(0, 300),
      fc.constantFrom('9223372036854775808:tab:x', '1:nope:x', '1:tab:', 'x:tab:y', '01:tab:y'),
    ),
    limit: badIntIn(1, 1000),
  },
  required: [],
  optional: true,
};

export const entryFee: ObjectSpec = {
  good: fc.record(
    { ...moneyFields, successMessage: text(0, 144), key: text(1, 200) },
    { requiredKeys: ['playerId', 'amountMsat', 'description'] },
  ),
  bad: { ...badMoneyFields, successMessage: badText(0, 144), key: badText(1, 200) },
  required: ['playerId', 'amountMsat', 'description'],
};

export const addressPayment: ObjectSpec = {
  good: fc.record(
    {
      playerId: moneyFields.playerId,
      roomId: moneyFields.roomId,
      lnAddress: goodLnAddress,
      amountMsat: goodMsat,
      comment: text(1, 50),
    },
    { requiredKeys: ['playerId', 'lnAddress', 'amountMsat'] },
  ),
  bad: {
    playerId: badMoneyFields.playerId,
    roomId: badMoneyFields.roomId,
    lnAddress: badLnAddress,
    amountMsat: badMsat,
    comment: badText(1, 255),
  },
  required: ['playerId', 'lnAddress', 'amountMsat'],
};

const spendFields = {
  amount: fc.integer({ min: 1, max: 1_000_000 }),
  currency: fc.constantFrom('USDZ', 'PTS'),
  description: text(0, 50),
};
const badSpendFields = {
  amount: badPositiveInt,
  currency: badCurrency,
  description: badText(0, 1000),
};

export const spend: ObjectSpec = {
  good: fc.record(
    {
      ...spendFields,
      playerId: moneyFields.playerId,
      roomId: moneyFields.roomId,
      userId: text(1, 40),
    },
    { requiredKeys: ['playerId', 'userId', 'amount'] },
  ),
  bad: {
    ...badSpendFields,
    playerId: badMoneyFields.playerId,
    roomId: badMoneyFields.roomId,
    userId: badText(1, 255),
  },
  required: ['playerId', 'userId', 'amount'],
};

// ---- the room plugin's helpers: the same, without what the plugin fills in ---------------

const { playerId: _p, roomId: _r, ...roomMoney } = moneyFields;
const { playerId: _bp, roomId: _br, ...badRoomMoney } = badMoneyFields;

export const roomReward: ObjectSpec = {
  good: fc.record(roomMoney, { requiredKeys: ['amountMsat', 'description'] }),
  bad: badRoomMoney,
  required: ['amountMsat', 'description'],
};

export const roomEntryFee: ObjectSpec = {
  good: fc.record(
    { ...roomMoney, successMessage: text(0, 144), key: text(1, 200) },
    { requiredKeys: ['amountMsat', 'description'] },
  ),
  bad: { ...badRoomMoney, successMessage: badText(0, 144), key: badText(1, 200) },
  required: ['amountMsat', 'description'],
};

export const roomPayAddress: ObjectSpec = {
  good: fc.record(
    { lnAddress: goodLnAddress, amountMsat: goodMsat, comment: text(1, 50) },
    { requiredKeys: ['lnAddress', 'amountMsat'] },
  ),
  bad: { lnAddress: badLnAddress, amountMsat: badMsat, comment: badText(1, 255) },
  required: ['lnAddress', 'amountMsat'],
};

export const roomSpend: ObjectSpec = {
  good: fc.record(spendFields, { requiredKeys: ['amount'] }),
  bad: badSpendFields,
  required: ['amount'],
};

export const roomWidget: ObjectSpec = {
  good: fc.record({ metadata: goodMetadata }),
  bad: { metadata: badMetadata },
  required: [],
  optional: true,
};

export const roomPurchase: ObjectSpec = {
  good: fc.record({
    email: goodEmail,
    destination: text(1, 40),
    quoteCurrency: fc.constantFrom('USD', 'EUR'),
    baseCurrency: fc.constantFrom('BTC'),
  }),
  bad: {
    email: badEmail,
    destination: badNonEmpty,
    quoteCurrency: badRampCurrency,
    baseCurrency: badRampCurrency,
  },
  required: [],
  optional: true,
};

/** An intent id that cannot be one: not a string, empty, or longer than 200 characters. */
export const badIntentId: fc.Arbitrary<unknown> = fc.oneof(
  anything.filter((v) => typeof v !== 'string'),
  fc.constant(''),
  fc.string({ minLength: 201, maxLength: 260 }),
);

// ---- matches (docs/MATCHES.md) -------------------------------------------------------------

/** The one player who paid into each fuzz fixture match (environment.ts). */
export const MATCH_PAYER = 'alice';

/** A match id that names no match: not a string, empty, too long, or one the ledger lacks. */
export const badMatchId: fc.Arbitrary<unknown> = fc.oneof(
  notOfType('string'),
  fc.constant(''),
  fc.string({ minLength: 256, maxLength: 300 }),
  fc.oneof(fc.uuid(), text(1, 40)),
);

const openFields = {
  entryFeeMsat: goodMsat,
  rake: fc.double({ min: 0, max: 0.5, noNaN: true }),
  feeExpiresIn: fc.integer({ min: 10, max: 86_400 }),
  timeoutMs: fc.integer({ min: 10_000, max: 7 * 24 * 3600 * 1000 }),
  claimExpiresIn: fc.integer({ min: 60, max: 7 * 24 * 3600 }),
  description: text(1, 50),
  // `players` is good alone but never with `seats`: the bad side holds the lists.
  seats: fc.integer({ min: 1, max: 1000 }),
};
const badOpenFields = {
  entryFeeMsat: badMsat,
  rake: fc.oneof(
    notOfType('number'),
    fc.double().filter((r) => !(r >= 0 && r <= 0.5)),
  ),
  feeExpiresIn: badIntIn(10, 86_400),
  timeoutMs: badIntIn(10_000, 7 * 24 * 3600 * 1000),
  claimExpiresIn: badIntIn(60, 7 * 24 * 3600),
  description: badText(1, 200),
  seats: badIntIn(1, 1000),
  players: fc.oneof(
    notOfType('array'),
    fc.constant([]),
    fc.constant(['alice', 'alice']),
    fc.constant(['']),
    fc.array(notOfType('string'), { minLength: 1, maxLength: 3 }),
  ),
};

export const openMatch: ObjectSpec = {
  good: fc.record(
    { ...openFields, roomId: fc.option(text(1, 40)) },
    { requiredKeys: ['entryFeeMsat'] },
  ),
  bad: { ...badOpenFields, roomId: badText(1, 255).filter((v) => v !== null) },
  required: ['entryFeeMsat'],
};

export const roomOpenMatch: ObjectSpec = {
  good: fc.record(openFields, { requiredKeys: ['entryFeeMsat'] }),
  bad: badOpenFields,
  required: ['entryFeeMsat'],
};

/** `matches.enter` on the fixture match `matchId`. */
export function enterMatch(matchId: string): ObjectSpec {
  return {
    good: fc.record(
      { matchId: fc.constant(matchId), playerId: goodId, lnAddress: goodLnAddress },
      { requiredKeys: ['matchId', 'playerId'] },
    ),
    bad: { matchId: badMatchId, playerId: badId, lnAddress: badLnAddress },
    required: ['matchId', 'playerId'],
  };
}

/** A room match's `enter` options. */
export const roomMatchEntry: ObjectSpec = {
  good: fc.record({ lnAddress: goodLnAddress }, { requiredKeys: [] }),
  bad: { lnAddress: badLnAddress },
  required: [],
  optional: true,
};

/** A share that weighs something (at least a millionth), at most 1e9. */
const goodShare = fc.double({ min: 1e-6, max: 1e9, noNaN: true });
/** Not a share: not a positive finite number up to 1e9, or too small to weigh a millionth. */
const badShare: fc.Arbitrary<unknown> = fc.oneof(
  notOfType('number'),
  fc.double().filter((v) => !(v > 0 && v <= 1e9)),
  fc.double({ min: Number.MIN_VALUE, max: 4.9e-7, noNaN: true }),
);
/** Not a winner: an empty or too long id, or a player who never paid into the fixture. */
const badWinner: fc.Arbitrary<string> = fc.oneof(
  fc.constant(''),
  fc.string({ minLength: 256, maxLength: 300 }),
  text(1, 40).filter((id) => id !== MATCH_PAYER),
);

/** Shares the fixture can be settled with: its one payer, any weight. */
export const goodShares = goodShare.map((w) => ({ [MATCH_PAYER]: w }));

/**
 * Shares no settle of the fixture may take: not a plain object, none at all, more than 1000
 * winners, a bad share for the payer, or beside the payer's a bad share or a winner who never
 * paid in.
 */
export const badShares: fc.Arbitrary<unknown> = fc.oneof(
  anything.filter((v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return true;
    const proto = Object.getPrototypeOf(v);
    return proto !== Object.prototype && proto !== null ? true : Object.keys(v).length === 0;
  }),
  fc.constant({}),
  // The payer's own share bad (too small to weigh anything: the whole pot to the house).
  badShare.map((bad) => ({ [MATCH_PAYER]: bad })),
  fc
    .tuple(fc.option(goodShare, { nil: undefined }), badShare)
    .map(([mine, bad]) => ({ ...(mine === undefined ? {} : { [MATCH_PAYER]: mine }), bob: bad })),
  fc
    .tuple(fc.option(goodShare, { nil: undefined }), badWinner, goodShare)
    .map(([mine, who, share]) => ({
      ...(mine === undefined ? {} : { [MATCH_PAYER]: mine }),
      [who]: share,
    })),
  fc.constant(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`p${i}`, 1] as const))),
);

/** A reason for an abort: some words. */
export const goodReason = text(1, 50).filter((s) => s.trim() !== '');
/** Not a reason: not a string, only spaces, or more than 500 characters after trimming. */
export const badReason: fc.Arbitrary<unknown> = fc.oneof(
  notOfType('string'),
  fc.stringMatching(/^\s*$/),
  fc.string({ minLength: 501, maxLength: 560 }).filter((s) => s.trim().length > 500),
);
