/**
 * One `node:diagnostics_channel` message per attempt (port/requests.ts says what it holds).
 * Costs nothing when nobody subscribes.
 */
import { channel } from 'node:diagnostics_channel';
import { REQUEST_CHANNEL } from '../port/requests.js';

export { REQUEST_CHANNEL, type RequestEvent } from '../port/requests.js';

export const requestChannel = channel(REQUEST_CHANNEL);
