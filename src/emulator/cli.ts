/**
 * `colyseus-lightning emulator`: runs the emulator in the foreground and prints its URL
 * and keys (or one JSON line with --json, for scripts such as the benchmark).
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
  --json                 print one JSON line instead of the banner
  -h, --help             this text
`;

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
  const emu = await startEmulator({
    port: number('port', values.port),
    host: values.host,
    publicUrl: values['public-url'],
    walletMsat: number('wallet-msat', values['wallet-msat']),
    apiKey: values['api-key'],
    sandboxKey: values['sandbox-key'],
    webhookSecret: values['webhook-secret'],
    paymentDelayMs: number('payment-delay', values['payment-delay']),
  });
  const info = {
    url: emu.url,
    apiKey: emu.apiKey,
    sandboxKey: emu.sandboxKey,
    projectId: emu.projectId,
    devWalletUrl: emu.devWalletUrl,
    sessionSecret: emu.control.sessionSecret,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(info)}\n`);
  } else {
    process.stdout.write(
      [
        'colyseus-lightning emulator (development only)',
        `  url            ${info.url}`,
        `  api key        ${info.apiKey}`,
        `  sandbox key    ${info.sandboxKey}`,
        `  project        ${info.projectId}`,
        `  dev wallet     ${info.devWalletUrl}`,
        `  session secret ${info.sessionSecret}`,
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
  }
  const stop = () => {
    void emu.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
