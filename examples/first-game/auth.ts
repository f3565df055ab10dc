/**
 * Who a player is. The game's login route hands each player a token signed with a server
 * secret; rooms verify it in onAuth and never trust an id a client merely claims.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const secret = process.env.AUTH_SECRET ?? randomBytes(32).toString('hex');
const sign = (playerId: string) => createHmac('sha256', secret).update(playerId).digest();

export function issueToken(playerId: string): string {
  return `${Buffer.from(playerId).toString('base64url')}.${sign(playerId).toString('base64url')}`;
}

export function verifyToken(token: string): string {
  const [id = '', mac = ''] = token.split('.');
  const playerId = Buffer.from(id, 'base64url').toString();
  const given = Buffer.from(mac, 'base64url');
  const expected = sign(playerId);
  if (playerId === '' || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new Error('not signed in');
  }
  return playerId;
}
