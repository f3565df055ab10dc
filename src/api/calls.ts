/**
 * The service's send steps, one namespace per resource, for input already parsed: the engine
 * calls these, and `PaymentsApi`'s calls parse what a game hands them, then call these.
 * Answers are always validated (transport.ts); an id is checked where it goes into a path,
 * since it may come from a callback's body. Every call is `async`: a bad argument rejects.
 */
import type { z } from 'zod';
import { parseInput } from '../parse.js';
import {
  type BtcUsdPrice,
  btcUsdPrice,
  type DisclosureAcceptance,
  disclosureAcceptance,
  type LnAddressValidation,
  lnAddressValidation,
  type Payment,
  type PointTransfer,
  type ProdIps,
  payment,
  pointTransfer,
  prodIps,
  type RampSessionAnswer,
  type RegionSupport,
  rampSession,
  regionSupport,
  type StaticCharge,
  staticCharge,
  type Wallet,
  type WidgetSessionAnswer,
  type WidgetUser,
  type WithdrawalRequest,
  wallet,
  widgetSession,
  widgetUser,
  withdrawalRequest,
} from './answers.js';
import {
  type DepleteBody,
  type Limits,
  type LnAddressPaymentBody,
  type PaymentBody,
  type RampSessionBody,
  resourceIdInput,
  type StaticChargeBody,
  type StaticChargeUpdateBody,
  type UpdateEmailBody,
  userIdInput,
  type WidgetSessionBody,
  type WidgetUserBody,
  type WithdrawalRequestBody,
} from './inputs.js';
import { fillPath, type PathTable } from './paths.js';
import type { Transport } from './transport.js';

/** A transfer, with the idempotency key it was made under (generated when not given). */
export type DepleteResult = PointTransfer & { idempotencyKey: string };

/** The send steps, for input already parsed. */
export class ServiceCalls {
  constructor(
    private readonly transport: Transport,
    private readonly paths: PathTable,
  ) {}

  readonly wallet = {
    /** The wallet; `balance` is in satoshis. Also the cheapest way to test a key. */
    get: async (): Promise<Wallet> => this.#read('wallet.get', this.paths.wallet, wallet),
  };
  readonly payments = {
    send: async (body: PaymentBody): Promise<Payment> =>
      this.#write('payments.send', 'POST', this.paths.paymentsSend, body, payment),
    get: async (id: string): Promise<Payment> =>
      this.#read('payments.get', this.#at(this.paths.paymentsGet, id), payment),
  };
  readonly lnAddress = {
    sendPayment: async (body: LnAddressPaymentBody): Promise<Payment> =>
      this.#write('lnAddress.sendPayment', 'POST', this.paths.lnAddressSendPayment, body, payment),
    /** `address` as the `lnAddress` schema returns it (lower case, one path segment). */
    validate: async (address: string, limits: Limits = {}): Promise<LnAddressValidation> =>
      this.#read(
        'lnAddress.validate',
        fillPath(this.paths.lnAddressValidate, address),
        lnAddressValidation,
        limits,
      ),
  };
  readonly withdrawalRequests = {
    create: async (body: WithdrawalRequestBody): Promise<WithdrawalRequest> =>
      this.#write(
        'withdrawalRequests.create',
        'POST',
        this.paths.withdrawalRequestsCreate,
        body,
        withdrawalRequest,
      ),
    get: async (id: string): Promise<WithdrawalRequest> =>
      this.#read(
        'withdrawalRequests.get',
        this.#at(this.paths.withdrawalRequestsGet, id),
        withdrawalRequest,
      ),
  };
  readonly staticCharges = {
    create: async (body: StaticChargeBody): Promise<StaticCharge> =>
      this.#write(
        'staticCharges.create',
        'POST',
        this.paths.staticChargesCreate,
        body,
        staticCharge,
      ),
    get: async (id: string): Promise<StaticCharge> =>
      this.#read('staticCharges.get', this.#at(this.paths.staticChargesGet, id), staticCharge),
    update: async (id: string, body: StaticChargeUpdateBody): Promise<StaticCharge> =>
      this.#write(
        'staticCharges.update',
        'PATCH',
        this.#at(this.paths.staticChargesUpdate, id),
        body,
        staticCharge,
      ),
  };
  readonly widgetUsers = {
    create: async (body: WidgetUserBody): Promise<WidgetUser> =>
      this.#write('widgetUsers.create', 'POST', this.paths.widgetUsersCreate, body, widgetUser),
    deplete: async (body: DepleteBody): Promise<DepleteResult> => {
      const transfer = await this.transport.send({
        operation: 'widgetUsers.deplete',
        method: 'POST',
        path: this.paths.widgetUsersDeplete,
        body,
        safety: 'keyed',
        idempotencyKey: body.idempotency_key,
        data: pointTransfer,
      });
      return { ...transfer, idempotencyKey: body.idempotency_key };
    },
    update: async (userId: string, body: UpdateEmailBody): Promise<WidgetUser> =>
      this.#write(
        'widgetUsers.update',
        'PATCH',
        this.#at(this.paths.widgetUsersUpdate, userId, 'userId'),
        body,
        widgetUser,
      ),
    /** `typeIds` as `disclosureTypeIdsInput` returns them (known types, each once). */
    acceptDisclosures: async (
      userId: string,
      typeIds: readonly number[],
    ): Promise<DisclosureAcceptance> =>
      this.#write(
        'widgetUsers.acceptDisclosures',
        'POST',
        this.#at(this.paths.widgetUsersDisclosures, userId, 'userId'),
        { acceptedDisclosureTypeIds: typeIds },
        disclosureAcceptance,
      ),
  };
  readonly widgetSessions = {
    create: async (body: WidgetSessionBody): Promise<WidgetSessionAnswer> =>
      this.#write(
        'widgetSessions.create',
        'POST',
        this.paths.widgetSessionsCreate,
        body,
        widgetSession,
      ),
  };
  readonly ramp = {
    createSession: async (body: RampSessionBody): Promise<RampSessionAnswer> =>
      this.#write('ramp.createSession', 'POST', this.paths.rampSessionsCreate, body, rampSession),
  };
  readonly utility = {
    prodIps: async (): Promise<ProdIps> =>
      this.#read('utility.prodIps', this.paths.prodIps, prodIps),
    /** `ip` as node's `isIP` accepts it. */
    isSupportedRegion: async (ip: string): Promise<RegionSupport> =>
      this.#read(
        'utility.isSupportedRegion',
        fillPath(this.paths.isSupportedRegion, ip),
        regionSupport,
      ),
    btcUsd: async (): Promise<BtcUsdPrice> =>
      this.#read('utility.btcUsd', this.paths.btcUsd, btcUsdPrice),
  };

  #read<S extends z.ZodType>(operation: string, path: string, data: S, limits: Limits = {}) {
    return this.transport.send({ operation, method: 'GET', path, safety: 'read', data, ...limits });
  }

  #write<S extends z.ZodType>(
    operation: string,
    method: 'POST' | 'PATCH',
    path: string,
    body: unknown,
    data: S,
  ) {
    return this.transport.send({ operation, method, path, body, safety: 'unkeyed', data });
  }

  #at(template: string, id: string, field: 'id' | 'userId' = 'id'): string {
    return fillPath(
      template,
      parseInput(field === 'id' ? resourceIdInput : userIdInput, id, field),
    );
  }
}
