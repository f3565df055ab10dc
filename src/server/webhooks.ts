/**
 * Ramp and widget webhooks: verified against `webhookSecret` (HMAC of the raw body), parsed,
 * deduplicated in the ledger (delivery is at least once), then emitted once as `webhook`.
 * Returns the HTTP status to answer; the route only adapts HTTP to this.
 *
 * Without a secret nothing can tell the service from anyone else, so nothing is stored or
 * emitted (503). Duplicates are found by a hash of the route and the signed raw body, never by
 * the unsigned `X-ZBD-Event-Id` header: a replayed body under a new header is the same event.
 * The dedupe table holds only signed events, each for a week, so it stays as small as the
 * service's own traffic.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseJson } from './body.js';
import type { Engine } from './engine.js';
import { verifySignature } from './webhook-signature.js';

const webhookBody = z.looseObject({ type: z.string().min(1).max(200), data: z.unknown() });

/** Longest header values accepted: a signature (hex, base64 or `sha256=`) and a delivery id. */
export const MAX_SIGNATURE_CHARS = 256;
export const MAX_DELIVERY_ID_CHARS = 200;

export interface WebhookDelivery {
  source: 'ramp' | 'widget';
  raw: Buffer;
  signature: string | null;
  /** The `X-ZBD-Event-Id` header: informational only, it is not signed. */
  deliveryId: string | null;
}

export async function receiveWebhook(engine: Engine, delivery: WebhookDelivery): Promise<number> {
  const { source, raw } = delivery;
  const secret = engine.settings.webhookSecret;
  if (secret === undefined) return 503;
  if ((delivery.signature?.length ?? 0) > MAX_SIGNATURE_CHARS) return 400;
  if ((delivery.deliveryId?.length ?? 0) > MAX_DELIVERY_ID_CHARS) return 400;
  if (!verifySignature(secret, raw, delivery.signature)) return 401;
  const parsed = webhookBody.safeParse(parseJson(raw));
  if (!parsed.success) return 400;
  const id = createHash('sha256').update(`${source}\n`).update(raw).digest('base64url');
  // At-least-once delivery: the same signed event is acknowledged, not handled twice.
  if (await engine.ledger.recordEvent(`${source}:${id}`, engine.now())) {
    engine.emit('webhook', {
      source,
      id,
      deliveryId: delivery.deliveryId,
      type: parsed.data.type,
      data: parsed.data.data,
    });
  }
  return 200;
}
