/**
 * What a provider's transport tells of each attempt: one diagnostics_channel message on
 * REQUEST_CHANNEL (never the key or a body), for metrics, alerts and a game's own logs.
 */

export const REQUEST_CHANNEL = 'colyseus-lightning:request';

export interface RequestEvent {
  /** The client call, e.g. `withdrawalRequests.create`. */
  operation: string;
  method: string;
  path: string;
  /** 1 for the first try. */
  attempt: number;
  /** HTTP status, when an answer came. */
  status: number | undefined;
  durationMs: number;
  /** `ok`, or what went wrong: connect, timeout, reset, rate-limited, server-error, http-error. */
  outcome: string;
}
