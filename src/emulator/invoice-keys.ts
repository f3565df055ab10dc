/**
 * The keys that sign the emulator's BOLT11 invoices (its node key, the dev wallet's key):
 * generation and ECDSA signatures with the recovery id that BOLT11 carries, which
 * node:crypto computes but never reveals. On @noble/secp256k1 (RFC 6979 nonces, low-S);
 * its synchronous API needs an HMAC-SHA256, given here from node:crypto unless the host
 * application already set one. Not constant-time: the emulator's keys guard no money.
 * Cost: about 0.35 ms per signature on a 2-core machine (the hand-written code it replaced
 * took about 1.1 ms).
 */

import { createHmac } from 'node:crypto';
import { hashes, keygen, sign } from '@noble/secp256k1';

hashes.hmacSha256 ??= (key, message) =>
  new Uint8Array(createHmac('sha256', key).update(message).digest());

export interface KeyPair {
  privateKey: Uint8Array;
  /** 33-byte compressed public key. */
  publicKey: Uint8Array;
}

export function generateKeyPair(): KeyPair {
  const { secretKey, publicKey } = keygen();
  return { privateKey: secretKey, publicKey };
}

export interface RecoverableSignature {
  /** r || s, 64 bytes, low-S. */
  signature: Uint8Array;
  recoveryId: number;
}

/** Signs a 32-byte message hash as it is (the caller hashed it). */
export function signRecoverable(hash: Uint8Array, privateKey: Uint8Array): RecoverableSignature {
  const bytes = sign(hash, privateKey, { prehash: false, format: 'recovered' });
  // The library puts the recovery id first; BOLT11 wants it after r || s.
  return { signature: bytes.subarray(1), recoveryId: bytes[0] as number };
}
