/**
 * Webhook signatures: HMAC-SHA256 of the raw body with the shared secret. The service does
 * not publish the encoding, so hex and base64 are both accepted (with or without a
 * `sha256=` prefix); comparison is constant-time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signBody(secret: string, raw: Buffer | string): string {
  return createHmac('sha256', secret).update(raw).digest('hex');
}

export function verifySignature(secret: string, raw: Buffer, header: string | null): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  for (const candidate of header.split(',')) {
    const value = candidate.trim().replace(/^(sha256|v1)=/i, '');
    for (const encoding of ['hex', 'base64'] as const) {
      const given = Buffer.from(value, encoding);
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
  }
  return false;
}
