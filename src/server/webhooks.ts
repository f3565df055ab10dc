/**
 * Ramp and widget webhooks: verified (HMAC of the raw body), bound to their route (`ramp.*` types
 * to the ramp's), deduplicated, then emitted once as `webhook`. Duplicates are found by a hash of
 * the route and the signed body, never the unsigned event id; the service signs no timestamp, so
 * the ledger keeps every signed event's hash for good (one short row each).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseJson } from './body.js';
import type { Engine } from './engine.js';
import type { Settings } from './options.js';
import { verifySignature } from './webhook-signature.js';

const webhookBody = z.looseObject({ type: z.string().min(1).max(200), data: z.unknown() });

/** Longest header values accepted: a signature (hex, base64 or `sha256=`) and a delivery id. */
const MAX_SIGNATURE_CHARS = 256;
const MAX_DELIVERY_ID_CHARS = 200;

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
  // Signed by the service but meant for the other route: a replay or a miswired session.
  if (parsed.data.type.startsWith('ramp.') !== (source === 'ramp')) return 422;
  const id = createHash('sha256').update(`${source}\n`).update(raw).digest('base64url');
  // At-least-once delivery: a repeat is acknowledged, never handled twice.
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

/** The URL of a webhook route, given with each session (without a secret: warned once). */
export function webhookUrls(
  settings: Pick<Settings, 'publicUrl' | 'prefix' | 'webhookSecret' | 'logger'>,
): (source: WebhookDelivery['source']) => string {
  let warned = false;
  return (source) => {
    if (settings.webhookSecret === undefined && !warned) {
      warned = true;
      settings.logger.warn(
        'widget or ramp sessions are opened without webhookSecret: their webhooks are refused (503) and nothing of them is recorded; set webhookSecret to the one of your project',
      );
    }
    return `${settings.publicUrl}${settings.prefix}/webhooks/${source}`;
  };
}
