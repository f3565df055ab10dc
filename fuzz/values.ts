/**
 * Generators of bad values, one per kind of field, and of bad argument objects built from a
 * good one. "Bad" is decided here, from the contract (SERVICE-API.md, docs), not by asking the
 * package's own schemas: a value that the package wrongly accepted would then pass unseen.
 * Each generator only yields values that are certainly wrong for its field.
 *
 * Cost: pure fast-check arbitraries; nothing runs until a target samples them.
 */
import fc from 'fast-check';

/** 21 million bitcoin in millisatoshis. */
const MAX_MSAT = 2_100_000_000_000_000_000n;

/** Every kind of JavaScript value fast-check knows how to make, nested. */
export const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  maxDepth: 3,
});

/**
 * Any value whose type is none of `types` (`typeof`, with 'null' and 'array' apart), and never
 * `undefined`: for an optional field that is the same as leaving it out, which is valid.
 */
export function notOfType(...types: string[]): fc.Arbitrary<unknown> {
  return anything.filter((v) => v !== undefined && !types.includes(kindOf(v)));
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** A string of `min` to `max` characters, any unicode. */
export function text(min: number, max: number): fc.Arbitrary<string> {
  return fc.string({ minLength: min, maxLength: max, unit: 'grapheme' });
}

/** A string that breaks a length rule: empty where one is needed, or too long. */
export function badText(min: number, max: number): fc.Arbitrary<unknown> {
  const long = fc.string({ minLength: 1, maxLength: 20 }).map((tail) => 'x'.repeat(max) + tail);
  return min > 0
    ? fc.oneof(notOfType('string'), fc.constant(''), long)
    : fc.oneof(notOfType('string'), long);
}

/**
 * An id a game may name (docs: "an id"): any printable Unicode with spaces and separators,
 * and the lengths at the edges, 1 and 255 UTF-16 units.
 */
export const goodId: fc.Arbitrary<string> = fc.oneof(
  text(1, 40),
  text(1, 30).map((s) => `${s} ${s}`),
  fc.constantFrom(
    'John Smith',
    ' ',
    'a:b',
    'a;b,c',
    '=1+1',
    'é',
    'x'.repeat(255),
    '😀'.repeat(127),
  ),
);

/** Not an id: a bad length or type, or a control character or lone surrogate inside. */
export const badId: fc.Arbitrary<unknown> = fc.oneof(
  badText(1, 255),
  fc
    .tuple(text(0, 20), fc.integer({ min: 0, max: 0x9f }), text(0, 20))
    .filter(([, c]) => c < 0x20 || c >= 0x7f)
    .map(([a, c, b]) => `${a}${String.fromCharCode(c)}${b}`),
  fc
    .tuple(text(0, 20), fc.integer({ min: 0xd800, max: 0xdfff }), text(0, 20))
    .map(([a, c, b]) => `${a}${String.fromCharCode(c)}${b}`),
);

/** Not a positive whole number of millisatoshis up to all the bitcoin there is. */
export const badMsat: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ max: 0 }),
  fc.bigInt({ max: 0n }),
  fc.bigInt({ min: MAX_MSAT + 1n, max: MAX_MSAT * 1000n }),
  fc.double().filter((n) => !Number.isSafeInteger(n) || n <= 0),
  fc.integer({ min: 1, max: 1000 }).map((n) => n * 2 ** 53),
  fc.string().filter((s) => !/^[0-9]+$/.test(s) || BigInt(s) === 0n || BigInt(s) > MAX_MSAT),
  fc.constantFrom('1e6', '+1', '-1', ' 1', '0x10', '1.5', '١٢٣', '10_000', `${MAX_MSAT + 1n}`),
  notOfType('number', 'bigint', 'string'),
);

/** Not a positive safe integer. */
export const badPositiveInt: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ max: 0 }),
  fc.double().filter((n) => !Number.isSafeInteger(n) || n <= 0),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 1, 2 ** 60, Number.POSITIVE_INFINITY, Number.NaN),
  notOfType('number'),
);

/** Not a whole number in [min, max]. */
export function badIntIn(min: number, max: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.integer({ max: min - 1 }),
    fc.integer({ min: max + 1 }),
    fc.double().filter((n) => !Number.isInteger(n)),
    notOfType('number'),
  );
}

/** Not an http(s) URL. */
export const badUrl: fc.Arbitrary<unknown> = fc.oneof(
  fc.string().filter((s) => !/^https?:/i.test(s)),
  fc.constantFrom('ftp://example.com', 'javascript:alert(1)', 'file:///etc/passwd', '//x.y'),
  notOfType('string'),
);

/** Not an email address: no `@` at all. */
export const badEmail: fc.Arbitrary<unknown> = fc.oneof(
  fc.string().filter((s) => !s.includes('@')),
  notOfType('string'),
);

/**
 * Not a Lightning address (LUD-16: `name@domain`, the name of a-z 0-9 . _ + - in either case,
 * at most 64 long, the domain a DNS name with a dot): no `@`, an empty side, two `@`, a
 * character LUD-16 does not allow, a domain without a dot, or too long.
 */
export const badLnAddress: fc.Arbitrary<unknown> = fc.oneof(
  fc.string().filter((s) => !s.includes('@')),
  fc.constantFrom(
    '@x.example',
    'a@',
    'a@@x.example',
    'a@localhost',
    'a@-x.example',
    'a@x..example',
    ' a@x.example',
    'a@x.example ',
    `${'a'.repeat(65)}@x.example`,
    `a@${'x'.repeat(300)}.example`,
  ),
  fc
    .tuple(
      text(0, 5),
      fc.constantFrom(' ', '/', '\\', '!', '#', '?', '%', '\n', 'é', '\u212a'),
      text(0, 5),
    )
    .map(([head, odd, tail]) => `${head}${odd}${tail}@x.example`),
  notOfType('string'),
);

