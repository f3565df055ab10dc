/**
 * `colyseus-lightning emulator`: runs the emulator in the foreground and prints its URL, keys
 * and the `createLightning` options that connect a game to it (or one JSON line with --json).
 * Arguments are parsed whole before anything starts (fuzzed): a bad one is one line saying
 * what is wrong and the usage line, exit code 2, never a stack trace.
 */

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigurationError, InvalidArgumentError } from '../errors.js';
import { isLoopbackHost, plainHttpUrl, remoteHostProblem } from './bind.js';
import { isPrice } from './core.js';
import { type Emulator, type EmulatorOptions, startEmulator } from './index.js';

const USAGE = `Usage: colyseus-lightning emulator [options]

Runs a local copy of the payments service (development only: plain HTTP; it
listens on loopback unless --allow-remote, and the dev wallet's routes need the
key in the dev wallet URL it prints).

Options:
  --port <n>             port to listen on (default 8787; 0 picks a free one)
  --host <addr>          address to bind (default 127.0.0.1); an address other
                         than loopback (0.0.0.0, a LAN address) needs --allow-remote
  --allow-remote         listen on a --host other than loopback (a phone on your
                         network); never on a machine the internet can reach
  --public-url <url>     address that LNURL codes point at, http(s) (default
                         http://host:port)
  --wallet-msat <n>      default project's wallet in msat (default 1000000000)
  --api-key <key>        fixed production key for the default project
  --sandbox-key <key>    fixed sandbox key for the default project
  --webhook-secret <s>   sign widget and ramp webhooks with this secret (16+ chars)
  --payment-delay <ms>   keep payments 'processing' this long
  --btc-usd <price>      what GET /v0/btcusd answers: 1 BTC in US dollars
                         (default 100000; POST /_emulator/btcusd changes it)
  --rate-limit <n>       answer 429 (with Retry-After) beyond n requests per
                         second per API key, as the service does (default: none)
  --rate-burst <n>       requests a key may make at once under --rate-limit
                         (default: the --rate-limit figure)
  --points <n>           points each new player (widget user) starts with, in
                         USDZ minor units (default 10000, i.e. 100.00; 0: none)
  --game-url <url>       the game's address, shown in the connect snippet, http(s)
                         (default http://127.0.0.1:2567)
  --json                 print one JSON line instead of the banner
  -h, --help             this text
`;

/** The line printed under a bad argument. */
export const USAGE_LINE =
  'Usage: colyseus-lightning emulator [--port <n>] [--host <addr>] [--allow-remote] [--public-url <url>] [--json] ... (--help for every option)';

/** What the CLI grants each new player unless told otherwise: 100.00 USDZ. */
export const CLI_POINTS = 10_000;

const DEFAULT_GAME_URL = 'http://127.0.0.1:2567';

/** What a command line asks for: the help text, or an emulator with these options. */
export type CliCommand =
  | { command: 'help' }
  | {
      command: 'emulator';
      options: EmulatorOptions & { port: number; host: string; userPoints: number };
      json: boolean;
      gameUrl: string;
    };

/** A non-negative whole number in decimal digits, at most `max`. */
const count = (max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d{1,16}$/, 'must be a non-negative integer')
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n <= max, `must be at most ${max}`);

