/** Widget sessions and purchase (ramp) sessions: short-lived tokens for one user. */

import { parseInput } from '../../parse.js';
import {
  type RampSessionAnswer,
  rampSession,
  type WidgetSessionAnswer,
  widgetSession,
} from '../answers.js';
import {
  type RampSessionBody,
  type RampSessionInput,
  rampSessionInput,
  type WidgetSessionBody,
  type WidgetSessionInput,
  widgetSessionInput,
} from '../inputs.js';
import type { ApiContext } from './context.js';

/** The send step: a body already parsed, by the calls below or by the server's own edge. */
export class WidgetSessionSends {
  constructor(private readonly ctx: ApiContext) {}

  /** A session token and the widget URL to embed; valid until `expires_at`. */
  async create(body: WidgetSessionBody): Promise<WidgetSessionAnswer> {
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

/** The client's call: it parses what the game hands it, then sends. */
export class WidgetSessionCalls {
  readonly #send: WidgetSessionSends;

  constructor(send: WidgetSessionSends) {
    this.#send = send;
  }

  /** A session token and the widget URL to embed; valid until `expires_at`. */
  async create(input: WidgetSessionInput): Promise<WidgetSessionAnswer> {
    return this.#send.create(parseInput(widgetSessionInput, input));
  }
}

/** The send step: a body already parsed, by the calls below or by the server's own edge. */
export class RampSends {
  constructor(private readonly ctx: ApiContext) {}

  /** A purchase session (15 minutes); results arrive as webhooks at `webhook_url`. */
  async createSession(body: RampSessionBody): Promise<RampSessionAnswer> {
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

/** The client's call: it parses what the game hands it, then sends. */
export class RampCalls {
  readonly #send: RampSends;

  constructor(send: RampSends) {
    this.#send = send;
  }

  /** A purchase session (15 minutes); results arrive as webhooks at `webhook_url`. */
  async createSession(input: RampSessionInput): Promise<RampSessionAnswer> {
    return this.#send.createSession(parseInput(rampSessionInput, input));
  }
}
