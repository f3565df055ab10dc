/**
 * The emulator's dev wallet for scripted players and tests: `pay(code)` an entry fee,
 * `claim(code)` a payout or a refund, as a player's wallet would.
 *
 *   const wallet = devWallet(emu.devWalletUrl); // http://127.0.0.1:43123/_emulator/#key=...
 *   await wallet.pay(fee.code);
 *
 * Runs against the emulator only: the URL carries the key of its start, and the emulator must
 * answer `GET /_emulator/state` in its own shape before a code is sent (a real service has no
 * such route). Answers are checked by hand: zod would double the kit's browser bundle.
 */
import { ConfigurationError, InvalidArgumentError } from '../errors.js';
import { toMsat } from './amount.js';
import { decodeLnurl, readCode } from './code.js';
import { DevWalletError } from './errors.js';

/** The header of the emulator's control routes (its CONTROL_KEY_HEADER). */
const KEY_HEADER = 'x-emulator-key';

export interface DevWalletOptions {
  /** The key of the emulator's start, when `url` does not carry it (`emu.controlKey`). */
  key?: string;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** What `pay` did: the amount paid and the payment's preimage (hex). */
export interface DevPayment {
  amountMsat: string;
  preimage: string;
}

export interface DevWallet {
  /** The emulator's base URL (`http://127.0.0.1:43123`). */
  readonly url: string;
  /**
   * Pays an entry fee's LNURL (its minimum unless `amountMsat`) or a BOLT11 invoice the
   * emulator issued. Rejects with `DevWalletError` when the emulator refuses (already paid,
   * expired), `ConfigurationError` when `url` is not the emulator.
   */
  pay(code: string, options?: { amountMsat?: string | number | bigint }): Promise<DevPayment>;
  /** Claims a payout's or refund's LNURL in full. Rejects as `pay` does. */
  claim(code: string): Promise<void>;
}

/** A dev wallet on the emulator at `url` (its `devWalletUrl`). */
export function devWallet(url: string, options: DevWalletOptions = {}): DevWallet {
  const { base, key } = readUrl(url, options.key);
  const fetchFn = options.fetch ?? globalThis.fetch;
  let checked: Promise<void> | undefined;

  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    checked ??= checkEmulator(fetchFn, base, key).catch((error: unknown) => {
      // Not reached (not started yet): ask again next time. A refusal stays.
      if (error instanceof DevWalletError) checked = undefined;
      throw error;
    });
    await checked;
    const answer = await call(fetchFn, `${base}${path}`, {
      method: 'POST',
      headers: { [KEY_HEADER]: key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const reason = typeof answer.body.reason === 'string' ? answer.body.reason : '';
    if (answer.body.status === 'OK') return answer.body;
    throw new DevWalletError(
      `the emulator's dev wallet refused: ${reason || `HTTP ${answer.status}`}`,
      reason,
      { status: answer.status },
    );
  };

  return {
    url: base,
    async pay(code, payOptions = {}) {
      const read = readCode(code);
      const amount =
        payOptions.amountMsat === undefined
          ? undefined
          : String(toMsat(payOptions.amountMsat, 'amountMsat'));
      const answer =
        read.kind === 'invoice'
          ? await post('/_emulator/pay-invoice', { pr: read.lower })
          : await post(
              `/_emulator/static-charges/${encodeURIComponent(targetOf(code, 'pay'))}/pay`,
              amount === undefined ? {} : { amountMsat: amount },
            );
      const amountMsat = answer.amountMsat;
      const preimage = answer.preimage;
      if (
        !(typeof amountMsat === 'number' && Number.isSafeInteger(amountMsat)) ||
        typeof preimage !== 'string' ||
        !/^[0-9a-f]{64}$/.test(preimage)
      )
        throw new DevWalletError('the emulator answered a payment without its amount or preimage');
      return { amountMsat: String(amountMsat), preimage };
    },
    async claim(code) {
      if (readCode(code).kind !== 'lnurl')
        throw new InvalidArgumentError('code', 'is an invoice: an invoice is paid, not claimed');
      const id = targetOf(code, 'withdraw');
      await post(`/_emulator/withdrawal-requests/${encodeURIComponent(id)}/claim`, {});
    },
  };
}

/** The base URL and the key; anything but an http(s) URL with a key is refused. */
function readUrl(url: string, givenKey: string | undefined): { base: string; key: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError('url', `must be the emulator's devWalletUrl, not ${show(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new ConfigurationError('url', `must be an http(s) URL, not ${parsed.protocol}`);
  const key = givenKey ?? new URLSearchParams(parsed.hash.slice(1)).get('key') ?? '';
  if (key === '')
    throw new ConfigurationError(
      'url',
      "carries no dev wallet key: pass the emulator's devWalletUrl (…/_emulator/#key=…) or options.key",
    );
  const path = parsed.pathname.replace(/\/_emulator\/?$/, '').replace(/\/+$/, '');
  return { base: `${parsed.origin}${path}`, key };
}

/** Throws unless `base` answers the emulator's state route, with this key, in its shape. */
async function checkEmulator(fetchFn: typeof fetch, base: string, key: string): Promise<void> {
  const refused = (why: string) =>
    new ConfigurationError('url', `${base} is not a colyseus-lightning emulator: ${why}`);
  let answer: { status: number; body: Record<string, unknown> };
  try {
    answer = await call(fetchFn, `${base}/_emulator/state`, { headers: { [KEY_HEADER]: key } });
  } catch (error) {
    if (error instanceof DevWalletError && error.status !== undefined)
      throw refused(`GET /_emulator/state answered ${error.status} with no JSON`);
    throw error;
  }
  if (answer.status === 401)
    throw new ConfigurationError(
      'url',
      `the emulator at ${base} refused the dev wallet key: it is from another start of the emulator`,
    );
  const { body } = answer;
  const lists = ['withdrawalRequests', 'staticCharges', 'entries', 'users'];
  if (answer.status !== 200 || !lists.every((name) => Array.isArray(body[name])))
    throw refused(`GET /_emulator/state answered ${answer.status} without the dev wallet's lists`);
}

/** One request whose answer must be a JSON object. */
async function call(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit,
): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetchFn(url, { ...init, redirect: 'error' });
  } catch (error) {
    throw new DevWalletError(`the emulator could not be reached at ${url}`, '', { cause: error });
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new DevWalletError(`${url} answered ${response.status} with no JSON object`, '', {
      status: response.status,
    });
  return { status: response.status, body: body as Record<string, unknown> };
}

/** The emulator's id of the entry an LNURL points at (`/lnurl/pay/{id}`). */
function targetOf(code: string, kind: 'pay' | 'withdraw'): string {
  const target = devWalletTarget(code);
  if (!target)
    throw new InvalidArgumentError('code', "is not an LNURL of the emulator's (/lnurl/…/{id})");
  if (target.kind !== kind)
    throw new InvalidArgumentError(
      'code',
      kind === 'pay'
        ? 'is a reward to claim (LNURL-withdraw), not a fee to pay'
        : 'is a fee to pay (LNURL-pay), not a reward to claim',
    );
  return target.id;
}

/** What an emulator's LNURL points at (a charge to pay, a request to claim), or null. */
export function devWalletTarget(
  code: string,
): { kind: 'pay' | 'withdraw'; id: string; url: string } | null {
  try {
    const url = decodeLnurl(code);
    const match = /\/lnurl\/(pay|withdraw)\/([^/?#]+)$/.exec(new URL(url).pathname);
    if (!match) return null;
    const id = decodeURIComponent(match[2] ?? '');
    return { kind: match[1] === 'pay' ? 'pay' : 'withdraw', id, url };
  } catch {
    return null;
  }
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : typeof value;
}
