/**
 * One `node:diagnostics_channel` message per attempt, for logs and metrics that the user
 * wires up themselves. Costs nothing when nobody subscribes. Never carries the key or a body.
 *
 *   import { subscribe } from 'node:diagnostics_channel';
 *   subscribe('colyseus-lightning:request', (m) => console.log(m));
 */
import { channel } from 'node:diagnostics_channel';

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

export const requestChannel = channel(REQUEST_CHANNEL);

export function publishRequest(event: RequestEvent): void {
  if (requestChannel.hasSubscribers) requestChannel.publish(event);
}
