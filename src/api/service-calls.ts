/**
 * The service's calls for input already parsed: the namespaces and methods of `PaymentsApi`,
 * each its send step alone. The server's engine makes its calls through these: what it sends
 * was parsed once, where it entered (a room helper, a method of `lightning`), and is not parsed
 * again here. What comes back is: every answer is validated (transport.ts), and an id is
 * checked where it goes into a path, since it may come from a callback's body.
 *
 * Not in the package's entry points: a game's own calls go through `PaymentsApi`, which parses
 * them. `paymentsService` (client.ts) makes the two over one transport. Costs nothing per call.
 */
import type { ApiContext } from './namespaces/context.js';
import { LnAddressSends } from './namespaces/ln-address.js';
import { PaymentSends } from './namespaces/payments.js';
import { RampSends, WidgetSessionSends } from './namespaces/sessions.js';
import { StaticChargeSends } from './namespaces/static-charges.js';
import { UtilitySends } from './namespaces/utility.js';
import { WalletCalls } from './namespaces/wallet.js';
import { WidgetUserSends } from './namespaces/widget-users.js';
import { WithdrawalRequestSends } from './namespaces/withdrawal-requests.js';

export class ServiceCalls {
  /** The wallet takes no input: the client's own calls. */
  readonly wallet: WalletCalls;
  readonly payments: PaymentSends;
  readonly lnAddress: LnAddressSends;
  readonly withdrawalRequests: WithdrawalRequestSends;
  readonly staticCharges: StaticChargeSends;
  readonly widgetUsers: WidgetUserSends;
  readonly widgetSessions: WidgetSessionSends;
  readonly ramp: RampSends;
  readonly utility: UtilitySends;

  constructor(ctx: ApiContext) {
    this.wallet = new WalletCalls(ctx);
    this.payments = new PaymentSends(ctx);
    this.lnAddress = new LnAddressSends(ctx);
    this.withdrawalRequests = new WithdrawalRequestSends(ctx);
    this.staticCharges = new StaticChargeSends(ctx);
    this.widgetUsers = new WidgetUserSends(ctx);
    this.widgetSessions = new WidgetSessionSends(ctx);
    this.ramp = new RampSends(ctx);
    this.utility = new UtilitySends(ctx);
  }
}
