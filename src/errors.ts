/**
 * The one error tree of the package. Every error is a `LightningError` with a stable `code`
 * (`LN_TIMEOUT`), `retryable`, and, when the service answered, `status` and `serviceCode`.
 * `instanceof` is a brand check by `code`, so an error from another copy of the package (a
 * nested copy, a bundle) is still an instance.
 */

/** Every code the package throws, each the identity of one error class. */
export type LightningErrorCode =
  | 'LN_ERROR'
  | 'LN_CONFIGURATION'
  | 'LN_INVALID_ARGUMENT'
  | 'LN_API_ERROR'
  | 'LN_AUTHENTICATION'
  | 'LN_PERMISSION'
  | 'LN_NOT_FOUND'
  | 'LN_INVALID_REQUEST'
  | 'LN_INSUFFICIENT_POINTS'
  | 'LN_RATE_LIMITED'
  | 'LN_SERVICE_ERROR'
  | 'LN_CONNECTION'
  | 'LN_TIMEOUT'
  | 'LN_AMBIGUOUS_RESULT'
  | 'LN_UNEXPECTED_RESPONSE'
  | 'LN_LEDGER_ERROR'
  | 'LN_LEDGER_ILLEGAL_TRANSITION'
  | 'LN_LEDGER_DUPLICATE'
  | 'LN_LEDGER_INVALID'
  | 'LN_LEDGER_CLOSED'
  | 'LN_LEDGER_INCOMPATIBLE'
  | 'LN_LEDGER_BUSY'
  | 'LN_LEDGER_LOST'
  | 'LN_LEDGER_UNRECORDED'
  | 'LN_LEDGER_NOT_DURABLE'
  | 'LN_LEDGER_UNAVAILABLE'
  | 'LN_PAYOUTS_PAUSED'
  | 'LN_ADDRESS_REFUSED'
  | 'LN_LIMIT_EXCEEDED'
  | 'LN_BUDGET_EXCEEDED'
  | 'LN_INSUFFICIENT_FUNDS'
  | 'LN_CREDIT_TOO_LARGE'
  | 'LN_EARNING_CAP'
  | 'LN_WITHDRAWAL_TOO_SMALL'
  | 'LN_WITHDRAWAL_CAP'
  | 'LN_TIME_IN_ROOM'
  | 'LN_MATCH_CLOSED'
  | 'LN_MATCH_SEAT'
  | 'LN_REGION_REFUSED'
  | 'LN_PLAYER_BLOCKED'
  | 'LN_NOT_SIGNED_IN'
  | 'LN_OPERATOR_REFUSED'
  | 'LN_DEV_WALLET';

/** Holds the codes of an error's class and of every class above it: what `instanceof` checks. */
const BRAND: unique symbol = Symbol.for('colyseus-lightning.error') as never;

export interface LightningErrorOptions {
  /** Whether doing the same thing again is safe and may succeed; each class has a default. */
  retryable?: boolean | undefined;
  /** The HTTP status of the service's answer, when there was one. */
  status?: number | undefined;
  /** The service's own error code, when it sent one (`TX3017`). */
  serviceCode?: string | undefined;
  cause?: unknown;
}

export class LightningError extends Error {
  /** The class's identity; every subclass declares its own. */
  static readonly code: LightningErrorCode = 'LN_ERROR';
  /** Whether instances of the class are retryable unless the constructor says otherwise. */
  static readonly retryable: boolean = false;

  readonly code: LightningErrorCode;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly serviceCode: string | undefined;
  declare readonly [BRAND]: readonly LightningErrorCode[];

  constructor(message: string, options: LightningErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const klass = new.target as typeof LightningError;
    const chain: LightningErrorCode[] = [];
    for (let c: unknown = klass; c !== Error && typeof c === 'function'; ) {
      const code = (c as typeof LightningError).code;
      if (!chain.includes(code)) chain.push(code);
      c = Object.getPrototypeOf(c);
    }
    Object.defineProperty(this, BRAND, { value: Object.freeze(chain) });
    Object.defineProperty(this, 'name', {
      value: klass.name,
      enumerable: false,
      writable: true,
      configurable: true,
    });
    this.code = klass.code;
    this.retryable = options.retryable ?? klass.retryable;
    this.status = options.status;
    this.serviceCode = options.serviceCode;
  }

  /** Brand check: true for an error of this class (or below) from any copy of the package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const chain = (value as { [BRAND]?: unknown })[BRAND];
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass being checked against
    return Array.isArray(chain) && chain.includes(this.code);
  }
}

/** The package was set up wrongly: nothing was recorded or sent. The message says the fix. */
export class ConfigurationError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_CONFIGURATION';
  /** `field`: the option or the place that is wrong (`options.publicUrl`, `state`). */
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** An argument failed validation: nothing was recorded or sent. `field` is a dotted path. */
export class InvalidArgumentError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_INVALID_ARGUMENT';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field || 'argument'}: ${problem}`);
  }
}

