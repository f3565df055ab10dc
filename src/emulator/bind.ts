/**
 * Where the emulator may listen and which URLs it may hand out: a loopback address unless the
 * caller says `allowRemote`, and only plain http(s) URLs. One definition, shared by
 * startEmulator, the CLI and createLightning's `emulator` options, so that the three refuse the
 * same things with the same words. Also the dev wallet's key check. Costs string checks only
 * (no DNS: a host name other than `localhost` counts as remote).
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Whether binding `host` keeps the port on this machine: 127.0.0.0/8, ::1 or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  const family = isIP(bare);
  if (family === 0) return false;
  return loopback.check(bare, family === 6 ? 'ipv6' : 'ipv4');
}

/** What a refused host is told, after its option's name. */
export function remoteHostProblem(host: string, remedy: string): string {
  return (
    `${JSON.stringify(host)} is not a loopback address: other machines could reach the ` +
    `emulator, over plain HTTP. ${remedy} to listen there anyway (development only; never on ` +
    'a machine the internet can reach)'
  );
}

/** Characters that would break a URL printed between quotes, or a line of the banner. */
const UNSAFE_IN_URL = /['"`\\\s<>]/;

/**
 * A plain http(s) URL: an origin and an optional path, no user name or password, no query, no
 * fragment. `javascript:`, `data:` and relative URLs are refused. The value is the URL as given,
 * without its trailing slashes.
 */
export const plainHttpUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .transform((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL (http://host:port)' });
      return z.NEVER;
    }
    const problem =
      url.protocol !== 'http:' && url.protocol !== 'https:'
        ? `must be an http(s) URL, not ${url.protocol}`
        : url.hostname === ''
          ? 'must name a host'
          : url.username !== '' || url.password !== ''
            ? 'must not carry a user name or password'
            : url.search !== '' || url.hash !== '' || text.includes('?') || text.includes('#')
              ? 'must not have a query or a fragment'
              : /\p{Cc}/u.test(text) || UNSAFE_IN_URL.test(text)
                ? 'must not hold quotes, backslashes, spaces, angle brackets or control characters'
                : undefined;
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return text.replace(/\/+$/, '');
  });

/** The header that carries the dev wallet's key on the `/_emulator/` control routes. */
export const CONTROL_KEY_HEADER = 'x-emulator-key';

/** Whether `given` is the key, in constant time (both sides hashed to one length first). */
export function isControlKey(given: string | string[] | undefined, key: string): boolean {
  if (typeof given !== 'string') return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(key));
}
