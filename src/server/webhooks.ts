/**
 * Ramp and widget webhooks: verified against `webhookSecret` (HMAC of the raw body), parsed,
 * bound to their route, deduplicated in the ledger (delivery is at least once), then emitted
 * once as `webhook`. Returns the HTTP status to answer; the route only adapts HTTP to this.
 *
 * Without a secret nothing can tell the service from anyone else, so nothing is stored or
 * emitted (503). Duplicates are found by a hash of the route and the signed raw body, never by
 * the unsigned `X-ZBD-Event-Id` header: a replayed body under a new header is the same event.
 * The service signs no timestamp, so nothing tells an old body from a new one: the ledger keeps
 * every signed event's hash for good (LedgerStore.recordEvent), and a replay months later is
 * still a duplicate. That costs one short row or key per signed event (about 70 bytes in a
 * SQLite file, 200 in PostgreSQL: see each store's header), as many as the
 * service's distinct events, never more: only a body that passed the signature is stored.
 *
 * A signed body is also bound to its route: `ramp.*` types belong to the ramp route and every
 * other type (the service publishes no list of widget types) to the widget route. A body on the
 * other source's route is answered 422 with nothing stored or emitted, so a ramp event replayed
 * at the widget route never reaches the game as a widget event (or the other way round).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseJson } from './body.js';
import type { Engine } from './engine.js';
import type { Settings } from './options.js';
import { verifySignature } from './webhook-signature.js';

const webhookBody = z.looseObject({ type: z.string().min(1).max(200), data: z.unknown() });

/** Longest header values accepted: a signature (hex, base64 or `sha256=`) and a delivery id. */
export const MAX_SIGNATURE_CHARS = 256;
export const MAX_DELIVERY_ID_CHARS = 200;

/** Which route a signed event type belongs to: `ramp.*` to the ramp route, any other to the widget's. */
function sourceOfType(type: string): WebhookDelivery['source'] {
  return type.startsWith('ramp.') ? 'ramp' : 'widget';
}

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
  if (sourceOfType(parsed.data.type) !== source) return 422;
  const id = createHash('sha256').update(`${source}\n`).update(raw).digest('base64url');
  // At-least-once delivery: the same signed event is acknowledged, never handled twice, however
  // late it comes back (the ledger never forgets an id).
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

/**
 * The URL of the ramp or widget webhook route, given to the service with each session. Without
 * `webhookSecret` its webhooks are refused: said once, the first time a session is opened.
 */
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
