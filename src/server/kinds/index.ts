/**
 * Every kind of intent, registered: the engine is built with this table and applies its rules,
 * so adding a kind is its own file (see kind.ts for what it says) plus one line here, and its
 * row in the journal's positions (ledger/journal.ts).
 */
import { entryFee } from './entry-fee.js';
import type { KindTable } from './kind.js';
import { match } from './match.js';
import { payment } from './payment.js';
import { reward } from './reward.js';
import { spend } from './spend.js';

export const KINDS: KindTable = { reward, entryFee, spend, payment, match };
