/**
 * The region gate's targets (issue 22): whatever a client puts in its headers, the gate never
 * takes an address from it that `clientAddress` does not name.
 *
 *   region gate: headers at join      real joins to a gated room (router, no proxy), each with
 *                                     forged forwarding headers, then a charge: refused
 *                                     (RegionRefusedError: this machine's region is refused, or
 *                                     no address the gate trusts), nothing asked or sent
 *   region gate: client address       ClientAddresses.of over random settings, headers and
 *                                     peers: null or an address the request carried where the
 *                                     settings say to read it, never a throw
 *   region gate: upgrade URLs         ConnectionAddresses.upgrade over random URLs: a room hears
 *                                     only a session of its own, with a short id, never a throw
 *
 * Cost: a websocket join and leave per input for the first; the other two are pure.
 */
import { isIP } from 'node:net';
import { ColyseusSDK } from '@colyseus/sdk';
import fc from 'fast-check';
import { RegionRefusedError } from '../../src/errors.js';
import {
  ClientAddresses,
  ConnectionAddresses,
  PRIVATE_NETWORKS,
} from '../../src/server/client-address.js';
import type { FuzzEnvironment } from '../environment.js';
import { describe, type Target } from '../harness.js';

/** Printable ASCII: what a header value may hold. */
const headerChar = fc.mapToConstant({
  num: 0x7e - 0x20 + 1,
  build: (i) => String.fromCharCode(0x20 + i),
});
const tokenChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'.split(''));

const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6();
/** Address-like strings, as a client or a proxy might write them. */
const addressLike = fc.oneof(
  ipv4,
  ipv6,
  ipv4.map((a) => `::ffff:${a}`),
  ipv4.map((a) => `${a}:${Math.floor(a.length * 997) % 65536}`),
  ipv6.map((a) => `[${a}]:443`),
  fc.constantFrom('127.0.0.1', '::1', '8.8.8.8', 'unknown', '_hidden', 'for=8.8.8.8', ''),
);
const headerValue = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(addressLike, { minLength: 1, maxLength: 6 }).map((a) => a.join(', ')),
  },
  { weight: 2, arbitrary: fc.string({ unit: headerChar, maxLength: 200 }) },
  { weight: 1, arbitrary: fc.string({ unit: headerChar, minLength: 2_000, maxLength: 3_000 }) },
);
const FORWARDING = [
  'x-forwarded-for',
  'x-real-ip',
  'x-client-ip',
  'forwarded',
  'cf-connecting-ip',
  'true-client-ip',
  'x-cluster-client-ip',
];
const headerName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FORWARDING) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }).map((n) => `x-${n}`),
  },
);
/** Header values are trimmed by HTTP: leading and trailing blanks never reach the server. */
const headers = fc
  .dictionary(headerName, headerValue, { maxKeys: 5 })
  .map((h) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, v.trim()])));

export function regionTargets(env: FuzzEnvironment): Target[] {
  return [joinTarget(env), addressTarget(), upgradeTarget()];
}

function joinTarget(env: FuzzEnvironment): Target<Record<string, string>> {
  const room = env.gated;
  const url = `ws://127.0.0.1:${env.game.port}`;
  return {
    name: 'region gate: headers at join',
    inputs: headers,
    async attempt(input) {
      let sdkRoom: Awaited<ReturnType<ColyseusSDK['joinById']>>;
      try {
        sdkRoom = await new ColyseusSDK(url, { headers: input }).joinById(room.roomId, {
          playerId: 'fuzz',
        });
      } catch {
        return { label: 'join refused' }; // a header the transport would not carry
      }
      try {
        const client = room.clients.get(sdkRoom.sessionId);
        if (!client) return { problem: 'joined, but not in the room' };
        const result = await room.plugins.lightning
          .chargeEntryFee(client, { amountMsat: 21_000, description: 'fuzz' })
          .then(
            () => 'accepted' as const,
            (err: unknown) => err,
          );
        if (result === 'accepted') return { problem: 'charged a player of a refused region' };
        if (!(result instanceof RegionRefusedError)) {
          return { problem: `rejected with ${describe(result)}` };
        }
        return { label: result.country === null ? 'refused: no trusted address' : 'refused: XX' };
      } finally {
        await sdkRoom.leave().catch(() => {});
      }
    },
  };
}

interface AddressInput {
  proxies: number;
  header: string | undefined;
  strangers: boolean;
  headers: Record<string, string>;
  peer: string | null;
}

