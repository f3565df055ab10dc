/**
 * Lightning addresses of test players. Every `<name>@emulator.test` is a valid address (LUD-16
 * names: a-z 0-9 . _ + -) unless the control says otherwise (`setLnAddress`); an address on any
 * other domain does not resolve, as it would not for a service that cannot reach it. A payment
 * to an address is a payment like `POST /v0/payments` (payments.ts): the wallet is debited, the
 * payment is recorded with its address and comment, completes (or fails, for an address set
 * to `failPayments`, and the wallet is refunded) and is POSTed to its callbackUrl.
 * `control.lnAddressPayments(address)` lists what an address received.
 */

import { z } from 'zod';
import type { EmulatorCore } from './core.js';
import { type Ctx, type Reply, v0Error, v0Ok } from './http.js';
import { INSUFFICIENT_BALANCE, paymentView, startPayment } from './payments.js';
import type { LnAddressRule } from './store.js';
import { httpUrl, msatString, parse } from './validation.js';

/** The domain of the test players' Lightning addresses: `alice@emulator.test`. */
export const LN_ADDRESS_DOMAIN = 'emulator.test';

/** The smallest payment an address takes (LUD-06 `minSendable`): one satoshi. */
const MIN_SENDABLE_MSAT = 1_000;
/** The largest (`maxSendable`): 1,000,000 sats. */
const MAX_SENDABLE_MSAT = 1_000_000_000;
/** LUD-12: how long a comment the test players' wallets accept. */
const COMMENT_ALLOWED = 255;

const ADDRESS = /^([a-z0-9._+-]{1,64})@([a-z0-9.-]{1,253})$/;

const sendBody = z.looseObject({
  lnAddress: z.string({ error: 'is required' }).min(1).max(320),
  amount: msatString,
  comment: z.string().max(COMMENT_ALLOWED).nullish(),
  internalId: z.string().max(255).nullish(),
  callbackUrl: httpUrl.nullish(),
});

/** The address in lower case when it is one the emulator can pay, else null. */
function resolve(
  core: EmulatorCore,
  address: string,
): { address: string; rule: LnAddressRule } | null {
  const lower = address.toLowerCase();
  const match = ADDRESS.exec(lower);
  if (!match || match[2] !== LN_ADDRESS_DOMAIN) return null;
  const rule = core.lnAddresses.get(lower) ?? {};
  if (rule.valid === false) return null;
  return { address: lower, rule };
}

export function sendToLnAddress({ core, project, body }: Ctx): Reply {
  const input = parse(sendBody, body);
  const target = resolve(core, input.lnAddress);
  if (!target) return v0Error(400, `Could not resolve Lightning Address ${input.lnAddress}.`);
  const amountMsat = Number(input.amount);
  if (amountMsat < MIN_SENDABLE_MSAT || amountMsat > MAX_SENDABLE_MSAT) {
    return v0Error(
      400,
      `amount must be between ${MIN_SENDABLE_MSAT} and ${MAX_SENDABLE_MSAT} msats for this Lightning Address`,
    );
  }
  if (project.walletMsat < amountMsat) return v0Error(400, INSUFFICIENT_BALANCE);
  const comment = input.comment ?? null;
  const payment = startPayment(core, project, {
    amountMsat,
    description: comment ?? '',
    internalId: input.internalId ?? null,
    callbackUrl: input.callbackUrl ?? null,
    extra: { lnAddress: target.address, comment },
    lnAddress: target.address,
    fails: target.rule.failPayments === true,
  });
  return v0Ok(paymentView(payment), 'Payment to Lightning Address initiated successfully.');
}

export function validateLnAddress({ core, id: address }: Ctx): Reply {
  const target = resolve(core, address);
  if (!target) return v0Ok({ valid: false }, 'Lightning Address is not valid.');
  return v0Ok(
    {
      valid: true,
      metadata: {
        tag: 'payRequest',
        minSendable: MIN_SENDABLE_MSAT,
        maxSendable: MAX_SENDABLE_MSAT,
        commentAllowed: COMMENT_ALLOWED,
        metadata: JSON.stringify([
          ['text/plain', `Pay ${target.address}`],
          ['text/identifier', target.address],
        ]),
      },
    },
    'Lightning Address is valid.',
  );
}
