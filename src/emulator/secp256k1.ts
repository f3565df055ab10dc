/**
 * Just enough secp256k1 to sign BOLT11 invoices with a recoverable signature: key
 * generation, ECDSA signing (low-S, with recovery id) and verification, in BigInt
 * Jacobian arithmetic. node:crypto signs secp256k1 but never reveals the recovery id that
 * BOLT11 needs, hence this file. Not constant-time: the emulator's keys guard no money.
 * Cost: about one scalar multiplication (a few ms) per signature.
 */

import { createHash, randomBytes } from 'node:crypto';

const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const G: Point = [
  0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n,
  0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n,
  1n,
];

/** Jacobian coordinates; Z = 0 is the point at infinity. */
type Point = [bigint, bigint, bigint];

function mod(a: bigint, m = P): bigint {
  const r = a % m;
  return r >= 0n ? r : r + m;
}

function invert(a: bigint, m = P): bigint {
  let a0 = mod(a, m);
  let b = m;
  let x = 1n;
  let y = 0n;
  while (a0 !== 0n) {
    const q = b / a0;
    [b, a0] = [a0, b - q * a0];
    [y, x] = [x, y - q * x];
  }
  return mod(y, m);
}

function double([x, y, z]: Point): Point {
  if (y === 0n || z === 0n) return [0n, 1n, 0n];
  const yy = mod(y * y);
  const s = mod(4n * x * yy);
  const m = mod(3n * x * x);
  const x3 = mod(m * m - 2n * s);
  const y3 = mod(m * (s - x3) - 8n * yy * yy);
  return [x3, y3, mod(2n * y * z)];
}

function add(a: Point, b: Point): Point {
  if (a[2] === 0n) return b;
  if (b[2] === 0n) return a;
  const z1z1 = mod(a[2] * a[2]);
  const z2z2 = mod(b[2] * b[2]);
  const u1 = mod(a[0] * z2z2);
  const u2 = mod(b[0] * z1z1);
  const s1 = mod(a[1] * z2z2 * b[2]);
  const s2 = mod(b[1] * z1z1 * a[2]);
  if (u1 === u2) return s1 === s2 ? double(a) : [0n, 1n, 0n];
  const h = mod(u2 - u1);
  const r = mod(s2 - s1);
  const hh = mod(h * h);
  const hhh = mod(hh * h);
  const x3 = mod(r * r - hhh - 2n * u1 * hh);
  const y3 = mod(r * (u1 * hh - x3) - s1 * hhh);
  return [x3, y3, mod(h * a[2] * b[2])];
}

function multiply(point: Point, k: bigint): Point {
  let result: Point = [0n, 1n, 0n];
  let addend = point;
  for (let e = mod(k, N); e > 0n; e >>= 1n) {
    if (e & 1n) result = add(result, addend);
    addend = double(addend);
  }
  return result;
}

function affine([x, y, z]: Point): [bigint, bigint] {
  const zi = invert(z);
  const zi2 = mod(zi * zi);
  return [mod(x * zi2), mod(y * zi2 * zi)];
}

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}

function to32(n: bigint): Buffer {
  return Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
}

export interface KeyPair {
  privateKey: Buffer;
  /** 33-byte compressed public key. */
  publicKey: Buffer;
}

export function publicKeyOf(privateKey: Uint8Array): Buffer {
  const [x, y] = affine(multiply(G, toBigInt(privateKey)));
  return Buffer.concat([Buffer.from([y & 1n ? 3 : 2]), to32(x)]);
}

export function generateKeyPair(): KeyPair {
  for (;;) {
    const privateKey = randomBytes(32);
    const d = toBigInt(privateKey);
    if (d > 0n && d < N) return { privateKey, publicKey: publicKeyOf(privateKey) };
  }
}

export interface RecoverableSignature {
  /** r || s, 64 bytes, low-S. */
  signature: Buffer;
  recoveryId: number;
}

/** Signs a 32-byte message hash. */
export function sign(hash: Uint8Array, privateKey: Uint8Array): RecoverableSignature {
  const d = toBigInt(privateKey);
  const e = mod(toBigInt(hash), N);
  for (;;) {
    // Nonce from the key, the hash and fresh randomness: never reused across messages.
    const k = mod(
      toBigInt(
        createHash('sha256').update(privateKey).update(hash).update(randomBytes(32)).digest(),
      ),
      N,
    );
    if (k === 0n) continue;
    const [rx, ry] = affine(multiply(G, k));
    const r = mod(rx, N);
    if (r === 0n) continue;
    let s = mod(invert(k, N) * (e + r * d), N);
    if (s === 0n) continue;
    let recoveryId = Number(ry & 1n) | (rx >= N ? 2 : 0);
    if (s > N / 2n) {
      s = N - s;
      recoveryId ^= 1;
    }
    return { signature: Buffer.concat([to32(r), to32(s)]), recoveryId };
  }
}

function decompress(publicKey: Uint8Array): Point | null {
  if (publicKey.length !== 33 || (publicKey[0] !== 2 && publicKey[0] !== 3)) return null;
  const x = toBigInt(publicKey.subarray(1));
  const y = liftX(x, publicKey[0] === 3);
  return y === null ? null : [x, y, 1n];
}

function liftX(x: bigint, odd: boolean): bigint | null {
  if (x >= P) return null;
  const y2 = mod(x * x * x + 7n);
  let y = 1n;
  // P = 3 mod 4, so the square root is a power.
  for (let b = (P + 1n) / 4n, base = y2; b > 0n; b >>= 1n, base = mod(base * base)) {
    if (b & 1n) y = mod(y * base);
  }
  if (mod(y * y) !== y2) return null;
  return (y & 1n) === (odd ? 1n : 0n) ? y : P - y;
}

export function verify(hash: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  const q = decompress(publicKey);
  if (!q || signature.length !== 64) return false;
  const r = toBigInt(signature.subarray(0, 32));
  const s = toBigInt(signature.subarray(32));
  if (r <= 0n || r >= N || s <= 0n || s >= N) return false;
  const w = invert(s, N);
  const e = mod(toBigInt(hash), N);
  const point = add(multiply(G, mod(e * w, N)), multiply(q, mod(r * w, N)));
  if (point[2] === 0n) return false;
  return mod(affine(point)[0], N) === r;
}

/** The public key that produced a recoverable signature, compressed; null if none. */
export function recover(hash: Uint8Array, sig: RecoverableSignature): Buffer | null {
  const r = toBigInt(sig.signature.subarray(0, 32));
  const s = toBigInt(sig.signature.subarray(32));
  const x = sig.recoveryId & 2 ? r + N : r;
  const y = liftX(x, (sig.recoveryId & 1) === 1);
  if (y === null || r === 0n) return null;
  const e = mod(toBigInt(hash), N);
  const ri = invert(r, N);
  const q = add(multiply([x, y, 1n], mod(s * ri, N)), multiply(G, mod(-e * ri, N)));
  if (q[2] === 0n) return null;
  const [qx, qy] = affine(q);
  return Buffer.concat([Buffer.from([qy & 1n ? 3 : 2]), to32(qx)]);
}
