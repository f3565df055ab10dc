/**
 * colyseus-lightning/client: the player's side, for browsers and Node, with no framework and
 * nothing of the server inside.
 *
 *   watchLightning(Callbacks.get(room), {
 *     change: ({ entries, price }) => render(entries.map((e) => formatAmount(e.amountMsat ?? '0', { price }))),
 *   });
 *   const result = await pay(fee.code); // the browser's wallet (WebLN), or:
 *   if (result.via === 'show') box.innerHTML = `<a href="${result.uri}">${result.svg}</a>`;
 */

export { ConfigurationError, InvalidArgumentError, LightningError } from '../errors.js';
export { type FormatAmountOptions, formatAmount, type PriceInput, satsOf } from './amount.js';
export { decodeLnurl, lightningUri } from './code.js';
export {
  type DevPayment,
  type DevWallet,
  type DevWalletOptions,
  devWallet,
  devWalletTarget,
} from './dev-wallet.js';
export { DevWalletError } from './errors.js';
export { type QrSvgOptions, qrSvg } from './qr.js';
export type {
  SyncedEntry,
  SyncedLightning,
  SyncedMap,
  SyncedMatch,
  SyncedPrice,
  SyncedTab,
} from './synced.js';
export {
  type EntryPurpose,
  type EntryStatus,
  type EntryView,
  entriesOf,
  type MatchStatus,
  type MatchView,
  matchesOf,
  matchOf,
  type PriceView,
  priceOf,
  type TabView,
  tabOf,
} from './views.js';
export {
  type LightningHandlers,
  type LightningSnapshot,
  type StateCallbacks,
  type WatchOptions,
  watchLightning,
} from './watch.js';
export {
  claim,
  pay,
  type ShowReason,
  type WalletOptions,
  type WalletResult,
  type WebLNProvider,
} from './webln.js';