function addressTarget(): Target<AddressInput> {
  const peer = fc.oneof(
    fc.constant(null),
    addressLike,
    fc.string({ unit: headerChar, maxLength: 80 }),
  );
  return {
    name: 'region gate: client address',
    inputs: fc.record({
      proxies: fc.integer({ min: 0, max: 3 }),
      header: fc.option(fc.constantFrom(...FORWARDING.filter((h) => h !== 'x-forwarded-for')), {
        nil: undefined,
      }),
      strangers: fc.boolean(),
      headers,
      peer,
    }),
    async attempt(input) {
      const header = input.proxies > 0 ? input.header : undefined;
      // The proxies connect from the private networks, or only from 203.0.113.0/24.
      const proxyAddresses = input.strangers ? ['203.0.113.0/24'] : PRIVATE_NETWORKS;
      const addresses = new ClientAddresses({ proxies: input.proxies, header, proxyAddresses });
      const reader = new Headers();
      for (const [name, value] of Object.entries(input.headers)) reader.set(name, value);
      let address: string | null;
      try {
        address = addresses.of(reader, input.peer);
      } catch (err) {
        return { problem: `threw ${describe(err)}` };
      }
      if (address === null) return { label: 'no address' };
      if (isIP(address) === 0 || address.length > 45)
        return { problem: `not an address: ${address}` };
      if (input.proxies === 0) {
        if (input.peer === null || !input.peer.includes(address)) {
          return { problem: `with no proxy, ${address} is not the socket's` };
        }
        return { label: 'the socket' };
      }
      if (input.peer !== null && !addresses.isProxy(input.peer)) {
        return { problem: `${address} read through a socket that is no proxy (${input.peer})` };
      }
      const read = reader.get(header ?? 'x-forwarded-for') ?? '';
      if (!read.includes(address)) {
        return { problem: `${address} is not in ${header ?? 'x-forwarded-for'}` };
      }
      return { label: header === undefined ? 'X-Forwarded-For' : 'the named header' };
    },
  };
}

interface UpgradeInput {
  url: string;
  peer: string | null;
}

function upgradeTarget(): Target<UpgradeInput> {
  const ROOM = 'gatedRoom1';
  const sessionId = fc.oneof(
    fc.string({ unit: tokenChar, minLength: 1, maxLength: 12 }),
    fc.string({ unit: headerChar, maxLength: 100 }).map(encodeURIComponent),
  );
  const url = fc.oneof(
    fc
      .record({
        process: fc.string({ unit: tokenChar, maxLength: 12 }),
        room: fc.constantFrom(ROOM, 'otherRoom', '', '..', `${ROOM}/x`),
        sessionId,
        reconnect: fc.boolean(),
        extra: fc.string({ unit: headerChar, maxLength: 40 }).map(encodeURIComponent),
      })
      .map(
        (u) =>
          `/${u.process}/${u.room}?sessionId=${u.sessionId}&x=${u.extra}${
            u.reconnect ? '&reconnectionToken=abc' : ''
          }`,
      ),
    fc.string({ unit: headerChar, maxLength: 300 }),
    fc
      .string({ unit: headerChar, minLength: 2_000, maxLength: 3_000 })
      .map((s) => `/p/${ROOM}?${s}`),
  );
  return {
    name: 'region gate: upgrade URLs',
    inputs: fc.record({ url, peer: fc.oneof(fc.constant(null), addressLike) }),
    async attempt(input) {
      const connections = new ConnectionAddresses(
        new ClientAddresses({ proxies: 0, proxyAddresses: PRIVATE_NETWORKS }),
      );
      const heard: [string, string | null][] = [];
      connections.watch(ROOM, (id, address) => heard.push([id, address]));
      try {
        connections.upgrade(input.url, new Headers(), input.peer);
      } catch (err) {
        return { problem: `threw ${describe(err)}` };
      }
      if (heard.length === 0) return { label: 'ignored' };
      const [id, address] = heard[0] as [string, string | null];
      if (heard.length > 1) return { problem: 'heard twice' };
      const q = input.url.indexOf('?');
      const path = input.url.slice(0, q);
      if (!path.endsWith(`/${ROOM}`)) return { problem: `another room's upgrade: ${path}` };
      if (new URLSearchParams(input.url.slice(q + 1)).has('reconnectionToken')) {
        return { problem: 'a reconnection was noted' };
      }
      if (id.length === 0 || id.length > 64) return { problem: `session id of ${id.length}` };
      if (address !== null && isIP(address) === 0) return { problem: `not an address: ${address}` };
      return { label: 'noted' };
    },
  };
}
