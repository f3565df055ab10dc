/**
 * The service's two answer shapes, in one place: `{success, message, data}` on the v0
 * paths (errors `{success: false, message}`), and `{success, message, data, error}` on the
 * widget-user interface. Which one a route uses is its `family`.
 */

import { json, type Reply } from './http.js';

export type Family = 'v0' | 'widget' | 'lnurl' | 'emulator';

export function v0Ok(data: unknown, message = 'Success', status = 200): Reply {
  return json(status, { success: true, message, data });
}

export function v0Error(status: number, message: string): Reply {
  return json(status, { success: false, message });
}

export function widgetOk(data: unknown, message = 'Success', status = 200): Reply {
  return json(status, { success: true, message, data, error: null });
}

export function widgetError(status: number, code: string, message: string): Reply {
  return json(status, { success: false, message, data: null, error: { code, message } });
}

/** The error codes this emulator uses on the widget interface (only TX3017 is the service's). */
export const WIDGET_ERRORS = {
  validation: 'VALIDATION_ERROR',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  insufficientPoints: 'TX3017',
  idempotencyConflict: 'IDEMPOTENCY_KEY_REUSED',
  emailInUse: 'EMAIL_IN_USE',
} as const;

/** An error in the family's shape; `code` only matters to the widget interface. */
export function errorFor(family: Family, status: number, code: string, message: string): Reply {
  if (family === 'widget') return widgetError(status, code, message);
  if (family === 'lnurl') return json(status, { status: 'ERROR', reason: message });
  return v0Error(status, message);
}
