/**
 * The game's own values, one definition each: an amount of msats (decimal strings of positive
 * integers: a float, a negative, a zero or a stray character is refused, never guessed at) and
 * a Lightning address.
 */
import { z } from 'zod';

/** 21 million bitcoin in millisatoshis: no amount can be larger. */
export const MAX_MSAT = 2_100_000_000_000_000_000n;

/** A positive whole number of millisatoshis, given as bigint, number or string; sent as text. */
export const msat = z
  .union([z.bigint(), z.number(), z.string()], {
    error: 'must be a whole number of millisatoshis (bigint, integer or digit string)',
  })
  .transform((value, ctx) => {
    let n: bigint;
    if (typeof value === 'bigint') {
      n = value;
    } else if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) {
        ctx.addIssue({ code: 'custom', message: 'must be a whole, safe integer of millisatoshis' });
        return z.NEVER;
      }
      n = BigInt(value);
    } else {
      if (!/^\d+$/.test(value)) {
        ctx.addIssue({ code: 'custom', message: 'must be a string of digits (millisatoshis)' });
        return z.NEVER;
      }
      n = BigInt(value);
    }
    if (n <= 0n) {
      ctx.addIssue({ code: 'custom', message: 'must be greater than zero' });
      return z.NEVER;
    }
    if (n > MAX_MSAT) {
      ctx.addIssue({ code: 'custom', message: 'is larger than all the bitcoin there is' });
      return z.NEVER;
    }
    return n.toString();
  });

export type MsatInput = bigint | number | string;

/** A Lightning address (LUD-16, `name@domain`, ASCII); either case is accepted, sent lower. */
export const lnAddress = z
  .string({ error: 'must be a Lightning address (name@domain)' })
  .max(320, 'must be at most 320 characters')
  .regex(
    /^[a-z0-9._+-]{1,64}@(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])$/i,
    'must be a Lightning address: name@domain, the name of a-z 0-9 . _ + - only',
  )
  .transform((address) => address.toLowerCase());
