/**
 * `colyseus-lightning emulator`: runs the emulator in the foreground and prints its URL, its
 * keys and the `createLightning` options that connect a game to it (or one JSON line with
 * --json, for scripts such as the benchmark). Every new player starts with points, so a
 * game's shop can be tried at once.
 */

import { parseArgs } from 'node:util';
import { startEmulator } from './index.js';

const USAGE = `Usage: colyseus-lightning emulator [options]

Runs a local copy of the payments service (development only: no TLS, and the
/_emulator/ routes need no key).

Options:
  --port <n>             port to listen on (default 8787; 0 picks a free one)
  --host <addr>          address to bind (default 127.0.0.1)
  --public-url <url>     address that LNURL codes point at (default http://host:port)
  --wallet-msat <n>      default project's wallet in msat (default 1000000000)
  --api-key <key>        fixed production key for the default project
  --sandbox-key <key>    fixed sandbox key for the default project
  --webhook-secret <s>   sign widget and ramp webhooks with this secret
  --payment-delay <ms>   keep payments 'processing' this long
  --points <n>           points each new player (widget user) starts with, in
                         USDZ minor units (default 10000, i.e. 100.00; 0: none)
  --game-url <url>       the game's address, shown in the connect snippet
                         (default http://127.0.0.1:2567)
  --json                 print one JSON line instead of the banner
  -h, --help             this text
`;

/** What the CLI grants each new player unless told otherwise: 100.00 USDZ. */
export const CLI_POINTS = 10_000;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command !== 'emulator') {
    process.stderr.write(
      command === undefined || command === '--help' || command === '-h'
        ? USAGE
        : `Unknown command ${command}\n\n${USAGE}`,
    );
    process.exitCode = command === undefined || command.startsWith('-') ? 0 : 1;
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      'public-url': { type: 'string' },
      'wallet-msat': { type: 'string' },
      'api-key': { type: 'string' },
      'sandbox-key': { type: 'string' },
      'webhook-secret': { type: 'string' },
      'payment-delay': { type: 'string' },
      points: { type: 'string', default: String(CLI_POINTS) },
      'game-url': { type: 'string', default: 'http://127.0.0.1:2567' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const number = (name: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 0)
      throw new Error(`--${name} must be a non-negative integer`);
    return n;
  };
  const userPoints = number('points', values.points) ?? 0;
  const emu = await startEmulator({
    port: number('port', values.port),
    host: values.host,
    publicUrl: values['public-url'],
    walletMsat: number('wallet-msat', values['wallet-msat']),
    apiKey: values['api-key'],
    sandboxKey: values['sandbox-key'],
    webhookSecret: values['webhook-secret'],
    paymentDelayMs: number('payment-delay', values['payment-delay']),
    userPoints,
  });
  const info = {
    url: emu.url,
    apiKey: emu.apiKey,
    sandboxKey: emu.sandboxKey,
    projectId: emu.projectId,
    devWalletUrl: emu.devWalletUrl,
    sessionSecret: emu.control.sessionSecret,
    userPoints,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(info)}\n`);
  } else {
    process.stdout.write(banner(info, values['game-url']));
  }
  const stop = () => {
    void emu.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

interface Info {
  url: string;
  apiKey: string;
  sandboxKey: string;
  projectId: string;
  devWalletUrl: string;
  sessionSecret: string;
  userPoints: number;
}

/** The start banner: where it is, and the options that connect a game to it. */
export function banner(info: Info, gameUrl = 'http://127.0.0.1:2567'): string {
  const points =
    info.userPoints > 0
      ? `every new player starts with ${info.userPoints} USDZ points (--points)`
      : 'players start with none (--points <n> grants some)';
  return [
    'colyseus-lightning emulator (development only)',
    `  url            ${info.url}`,
    `  api key        ${info.apiKey}`,
    `  sandbox key    ${info.sandboxKey}`,
    `  project        ${info.projectId}`,
    `  dev wallet     ${info.devWalletUrl}`,
    `  session secret ${info.sessionSecret}`,
    `  points         ${points}`,
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
