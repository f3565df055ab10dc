/**
 * What a provider's transport tells of each attempt it sends: one `node:diagnostics_channel`
 * message on REQUEST_CHANNEL, for the server's metrics and alerts and for the logs a game wires
 * up itself. Never the key or a body.
 *
 *   import { subscribe } from 'node:diagnostics_channel';
 *   subscribe('colyseus-lightning:request', (m) => console.log(m));
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