/** Payouts are paused: nothing was recorded or sent; `lightning.operator.resume()` lifts it. */
export class PayoutsPausedError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_PAYOUTS_PAUSED';
  constructor(readonly reason: string) {
    super(`payouts are paused (${reason}); nothing was sent`);
  }
}

/**
 * Why a payment to a Lightning address was not sent: the service cannot pay it (`invalid`), its
 * check failed or timed out (`unverified`), or payments to it just failed (`failing`).
 */
export type LnAddressRefusal = 'invalid' | 'unverified' | 'failing';

const ADDRESS_REFUSALS: Record<LnAddressRefusal, string> = {
  invalid: 'the service says it cannot be paid',
  unverified: 'its check did not answer in time, or failed',
  failing: 'payments to it failed just now',
};

/**
 * A payment to a Lightning address was refused before anything was recorded or sent (the
 * address, in lower case, is checked first). Retryable unless the address is `invalid`.
 */
export class LnAddressRefusedError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_ADDRESS_REFUSED';
  constructor(
    readonly address: string,
    readonly reason: LnAddressRefusal,
    cause?: unknown,
  ) {
    super(`Lightning address ${address}: ${ADDRESS_REFUSALS[reason]}; nothing was sent`, {
      retryable: reason !== 'invalid',
      cause,
    });
  }
}

/** The limit that refused a create: the player's open intents, the game's, or a group's seats. */
export type OpenLimit = 'maxOpenPerPlayer' | 'maxOpenPerGame' | 'seats';

/**
 * A limit on open intents refused the call, checked in the step that would have recorded it
 * (so across processes): nothing was recorded or sent. Retryable once some intents have ended.
 */
export class LimitExceededError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_LIMIT_EXCEEDED';
  static override readonly retryable: boolean = true;

  constructor(
    readonly limit: OpenLimit,
    readonly max: number,
    readonly playerId: string,
  ) {
    super(
      limit === 'maxOpenPerGame'
        ? `the game already has ${max} open intents, its cap (limits.maxOpenPerGame); player ${playerId}'s was refused and nothing was sent`
        : limit === 'seats'
          ? `every one of the group's ${max} seats is taken; player ${playerId}'s was refused and nothing was sent`
          : `player ${playerId} already has ${max} open intents (limits.${limit}); nothing was sent`,
    );
  }
}

/** Which payout budget refused: the single-payout cap, or a player's, room's or game's window. */
export type BudgetScope = 'payout' | 'player' | 'room' | 'game';

/**
 * A payout budget refused a payout: it exceeds `maxRewardMsat`, or its player's, room's or
 * game's rolling window would exceed its cap. Checked atomically with the record: nothing sent.
 */
export class BudgetExceededError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_BUDGET_EXCEEDED';

  constructor(
    readonly scope: BudgetScope,
    /** The cap, in msats. */
    readonly limitMsat: string,
    /** What the window already holds, in msats (0 for `payout`). */
    readonly reservedMsat: string,
    /** The rolling window, in ms; null for `payout`. */
    readonly windowMs: number | null,
  ) {
    super(
      scope === 'payout'
        ? `the payout exceeds budgets.maxRewardMsat (${limitMsat} msats); nothing was sent`
        : `the ${scope} payout budget (${limitMsat} msats per ${windowMs} ms) holds ${reservedMsat} msats already: this payout would exceed it; nothing was sent`,
    );
  }
}

/**
 * A draw on a player's balance (a tab's withdrawal) larger than the balance, decided in the
 * ledger's atomic step with the record: nothing was recorded or sent.
 */
export class InsufficientFundsError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_INSUFFICIENT_FUNDS';

  constructor(
    readonly account: string,
    /** The balance the draw found, and what it asked for (decimal strings, in `unit`). */
    readonly balance: string,
    readonly amount: string,
    readonly unit: string,
  ) {
    super(
      `${account} holds ${balance} ${unit}: a draw of ${amount} would take it below zero; nothing was recorded or sent`,
    );
  }
}

/** A rolling window in words: "hour", "day", else its milliseconds. */
function windowWords(windowMs: number): string {
  if (windowMs === 3_600_000) return 'hour';
  if (windowMs === 86_400_000) return 'day';
  return `${windowMs} ms`;
}

/**
 * A credit larger than `tabs.maxCreditMsat`, the ceiling per credit (docs/MATCHES.md): nothing
 * was recorded. Credit less per event, or raise the option.
 */
