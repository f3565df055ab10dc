/**
 * The CLI target: command lines of `colyseus-lightning emulator` that each hold one certainly
 * bad argument among good ones: an unknown option, a stray argument, an option without its
 * value, a number that is not one (or too large), a URL that is not plain http(s)
 * (`javascript:`, `data:`, credentials, a query), a host off loopback without --allow-remote,
 * a key with a space or a quote, a command that is not `emulator`. `parseCommandLine` must
 * refuse each with an InvalidArgumentError whose message is one line without control
 * characters (what the terminal shows), and start nothing. The bad piece is always last, so
 * that no good option after it (the last of a repeated option wins) can make it good.
 *
 * Cost: a parse per input; no I/O.
 */
import fc from 'fast-check';
import { parseCommandLine } from '../../src/emulator/cli.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { describe, type Outcome, type Target } from '../harness.js';

const NUMBER_OPTIONS = ['--port', '--wallet-msat', '--payment-delay', '--points'] as const;
const URL_OPTIONS = ['--public-url', '--game-url'] as const;
const KEY_OPTIONS = ['--api-key', '--sandbox-key', '--webhook-secret'] as const;
const VALUE_OPTIONS = [...NUMBER_OPTIONS, ...URL_OPTIONS, ...KEY_OPTIONS, '--host'] as const;
/** Every option's name, without dashes: an unknown option is none of these. */
const KNOWN = new Set([...VALUE_OPTIONS.map((o) => o.slice(2)), 'allow-remote', 'json', 'help']);

const word = (min: number, max: number) =>
  fc.string({
    unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'),
    minLength: min,
    maxLength: max,
  });

const goodUrl = fc
  .tuple(fc.constantFrom('http', 'https'), fc.domain(), fc.option(fc.nat(65_535)), word(0, 8))
  .map(
    ([scheme, host, port, path]) => `${scheme}://${host}${port === null ? '' : `:${port}`}/${path}`,
  );

/** Options that are fine on their own (never --help, never --allow-remote). */
const good: fc.Arbitrary<string[]> = fc.oneof(
  fc.nat(65_535).map((n) => ['--port', String(n)]),
  fc.constantFrom('127.0.0.1', 'localhost', '::1', '127.8.9.10').map((h) => ['--host', h]),
  goodUrl.map((u) => ['--public-url', u]),
  goodUrl.map((u) => ['--game-url', u]),
  fc.nat().map((n) => ['--wallet-msat', String(n)]),
  fc.nat(86_400_000).map((n) => ['--payment-delay', String(n)]),
  fc.nat().map((n) => ['--points', String(n)]),
  word(1, 40).map((k) => ['--api-key', k]),
  word(1, 40).map((k) => ['--sandbox-key', k]),
  word(16, 64).map((k) => ['--webhook-secret', k]),
  fc.constant<string[]>(['--json']),
  fc.nat(65_535).map((n) => [`--port=${n}`]),
);

/** A number option's value that is not a whole number within its bounds. */
const badNumber: fc.Arbitrary<string[]> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...NUMBER_OPTIONS),
      fc.oneof(
        fc.string().filter((s) => !/^\d{1,16}$/.test(s)),
        fc.constantFrom('1.5', '1e3', ' 7', '7 ', '0x10', '', 'NaN', 'Infinity', '٣'),
        fc.integer({ min: -1_000_000, max: -1 }).map(String),
        fc.constant('9'.repeat(17)),
        fc.constant('9007199254740993'),
      ),
    )
    .map(([option, value]) => [`${option}=${value}`]),
  fc.integer({ min: 65_536, max: 9_999_999 }).map((n) => ['--port', String(n)]),
  fc.integer({ min: 86_400_001, max: 2 ** 40 }).map((n) => ['--payment-delay', String(n)]),
);

/** A value that is certainly no plain http(s) URL. */
const badUrlValue: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('javascript', 'JavaScript', 'data', 'file', 'ftp', 'mailto', 'ws', 'blob'),
      fc.string(),
    )
    .map(([scheme, rest]) => `${scheme}:${rest}`),
  fc.string().filter((s) => !/https?:/i.test(s)),
  fc
    .tuple(fc.constantFrom('http', 'https'), fc.domain(), word(1, 8))
    .chain(([scheme, host, w]) =>
      fc.constantFrom(
        `${scheme}://${w}:${w}@${host}/`,
        `${scheme}://${w}@${host}`,
        `${scheme}://${host}/?${w}`,
        `${scheme}://${host}/#${w}`,
        `${scheme}://${host}/${w}'`,
        `${scheme}://${host}/"${w}`,
        `${scheme}://${host}/<${w}>`,
        `${scheme}://${host}/ ${w}`,
        `\u0001${scheme}://${host}`,
        `${scheme}://${host}/\n${w}`,
        `${scheme}://`,
        `${scheme}://${host}/${w.repeat(2001)}`,
      ),
    ),
);
const badUrl = fc
  .tuple(fc.constantFrom(...URL_OPTIONS), badUrlValue)
  .map(([option, value]) => [`${option}=${value}`]);

