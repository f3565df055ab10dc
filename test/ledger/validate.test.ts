/**
 * The stores' checks of a move's postings (src/ledger/validate.ts): in their common shape they
 * are checked without zod, and must answer exactly as their zod schema does, on any input: the
 * same value when the schema accepts it, InvalidIntentError when it refuses it.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { InvalidIntentError } from '../../src/ledger/index.js';
import { parsePostings, postingsSchema } from '../../src/ledger/validate.js';

/** Values that sit on every edge of the patch's and the postings' fields. */
const anything = fc.constantFrom<unknown>(
  undefined,
  null,
  '',
  'x',
  'LNURL1ABC',
  0,
  -0,
  1,
  -1,
  1.5,
  2 ** 53,
  2 ** 53 - 1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '1',
  true,
  {},
  { shownAt: 1 },
  [],
  10n,
);

const account = fc.constantFrom(
  'wallet',
  'inflight',
  'claimable:p1',
  'house:rewards',
  'house',
  'claimable:',
  'Wallet',
  'escrow:m 1',
  `owed:${'x'.repeat(255)}`,
  `owed:${'x'.repeat(256)}`,
);
const postingField = {
  tag: fc.constantFrom('completed', 'a-1', '', 'A', 'x'.repeat(40), 'x'.repeat(41), 7),
  debit: account,
  credit: account,
  amount: fc.constantFrom(
    '1',
    '21000',
    '0',
    '01',
    '1.5',
    '-1',
    '9223372036854775807',
    '9223372036854775808',
    '9999999999999999999',
    '10000000000000000000',
    21000,
  ),
  unit: fc.constantFrom('msats', 'USDZ', '', 'x'.repeat(32), 'x'.repeat(33), null),
  why: fc.constantFrom('claimed', '', 'x'.repeat(500), 'x'.repeat(501), undefined),
  extra: anything,
};
const posting = fc.oneof(
  { arbitrary: fc.record(postingField, { requiredKeys: [] }), weight: 1 },
  {
    arbitrary: fc.record(postingField, {
      requiredKeys: ['tag', 'debit', 'credit', 'amount', 'unit', 'why'],
    }),
    weight: 3,
  },
  { arbitrary: anything, weight: 1 },
);
/** A well-formed posting with at most one field from the edges. */
const nearlyRight = fc
  .tuple(fc.constantFrom(...(Object.keys(postingField) as (keyof typeof postingField)[])), fc.nat())
  .chain(([field]) =>
    postingField[field].map((value) => ({
      tag: 'completed',
      debit: 'claimable:p1',
      credit: 'wallet',
      amount: '21000',
      unit: 'msats',
      why: 'claimed',
      [field]: value,
    })),
  );
const postings = fc.oneof(
  fc.array(posting, { maxLength: 18 }),
  fc.array(nearlyRight, { minLength: 1, maxLength: 3 }),
);

/** Asserts that `check` answers as `schema` does (extra: the checks after the schema's). */
function answersAsZod(
  value: unknown,
  schema: { safeParse(v: unknown): { success: boolean; data?: unknown } },
  check: (v: never) => unknown,
  extra: (data: unknown) => boolean = () => true,
): void {
  const zod = schema.safeParse(value);
  let ours: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    ours = { ok: true, value: check(value as never) };
  } catch (error) {
    ours = { ok: false, error };
  }
  if (zod.success && extra(zod.data)) {
    expect(
      ours,
      JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    ).to.deep.equal({
      ok: true,
      value: zod.data,
    });
  } else {
    expect(ours.ok, 'refused').to.equal(false);
    if (!ours.ok) expect(ours.error).to.be.instanceOf(InvalidIntentError);
  }
}

/** What parsePostings checks after the schema: two accounts per posting, each tag once. */
function distinct(data: unknown): boolean {
  const list = data as { tag: string; debit: string; credit: string }[];
  const tags = new Set(list.map((p) => p.tag));
  return tags.size === list.length && list.every((p) => p.debit !== p.credit);
}

describe('ledger checks of a move', () => {
  it('checks postings as their schema does, whichever way they are checked', () => {
    fc.assert(
      fc.property(postings, (value) =>
        answersAsZod(value, postingsSchema, parsePostings, distinct),
      ),
      { numRuns: 5_000 },
    );
  });

  it('takes the common shape as a copy', () => {
    const one = {
      tag: 'completed',
      debit: 'claimable:p',
      credit: 'wallet',
      amount: '21000',
      unit: 'msats',
      why: 'claimed',
    };
    const [copy] = parsePostings([one]);
    expect(copy).to.deep.equal(one);
    expect(copy).to.not.equal(one);
  });
});
