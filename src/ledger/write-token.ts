/**
 * A write's own token, stored with the intent by PostgreSQL (`last_call`). A write whose answer
 * a dropped connection lost, or that the client sent again, finds its own token there and knows
 * that its first run won, so the process that made a move still announces it. 72 random bits:
 * never shared by two writes of one intent.
 */
import { randomBytes } from 'node:crypto';

export function writeToken(): string {
  return randomBytes(9).toString('base64url');
}
