/**
 * The client kit's own error, in the package's one tree (errors.ts): what the emulator's dev
 * wallet refused or could not be asked. Costs nothing until thrown.
 */
import { LightningError, type LightningErrorCode, type LightningErrorOptions } from '../errors.js';

/**
 * The dev wallet could not pay or claim: the emulator said why (`reason`, as it said it:
 * 'Withdrawal request is completed'), or it could not be reached. Nothing moved.
 */
export class DevWalletError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_DEV_WALLET';
  /** The emulator's reason; '' when it gave none (it was not reached). */
  readonly reason: string;
  constructor(message: string, reason = '', options: LightningErrorOptions = {}) {
    super(message, options);
    this.reason = reason;
  }
}