/** Whether an IPv6 address, as a URL host, is loopback (::1, or ::ffff:127.x.x.x). */
function v6Loopback(address: string): boolean {
  const host = new URL(`http://[${address}]`).hostname;
  return host === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:/.test(host);
}

/** A host off loopback (an address, or a name other than localhost), or no host at all. */
const badHost = fc
  .oneof(
    fc.ipV4().filter((a) => !a.startsWith('127.')),
    fc.ipV6().filter((a) => !v6Loopback(a)),
    fc.domain().filter((d) => d.toLowerCase() !== 'localhost'),
    fc.constantFrom('0.0.0.0', '::', '[::]', '', 'local host', 'a/b', 'localhost.'),
    fc.string().filter((s) => /[^\w.:[\]%-]/.test(s)),
  )
  .map((h) => [`--host=${h}`]);

const badKey = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...KEY_OPTIONS),
      fc.oneof(
        fc.constant(''),
        fc
          .tuple(
            word(0, 20),
            fc.constantFrom(' ', "'", '"', '`', '\\', '\t', 'é', '\u0000'),
            word(0, 20),
          )
          .map(([a, c, b]) => `${a}${c}${b}`),
        word(201, 260),
      ),
    )
    .map(([option, value]) => [`${option}=${value}`]),
  word(1, 15).map((s) => [`--webhook-secret=${s}`]),
);

const badPiece: fc.Arbitrary<string[]> = fc.oneof(
  // An option nobody defined (never a prefix of one: parseArgs matches whole names).
  fc
    .string({ minLength: 1 })
    .filter((s) => !KNOWN.has(s.split('=')[0] ?? '') && !s.startsWith('-'))
    .map((s) => [`--${s}`]),
  fc
    .constantFrom(...'abcdefgijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''))
    .map((c) => [`-${c}`]),
  // A stray argument, before or after `--`.
  fc
    .string({ minLength: 1 })
    .filter((s) => !s.startsWith('-'))
    .map((s) => [s]),
  fc.string().map((s) => ['--', s]),
  // An option without its value, or a flag with one.
  fc.constantFrom(...VALUE_OPTIONS).map((o) => [o]),
  fc
    .constantFrom('--json', '--allow-remote', '--help')
    .chain((o) => fc.string().map((v) => [`${o}=${v}`])),
  badNumber,
  badUrl,
  badHost,
  badKey,
);

const commandLine: fc.Arbitrary<string[]> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc
      .tuple(fc.array(good, { maxLength: 6 }), badPiece)
      .map(([goods, bad]) => ['emulator', ...goods.flat(), ...bad]),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.string({ minLength: 1 }).filter((c) => !['emulator', '--help', '-h'].includes(c)),
        fc.array(good, { maxLength: 3 }),
      )
      .map(([command, goods]) => [command, ...goods.flat()]),
  },
);

/** What the user would read: labelled by the argument named, unknown options together. */
function labelOf(err: InvalidArgumentError): string {
  if (err.field === 'command' || err.field === 'arguments') return err.field;
  return KNOWN.has(err.field.replace(/^--/, '')) ? err.field : 'unknown option';
}

export function cliTargets(): Target[] {
  const target: Target<string[]> = {
    name: 'cli emulator arguments',
    inputs: commandLine,
    async attempt(argv): Promise<Outcome> {
      let parsed: unknown;
      try {
        parsed = parseCommandLine(argv);
      } catch (err) {
        if (!(err instanceof InvalidArgumentError)) {
          return { problem: `threw ${describe(err)}` };
        }
        if (/\p{Cc}/u.test(err.message))
          return { problem: `message not one clean line: ${err.message}` };
        return { label: labelOf(err) };
      }
      return { problem: `accepted: ${describe(JSON.stringify(parsed))}` };
    },
  };
  return [target as Target];
}
