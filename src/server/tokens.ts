/**
 * Callback tokens, the only tie between an unauthenticated callback and its intent: 192 random
 * bits, compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_BYTES = 24;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export function newCallbackToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Cheap shape check before any lookup: anything else is not one of ours. */
export function looksLikeToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
