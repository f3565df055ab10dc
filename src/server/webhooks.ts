/**
 * Ramp and widget webhooks: verified against `webhookSecret` (HMAC of the raw body), parsed,
 * deduplicated in the ledger (delivery is at least once), then emitted once as `webhook`.
 * Returns the HTTP status to answer; the route only adapts HTTP to this.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseJson } from './body.js';
import type { Engine } from './engine.js';
import { verifySignature } from './webhook-signature.js';

const webhookBody = z.looseObject({ type: z.string().min(1).max(200), data: z.unknown() });

export interface WebhookDelivery {
  source: 'ramp' | 'widget';
  raw: Buffer;
  signature: string | null;
  eventId: string | null;
}

export async function receiveWebhook(engine: Engine, delivery: WebhookDelivery): Promise<number> {
  const { source, raw } = delivery;
  const secret = engine.settings.webhookSecret;
  if (secret !== undefined && !verifySignature(secret, raw, delivery.signature)) return 401;
  const parsed = webhookBody.safeParse(parseJson(raw));
  if (!parsed.success) return 400;
  const id = delivery.eventId ?? createHash('sha256').update(raw).digest('base64url');
  // At-least-once delivery: the same event id is acknowledged, not handled twice.
  if (await engine.ledger.recordEvent(`${source}:${id}`, engine.now())) {
    engine.emit('webhook', {
      source,
      id,
      type: parsed.data.type,
      data: parsed.data.data,
      verified: secret !== undefined,
    });
  }
  return 200;
}