export class CreditTooLargeError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_CREDIT_TOO_LARGE';

  constructor(
    readonly playerId: string,
    readonly amountMsat: string,
    readonly maxMsat: string,
  ) {
    super(
      `a credit of ${amountMsat} msats to player ${playerId} is above tabs.maxCreditMsat (${maxMsat}); nothing was recorded`,
    );
  }
}

/**
 * A credit that would take the player's earnings over a rolling window (`tabs.earnPerHourMsat`,
 * `tabs.earnPerDayMsat`) past its cap, decided in the ledger's atomic step with the record, so
 * across processes: nothing was recorded. Retryable once the window has rolled on.
 */
export class EarningCapError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_EARNING_CAP';
  static override readonly retryable: boolean = true;

  constructor(
    readonly playerId: string,
    /** The cap, and what the player's credits in the window add up to already, in msats. */
    readonly limitMsat: string,
    readonly earnedMsat: string,
    readonly windowMs: number,
  ) {
    super(
      `player ${playerId} earned ${earnedMsat} msats in the last ${windowWords(windowMs)}, the cap is ${limitMsat}${
        windowMs === 3_600_000
          ? ' (tabs.earnPerHourMsat)'
          : windowMs === 86_400_000
            ? ' (tabs.earnPerDayMsat)'
            : ''
      }: this credit would pass it; nothing was recorded`,
    );
  }
}

/**
 * A withdrawal under `tabs.minWithdrawalMsat` (or a whole tab under it): nothing was recorded or
 * sent. The player earns more first; the minimum is never below the service's own.
 */
export class WithdrawalTooSmallError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_WITHDRAWAL_TOO_SMALL';

  constructor(
    readonly playerId: string,
    readonly amountMsat: string,
    readonly minMsat: string,
  ) {
    super(
      `a withdrawal of ${amountMsat} msats for player ${playerId} is under tabs.minWithdrawalMsat (${minMsat}); nothing was recorded or sent`,
    );
  }
}

/**
 * A withdrawal that would take the player's withdrawals over the last day past
 * `tabs.withdrawPerDayMsat`, decided in the ledger's atomic step with the record: nothing was
 * recorded or sent. Retryable once the window has rolled on; what stays is in the tab.
 */
export class WithdrawalCapError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_WITHDRAWAL_CAP';
  static override readonly retryable: boolean = true;

  constructor(
    readonly playerId: string,
    /** The cap, and what the player's withdrawals in the window add up to already, in msats. */
    readonly limitMsat: string,
    readonly withdrawnMsat: string,
    readonly windowMs: number,
  ) {
    super(
      `player ${playerId} withdrew ${withdrawnMsat} msats in the last ${windowWords(windowMs)}, the cap is ${limitMsat} (tabs.withdrawPerDayMsat): this withdrawal would pass it; nothing was recorded or sent`,
    );
  }
}

/**
 * A room's credit to a player who has not been in the room `minMs` yet (the plugin's
 * `tabs.minTimeInRoomMs`, measured from its own clock at join): nothing was recorded.
 */
export class TimeInRoomError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_TIME_IN_ROOM';

  constructor(
    readonly playerId: string,
    /** How long the player's client has been in the room, and how long a credit needs, in ms. */
    readonly inRoomMs: number,
    readonly minMs: number,
  ) {
    super(
      `player ${playerId} has been in the room ${inRoomMs} ms of the ${minMs} ms a credit needs (tabs.minTimeInRoomMs); nothing was recorded`,
    );
  }
}

/** The one decision a match took, as a `MatchClosedError` names it. */
export interface MatchClosedDecision {
  kind: 'settle' | 'abort';
  /** The shares it was settled with (a settle). */
  shares: Record<string, number> | null;
  /** Why it was aborted (an abort). */
  reason: string | null;
}

/**
 * A match that no longer takes this call: entering a decided one (a payment that slipped in is
 * refunded), or deciding it otherwise than it was. `decision` names what stands.
 */
export class MatchClosedError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_MATCH_CLOSED';

  constructor(
    readonly matchId: string,
    /** What the match is now: settling, aborting, settled or aborted. */
    readonly matchStatus: string,
    /** The decision that stands; null when the match could not be read whole. */
    readonly decision: MatchClosedDecision | null = null,
  ) {
    super(
      `match ${matchId} is ${matchStatus}${decision ? ` (${describeDecision(decision)})` : ''}: it takes no more entries or other decisions`,
    );
  }
}

/**
 * A roster match refused an entry: the player is not one of its `players` (`not-in-roster`),
 * or every one of its `seats` is taken (`full`). Nothing was recorded or sent.
 */
