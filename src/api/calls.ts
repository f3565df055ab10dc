/**
 * The send step, for input already parsed: the engine's port calls it, and `PaymentsApi`'s
 * calls parse what a game hands them, then call it. Each operation is a row of operations.ts;
 * answers are always validated (transport.ts); an id is checked where it goes into a path,
 * since it may come from a callback's body. Every call is `async`: a bad argument rejects.
 */
import type { z } from 'zod';
import { parseInput } from '../parse.js';
import type { PointTransfer } from './answers.js';
import type {
  DepleteBody,
  Limits,
  LnAddressPaymentBody,
  PaymentBody,
  RampSessionBody,
  StaticChargeBody,
  StaticChargeUpdateBody,
  UpdateEmailBody,
  WidgetSessionBody,
  WidgetUserBody,
  WithdrawalRequestBody,
} from './inputs.js';
import { pathId } from './inputs.js';
import { OPERATIONS, type OperationName, type Operations, type PathTable } from './operations.js';
import type { Transport } from './transport.js';

/** A transfer, with the idempotency key it was made under (generated when not given). */
export type DepleteResult = PointTransfer & { idempotencyKey: string };

/** What each writing operation sends, as its input schema returns it. */
interface Bodies {
  'payments.send': PaymentBody;
  'lnAddress.sendPayment': LnAddressPaymentBody;
  'withdrawalRequests.create': WithdrawalRequestBody;
  'staticCharges.create': StaticChargeBody;
  'staticCharges.update': StaticChargeUpdateBody;
  'widgetUsers.create': WidgetUserBody;
  'widgetUsers.deplete': DepleteBody;
  'widgetUsers.update': UpdateEmailBody;
  'widgetUsers.acceptDisclosures': { acceptedDisclosureTypeIds: readonly number[] };
  'widgetSessions.create': WidgetSessionBody;
  'ramp.createSession': RampSessionBody;
}

/** The path's `{id}` (named `userId` in errors on the widget users' paths), body and limits. */
export type SendArgs<N extends OperationName> = (N extends keyof Bodies
  ? { body: Bodies[N] }
  : { body?: undefined }) & { id?: string; userId?: string; limits?: Limits };

export type Answer<N extends OperationName> = z.output<Operations[N]['data']>;

export class ServiceCalls {
  constructor(
    private readonly transport: Transport,
    private readonly paths: PathTable,
  ) {}

  async send<N extends OperationName>(name: N, args: SendArgs<N>): Promise<Answer<N>> {
    const op = OPERATIONS[name];
    let path = this.paths[op.pathName];
    const [field, id] = args.userId === undefined ? ['id', args.id] : ['userId', args.userId];
    if (id !== undefined)
      path = path.replace('{id}', encodeURIComponent(parseInput(pathId, id, field)));
    const key = op.safety === 'keyed' ? (args.body as DepleteBody).idempotency_key : undefined;
    return this.transport.send({
      operation: name,
      method: op.method,
      path,
      body: args.body,
      safety: op.safety,
      priority: op.priority,
      ...(key === undefined ? {} : { idempotencyKey: key }),
      data: op.data as z.ZodType,
      ...args.limits,
    }) as Promise<Answer<N>>;
  }
}
