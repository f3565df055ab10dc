/**
 * Paying and claiming from a page: through the browser's Lightning wallet (WebLN) when there is
 * one, else the QR and `lightning:` link. Never a false success: `{ via: 'webln' }` says the
 * wallet accepted; the entry's synced `status` says when the money moved.
 *
 *   const result = await pay(fee.code);
 *   if (result.via === 'show') box.innerHTML = `<a href="${result.uri}">${result.svg}</a>`;
 */
import { InvalidArgumentError } from '../errors.js';
import { lightningUri, readCode } from './code.js';
import { qrSvg } from './qr.js';

/** What the kit uses of a WebLN provider (WebLN 1.0; `lnurl` is an extension most wallets have). */
export interface WebLNProvider {
  enable(): Promise<unknown>;
  sendPayment(paymentRequest: string): Promise<{ preimage?: string } | unknown>;
  lnurl?(lnurl: string): Promise<unknown>;
}

/** Why the page is to show the code instead. */
export type ShowReason =
  /** No WebLN provider on this page (no browser wallet, or Node). */
  | 'no-wallet'
  /** The player declined to connect the wallet. */
  | 'declined'
  /** The wallet cannot follow an LNURL (it has no `lnurl`). */
  | 'unsupported'
  /** The wallet tried and failed (or the player cancelled): scanning with another may work. */
  | 'failed';

export type WalletResult =
  /** The browser's wallet took the request: watch the entry's status for the outcome. */
  | { via: 'webln'; preimage: string | null }
  /** Show the QR (`svg`) and the link (`uri`) for the player to scan or tap. */
  | { via: 'show'; reason: ShowReason; uri: string; svg: string; error: unknown };

export interface WalletOptions {
  /** The WebLN provider; default `globalThis.webln` (the page's `window.webln`). */
  webln?: WebLNProvider | null;
  /** The QR's `aria-label` in the fallback; default 'Lightning QR code'. */
  label?: string;
}

/**
 * Pays `code` (an entry fee's LNURL or a BOLT11 invoice) with the browser's wallet, or says to
 * show it. Garbage is refused (`InvalidArgumentError`) before any wallet sees it.
 */
export async function pay(code: string, options: WalletOptions = {}): Promise<WalletResult> {
  const read = readCode(code);
  return through(read.text, options, (webln) =>
    read.kind === 'invoice' ? webln.sendPayment(read.lower) : webln.lnurl?.(read.lower),
  );
}

/** Claims `code`, a payout's or refund's LNURL, with the browser's wallet, or says to show it. */
export async function claim(code: string, options: WalletOptions = {}): Promise<WalletResult> {
  const read = readCode(code);
  if (read.kind !== 'lnurl')
    throw new InvalidArgumentError('code', 'is an invoice: an invoice is paid (pay), not claimed');
  return through(read.text, options, (webln) => webln.lnurl?.(read.lower));
}

async function through(
  text: string,
  options: WalletOptions,
  act: (webln: WebLNProvider) => Promise<unknown> | undefined,
): Promise<WalletResult> {
  const show = (reason: ShowReason, error: unknown = null): WalletResult => ({
    via: 'show',
    reason,
    uri: lightningUri(text),
    svg: qrSvg(text, options.label === undefined ? {} : { label: options.label }),
    error,
  });
  const webln = options.webln === undefined ? pageProvider() : options.webln;
  if (!webln) return show('no-wallet');
  try {
    await webln.enable();
  } catch (error) {
    return show('declined', error);
  }
  let answer: unknown;
  try {
    const pending = act(webln);
    if (pending === undefined) return show('unsupported');
    answer = await pending;
  } catch (error) {
    return show('failed', error);
  }
  const preimage =
    typeof answer === 'object' && answer !== null && 'preimage' in answer
      ? answer.preimage
      : undefined;
  return { via: 'webln', preimage: typeof preimage === 'string' ? preimage : null };
}

/** The page's provider, checked for the one method every WebLN provider has. */
function pageProvider(): WebLNProvider | null {
  const candidate: unknown = (globalThis as { webln?: unknown }).webln;
  if (typeof candidate !== 'object' || candidate === null) return null;
  const provider = candidate as Partial<WebLNProvider>;
  return typeof provider.enable === 'function' && typeof provider.sendPayment === 'function'
    ? (provider as WebLNProvider)
    : null;
}
