/**
 * Webhooks of widget and ramp sessions: `{type, data}` POSTed to the session's webhook_url
 * with X-ZBD-Event-Id (unique per event) and X-ZBD-Event-Type, and, when a webhook secret
 * is configured, X-ZBD-Signature = hex HMAC-SHA256 of the raw body. The service retries
 * for hours; the emulator sends once when control asks and reports what happened.
 */

import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';

export interface WebhookDelivery {
  eventId: string;
  type: string;
  url: string;
  /** The raw body exactly as sent (what the signature covers). */
  body: string;
  headers: Record<string, string>;
  httpStatus: number | null;
  error: string | null;
  ok: boolean;
}

export function signWebhook(secret: string, rawBody: string): string {
  return createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
}

export async function sendWebhook(
  url: string,
  type: string,
  data: Record<string, unknown>,
  secret: string | undefined,
  eventId: string = randomUUID(),
): Promise<WebhookDelivery> {
  const body = JSON.stringify({ type, data });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-zbd-event-id': eventId,
    'x-zbd-event-type': type,
  };
  if (secret) headers['x-zbd-signature'] = signWebhook(secret, body);
  const delivery: WebhookDelivery = {
    eventId,
    type,
    url,
    body,
    headers,
    httpStatus: null,
    error: null,
    ok: false,
  };
  try {
    const res = await request(url, {
      method: 'POST',
      body,
      headers,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    await res.body.dump();
    delivery.httpStatus = res.statusCode;
    delivery.ok = res.statusCode >= 200 && res.statusCode < 300;
  } catch (error) {
    delivery.error = error instanceof Error ? error.message : String(error);
  }
  return delivery;
}