/** Not a currency code (an upper-case letter then 2 to 9 upper-case letters or digits). */
export const badCurrency: fc.Arbitrary<unknown> = fc.oneof(
  fc.string().filter((s) => !/^[A-Z][A-Z0-9]{2,9}$/.test(s)),
  notOfType('string'),
);

/** Not a 3-5 letter upper-case currency (the ramp's quote and base currencies). */
export const badRampCurrency: fc.Arbitrary<unknown> = fc.oneof(
  fc.string().filter((s) => !/^[A-Z]{3,5}$/.test(s)),
  notOfType('string'),
);

/** Not a UUID. */
export const badUuid: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .string()
    .filter((s) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)),
  notOfType('string'),
);

/** Not an ISO date-time. */
export const badDateTime: fc.Arbitrary<unknown> = fc.oneof(
  fc.string().filter((s) => !/^\d{4}-\d\d-\d\dT/.test(s)),
  notOfType('string', 'null'),
);

/** Not a list of the disclosure types 2, 3 and 6. */
export const badTypeIds: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant([]),
  fc
    .tuple(
      fc.array(fc.constantFrom(2, 3, 6)),
      anything.filter((v) => v !== 2 && v !== 3 && v !== 6),
    )
    .map(([good, bad]) => [...good, bad]),
  notOfType('array'),
);

/** Metadata that cannot be a JSON object: not an object, or holding a bigint. */
export const badMetadata: fc.Arbitrary<unknown> = fc.oneof(
  notOfType('object'),
  fc.array(anything),
  fc.dictionary(fc.string(), fc.bigInt()).map((d) => ({ ...d, amount: 1n })),
);

/**
 * Whether `id` can be one segment of a URL path as the contract's `{id}` means it: a string
 * of 1 to 255 characters, not `.` nor `..`, with no slash, backslash or control character,
 * and well-formed (no lone surrogate). Written from the rule, apart from the package's code.
 */
export function isPathId(id: unknown): boolean {
  if (typeof id !== 'string' || id.length === 0 || id.length > 255) return false;
  if (id === '.' || id === '..') return false;
  if (/[/\\]/.test(id)) return false;
  for (const ch of id) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x20 || c === 0x7f || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** A good path id. */
export const pathId = fc.oneof(fc.uuid(), text(1, 40)).filter(isPathId);

/** A bad path id: every way a value can fail to be one. */
export const badPathId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('', '.', '..', '/', '../x', 'a/b', '..\\x', '%2e%2e/x', 'x'.repeat(256)),
  fc
    .tuple(text(0, 10), fc.constantFrom('/', '\\', '\n', '\u0000', '\u007f', '\ud800'), text(0, 10))
    .map((parts) => parts.join('')),
  fc.string({ minLength: 256, maxLength: 300 }),
  fc.string({ unit: 'binary' }).filter((s) => !isPathId(s)),
  notOfType('string'),
);

/** What a bad-argument generator needs to know about one argument object. */
export interface ObjectSpec {
  /** Always-valid objects. */
  good: fc.Arbitrary<Record<string, unknown>>;
  /** Per field, values that are certainly wrong for it. */
  bad: Record<string, fc.Arbitrary<unknown>>;
  /** Fields without which the object is wrong. */
  required: string[];
  /** `undefined` is a valid value for the whole argument (it has a default). */
  optional?: boolean;
  /** Objects wrong in a way no single field is (a range upside down, a missing either-or). */
  also?: fc.Arbitrary<unknown>;
}

/**
 * Argument objects that are certainly wrong: not a plain object at all, one field made bad,
 * a required field left out, or a field the call does not have.
 */
export function badObject(spec: ObjectSpec): fc.Arbitrary<unknown> {
  const fields = Object.keys(spec.bad);
  const ways: fc.Arbitrary<unknown>[] = [
    anything.filter((v) => !maybeValid(v, spec)),
    fc
      .tuple(spec.good, fc.constantFrom(...fields))
      .chain(([good, name]) =>
        (spec.bad[name] as fc.Arbitrary<unknown>).map((value) => ({ ...good, [name]: value })),
      ),
    fc
      .tuple(spec.good, fc.string(), anything)
      .filter(([, key]) => !fields.includes(key) && key !== '__proto__')
      .map(([good, key, value]) => Object.assign({}, good, { [key]: value })),
  ];
  if (spec.required.length > 0) {
    ways.push(
      fc.tuple(spec.good, fc.constantFrom(...spec.required)).map(([good, name]) => {
        const { [name]: _left, ...rest } = good;
        return rest;
      }),
    );
  }
  if (spec.also) ways.push(spec.also);
  return fc.oneof(...ways);
}

/**
 * Whether a random value might be a valid argument: a plain object whose keys are all fields
 * of the call and that has every required one (`{}` where nothing is required), or undefined
 * where the argument is optional. Such values are left out, since they may be right.
 */
function maybeValid(v: unknown, spec: ObjectSpec): boolean {
  if (v === undefined) return spec.optional === true;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  const keys = Object.keys(v);
  return keys.every((k) => k in spec.bad) && spec.required.every((k) => keys.includes(k));
}