export class MatchSeatError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_MATCH_SEAT';

  constructor(
    readonly matchId: string,
    readonly playerId: string,
    readonly reason: 'not-in-roster' | 'full',
  ) {
    super(
      reason === 'not-in-roster'
        ? `match ${matchId} was opened for a roster that does not name ${playerId}: nothing was charged`
        : `match ${matchId} has no seat left for ${playerId} (every seat holds another player's open or paid fee): nothing was charged`,
    );
  }
}

/** A decision in a few words, the shares cut short: a message, not a record. */
function describeDecision(decision: MatchClosedDecision): string {
  if (decision.kind === 'abort') return `aborted: ${decision.reason ?? ''}`.slice(0, 200);
  const shares = JSON.stringify(decision.shares ?? {});
  return `settled with shares ${shares.length > 200 ? `${shares.slice(0, 200)}…` : shares}`;
}

/** The region gate refused a money helper: nothing was recorded or sent. */
export class RegionRefusedError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_REGION_REFUSED';

  constructor(
    readonly playerId: string,
    /** The country the service named, when it answered. */
    readonly country: string | null,
    readonly region: string | null,
    why?: string,
  ) {
    super(
      why ??
        `player ${playerId} is in a region the service does not serve (${country ?? '?'}${region ? `, ${region}` : ''}); nothing was sent`,
    );
  }
}

/**
 * An operator blocked the player (`lightning.operator.block`): their money helpers are refused
 * in every process until `unblock`. Codes they already hold stay valid.
 */
export class PlayerBlockedError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_PLAYER_BLOCKED';
  constructor(readonly playerId: string) {
    super(`player ${playerId} is blocked by an operator; nothing was recorded or sent`);
  }
}

/**
 * In production, a money helper called for a client the room never signed in: no `client.auth`
 * (nor `userData.playerId`), so the only id left is the session id, which changes on every join
 * and would leave the player's codes and refunds under a name they no longer have. Nothing was
 * recorded or sent. Outside production the helper goes ahead with a warning instead.
 */
export class NotSignedInError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_NOT_SIGNED_IN';
  constructor(
    readonly roomId: string,
    readonly sessionId: string,
  ) {
    super(
      `room ${roomId}: client ${sessionId} is not signed in (no client.auth), so no money moves for it; nothing was recorded or sent. ${SIGN_IN_FIX}`,
    );
  }
}

/** How a room signs its players in, as the no-client.auth refusal and warning say it. */
export const SIGN_IN_FIX =
  "Sign players in on the server: return { id } from the room's onAuth (or a static onAuth, as @colyseus/auth's JWT check does), which sets client.auth; or give lightning.plugin({ playerId: (client) => ... }) a rule over your own records. Never take the id from join options: whoever names another player's id would see their claim codes.";

/**
 * An operator's action that does not apply to what the ledger holds now (a resolve of an intent
 * that is not unknown, a second reissue, a pause of paused payouts...): nothing was changed. An
 * InvalidArgumentError too, so code that caught a refused `resolve` as one still does.
 */
export class OperatorRefusedError extends InvalidArgumentError {
  static override readonly code: LightningErrorCode = 'LN_OPERATOR_REFUSED';
  /** `action`: the one refused (`resolve`, `pause`, `reissue`, `approve`, `block`, ...). */
  constructor(
    readonly action: string,
    field: string,
    problem: string,
  ) {
    super(field, `${action} refused: ${problem}`);
  }
}

/**
 * The codes of a rule's refusal: the call was understood and said no, and nothing was recorded
 * or sent. What `lightning.refused` counts and the operator's refusals keep; not a failure (the
 * service, the store, the network) nor a caller's bad argument.
 */
const REFUSAL_CODES: ReadonlySet<LightningErrorCode> = new Set<LightningErrorCode>([
  ...['LN_PLAYER_BLOCKED', 'LN_PAYOUTS_PAUSED', 'LN_LIMIT_EXCEEDED', 'LN_BUDGET_EXCEEDED'],
  ...['LN_INSUFFICIENT_FUNDS', 'LN_INSUFFICIENT_POINTS', 'LN_ADDRESS_REFUSED', 'LN_REGION_REFUSED'],
  ...['LN_CREDIT_TOO_LARGE', 'LN_EARNING_CAP', 'LN_WITHDRAWAL_TOO_SMALL', 'LN_WITHDRAWAL_CAP'],
  ...['LN_TIME_IN_ROOM', 'LN_NOT_SIGNED_IN', 'LN_MATCH_CLOSED', 'LN_MATCH_SEAT'],
] as const);

/** Whether `err` is a rule's refusal (REFUSAL_CODES). */
export function isRefusal(err: unknown): err is LightningError {
  return err instanceof LightningError && REFUSAL_CODES.has(err.code);
}