/** A key or secret as it is printed between quotes and sent in a header: visible ASCII. */
const token = (min: number) =>
  z
    .string()
    .min(min, `must be at least ${min} characters`)
    .max(200, 'must be at most 200 characters')
    .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII (no spaces)')
    .refine((s) => !/['"`\\]/.test(s), 'must not hold quotes or backslashes');

const values = z.object({
  port: count(65_535).default(8787),
  host: z
    .string()
    .min(1, 'must not be empty')
    .max(253, 'must be at most 253 characters')
    .regex(/^[\w.:[\]%-]+$/, 'must be an IP address or a host name')
    .default('127.0.0.1'),
  'allow-remote': z.boolean().default(false),
  'public-url': plainHttpUrl.optional(),
  'wallet-msat': count().optional(),
  'api-key': token(1).optional(),
  'sandbox-key': token(1).optional(),
  'webhook-secret': token(16).optional(),
  'payment-delay': count(86_400_000).optional(),
  'btc-usd': z
    .string()
    .regex(/^\d{1,15}(\.\d{1,2})?$/, 'must be a price in US dollars, such as 97123.45')
    .transform(Number)
    .refine(isPrice, 'must be a positive price')
    .optional(),
  'rate-limit': count(1_000_000)
    .refine((n) => n > 0, 'must be at least 1')
    .optional(),
  'rate-burst': count(1_000_000)
    .refine((n) => n > 0, 'must be at least 1')
    .optional(),
  points: count().default(CLI_POINTS),
  'game-url': plainHttpUrl.default(DEFAULT_GAME_URL),
  json: z.boolean().default(false),
  help: z.boolean().default(false),
});

/** What parseArgs reads: every option of `values` takes a value but the two switches. */
const SWITCHES = new Set(['allow-remote', 'json']);
const OPTIONS: ParseArgsConfig['options'] = {
  ...Object.fromEntries(
    Object.keys(values.shape).map((name) => [
      name,
      { type: SWITCHES.has(name) ? 'boolean' : 'string' },
    ]),
  ),
  help: { type: 'boolean', short: 'h' },
};

/** Control characters (a newline, an escape sequence) never reach the terminal from an argument. */
function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, '?');
}

/** node:util's parseArgs error as ours: the argument it names, and what is wrong, on one line. */
function argumentError(err: unknown): InvalidArgumentError {
  const code = (err as { code?: unknown } | null)?.code;
  const first = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
  const message = printable(first).slice(0, 200).trim();
  // node quotes what it refuses: "Unknown option '--prot'", "Unexpected argument 'now'".
  // "Option '-h, --help' does not take an argument": the long name.
  const quoted =
    /'([^']*)/
      .exec(message)?.[1]
      ?.replace(/ <value>$/, '')
      .split(', ')
      .pop() ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new InvalidArgumentError(quoted, 'unknown option');
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new InvalidArgumentError(
        'arguments',
        `unexpected argument ${JSON.stringify(quoted.slice(0, 60))} (every option starts with --)`,
      );
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new InvalidArgumentError(
        quoted,
        /does not take/.test(message)
          ? 'takes no value'
          : /ambiguous/.test(message)
            ? `needs a value (write ${quoted}=<value> for one that starts with a dash)`
            : 'needs a value',
      );
    default:
      return new InvalidArgumentError('arguments', message || 'bad arguments');
  }
}

/**
 * Reads a command line (without `node` and the script): the help text, or the emulator's
 * options. Starts nothing. Anything it cannot honour is an InvalidArgumentError whose field
 * names the argument (`--port`, `command`).
 */
export function parseCommandLine(argv: readonly string[]): CliCommand {
  if (!Array.isArray(argv) || argv.some((arg) => typeof arg !== 'string')) {
    throw new InvalidArgumentError('argv', 'must be an array of strings');
  }
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') return { command: 'help' };
  if (command !== 'emulator') {
    throw new InvalidArgumentError(
      'command',
      `unknown command ${JSON.stringify(printable(command).slice(0, 60))} (the one command is \`emulator\`)`,
    );
  }
  let parsed: Record<string, string | boolean | undefined>;
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: false })
      .values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw argumentError(err);
  }
  if (parsed.help) return { command: 'help' };
  const checked = values.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new InvalidArgumentError(
      `--${String(issue?.path[0] ?? 'arguments')}`,
      issue?.message ?? 'invalid',
    );
  }
  const v = checked.data;
  if (!v['allow-remote'] && !isLoopbackHost(v.host)) {
    throw new InvalidArgumentError('--host', remoteHostProblem(v.host, 'Add --allow-remote'));
  }
  const rate = v['rate-limit'];
  if (v['rate-burst'] !== undefined && rate === undefined) {
    throw new InvalidArgumentError('--rate-burst', 'needs --rate-limit');
  }
  const options = {
    port: v.port,
    host: v.host,
    userPoints: v.points,
    allowRemote: v['allow-remote'] || undefined,
    publicUrl: v['public-url'],
    walletMsat: v['wallet-msat'],
    apiKey: v['api-key'],
    sandboxKey: v['sandbox-key'],
    webhookSecret: v['webhook-secret'],
    paymentDelayMs: v['payment-delay'],
    btcUsdPrice: v['btc-usd'],
    rateLimit: rate === undefined ? undefined : { perSecond: rate, burst: v['rate-burst'] ?? rate },
  };
  return { command: 'emulator', options, json: v.json, gameUrl: v['game-url'] };
}

