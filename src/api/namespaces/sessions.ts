/** Widget sessions and purchase (ramp) sessions: short-lived tokens for one user. */

import { parseInput } from '../../parse.js';
import {
  type RampSessionAnswer,
  rampSession,
  type WidgetSessionAnswer,
  widgetSession,
} from '../answers.js';
import {
  type RampSessionInput,
  rampSessionInput,
  type WidgetSessionInput,
  widgetSessionInput,
} from '../inputs.js';
import type { ApiContext } from './context.js';

export class WidgetSessionCalls {
  constructor(private readonly ctx: ApiContext) {}

  /** A session token and the widget URL to embed; valid until `expires_at`. */
  async create(input: WidgetSessionInput): Promise<WidgetSessionAnswer> {
    const body = parseInput(widgetSessionInput, input);
    return this.ctx.transport.send({
      operation: 'widgetSessions.create',
      method: 'POST',
      path: this.ctx.paths.widgetSessionsCreate,
      body,
      safety: 'unkeyed',
      data: widgetSession,
    });
  }
}

export class RampCalls {
  constructor(private readonly ctx: ApiContext) {}

  /** A purchase session (15 minutes); results arrive as webhooks at `webhook_url`. */
  async createSession(input: RampSessionInput): Promise<RampSessionAnswer> {
    const body = parseInput(rampSessionInput, input);
    return this.ctx.transport.send({
      operation: 'ramp.createSession',
      method: 'POST',
      path: this.ctx.paths.rampSessionsCreate,
      body,
      safety: 'unkeyed',
      data: rampSession,
    });
  }
}
