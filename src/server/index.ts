/** The server layer: `createLightning` and what it exposes. */
export { LightningCore, type LightningEvents, type WebhookEvent } from './core.js';
export type { EntryFeeInput, RewardInput, SpendInput } from './operations/inputs.js';
export type { LightningLogger, LightningOptions, ReconcilerOptions } from './options.js';
export { roomChannel, type SettlementMessage } from './settlement.js';
export { signBody, verifySignature } from './webhook-signature.js';