/** Where the CLI writes; the process's streams unless a test gives others. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/** Why the server could not listen, in one line (EADDRINUSE and the like), or undefined. */
function listenProblem(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return undefined;
  return printable(err instanceof Error ? err.message : code);
}

/**
 * Runs a command line; resolves with the process's exit code: 0 (the help, or an emulator
 * now running until SIGINT or SIGTERM), 2 (a bad argument), 1 (it could not listen).
 */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCommandLine(argv);
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    io.err(`colyseus-lightning: ${err.message}\n${USAGE_LINE}\n`);
    return 2;
  }
  if (command.command === 'help') {
    io.out(USAGE);
    return 0;
  }
  let emu: Emulator;
  try {
    emu = await startEmulator(command.options);
  } catch (err) {
    if (err instanceof ConfigurationError) {
      io.err(`colyseus-lightning: ${err.message}\n${USAGE_LINE}\n`);
      return 2;
    }
    const problem = listenProblem(err);
    if (problem === undefined) throw err;
    io.err(
      `colyseus-lightning: cannot listen on ${command.options.host}:${command.options.port} (${problem})\n`,
    );
    return 1;
  }
  const info = infoOf(emu, command.options.userPoints);
  io.out(command.json ? `${JSON.stringify(info)}\n` : banner(info, command.gameUrl));
  const stop = () => {
    void emu.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}

/** What the banner and the JSON line say about a running emulator. */
function infoOf(emu: Emulator, userPoints: number) {
  const { url, listening, loopbackOnly, apiKey, sandboxKey, projectId, devWalletUrl } = emu;
  const { sessionSecret, rateLimit } = emu.control;
  return {
    url,
    listening,
    loopbackOnly,
    apiKey,
    sandboxKey,
    projectId,
    devWalletUrl,
    controlKey: emu.controlKey,
    sessionSecret,
    userPoints,
    rateLimit,
  };
}

type Info = ReturnType<typeof infoOf>;

/** The start banner: where it is, and the options that connect a game to it. */
export function banner(info: Info, gameUrl = DEFAULT_GAME_URL): string {
  const points =
    info.userPoints > 0
      ? `every new player starts with ${info.userPoints} USDZ points (--points)`
      : 'players start with none (--points <n> grants some)';
  const reach = info.loopbackOnly
    ? 'loopback only'
    : 'NOT loopback: other machines can reach it (--allow-remote)';
  return [
    'colyseus-lightning emulator (development only)',
    `  url            ${info.url}`,
    `  listening on   ${info.listening} (${reach})`,
    `  api key        ${info.apiKey}`,
    `  sandbox key    ${info.sandboxKey}`,
    `  project        ${info.projectId}`,
    `  dev wallet     ${info.devWalletUrl}`,
    `  session secret ${info.sessionSecret}`,
    `  points         ${points}`,
    ...(info.rateLimit
      ? [
          `  rate limit     ${info.rateLimit.perSecond} requests/s per key, ${info.rateLimit.burst} at once (429 beyond)`,
        ]
      : []),
    '',
    `Connect a game to it (publicUrl: where the game listens, ${gameUrl} here):`,
    '  createLightning({',
    `    apiKey: '${info.apiKey}',`,
    `    baseUrl: '${info.url}',`,
    `    publicUrl: '${gameUrl}',`,
    '  });',
    '',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}
