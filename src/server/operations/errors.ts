/**
 * What a money operation throws when the ledger fails it after the service was called: the
 * ledger's branch of the error tree (LN_LEDGER_ codes), raised by the engine, not by a store.
 */
import type { LightningErrorOptions } from '../../errors.js';
import { LedgerError, type LedgerErrorCode } from '../../ledger/errors.js';

/**
 * An intent this process recorded moments ago is gone: the store lost acknowledged writes. The
 * service may have acted: `remoteId` names what it answered.
 */
export class IntentLostError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_LOST';
  readonly intentId: string;
  readonly remoteId: string | null;

  constructor(intentId: string, remoteId: string | null, options?: LightningErrorOptions) {
    super(
      `the ledger lost intent ${intentId} after recording it${remoteId ? ` (the service created ${remoteId})` : ''}: is the ledger durable?`,
      options,
    );
    this.intentId = intentId;
    this.remoteId = remoteId;
  }
}

/**
 * The service answered a create (`remoteId`) and the ledger could not record the answer: it is
 * kept and recorded once the ledger answers. Not retryable: the same call would be a second one.
 */
export class AnswerNotRecordedError extends LedgerError {
  static override readonly code: LedgerErrorCode = 'LN_LEDGER_UNRECORDED';
  readonly intentId: string;
  readonly remoteId: string | null;

  constructor(intentId: string, remoteId: string | null, options?: LightningErrorOptions) {
    super(
      `the service answered intent ${intentId}${remoteId ? ` (it created ${remoteId})` : ''}, but the ledger could not record it (${(options?.cause as Error | undefined)?.message ?? 'unavailable'}); the answer is kept and recorded once the ledger answers: do not retry`,
      options,
    );
    this.intentId = intentId;
    this.remoteId = remoteId;
  }
}
