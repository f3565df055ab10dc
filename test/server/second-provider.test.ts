/**
 * A second provider is a second implementation of the payments port (src/port/port.ts), and
 * nothing above it changes: the reward and entry-fee kinds, the engine, the callbacks and the
 * ledger run here over a small in-memory provider written below, with no service, no HTTP and
 * no emulator. The provider keeps its codes and takes claims and payments as a wallet would make
 * them; the test asserts what the game would see: the intents' codes and their ends.
 */
import assert from 'node:assert/strict';
import type { Intent } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type {
  ClaimCode,
  ClaimCodeOrder,
  PayCode,
  PayCodeOrder,
  PaymentsPort,
  ServiceFailure,
} from '../../src/port/port.js';
import type { Engine } from '../../src/server/engine.js';
import { SafeEmitter } from '../../src/server/events.js';
import { startEntryFee } from '../../src/server/kinds/entry-fee.js';
import { startReward } from '../../src/server/kinds/reward.js';
import { resolveOptions } from '../../src/server/options.js';
import { buildEngine } from '../../src/server/runtime.js';

/** This provider's refusal of an order: it answered, and did nothing. */
class Refused extends Error {}

/**
 * Claim codes and pay codes in memory. It offers nothing else: every other call of the port
 * rejects, as a provider that does not offer it would.
 */
class MemoryProvider implements PaymentsPort {
  readonly claims = new Map<string, ClaimCode & { amountMsat: string }>();
  readonly payCodes = new Map<string, PayCode & { amountMsat: string }>();
  /** Orders above this are refused. */
  maxMsat = 1_000_000n;
  #next = 0;

  async makeClaimCode(order: ClaimCodeOrder): Promise<ClaimCode> {
    if (BigInt(order.amountMsat) > this.maxMsat) throw new Refused('more than this provider pays');
    const id = `claim-${++this.#next}`;
    const claim = {
      id,
      code: `memory:${id}`,
      uri: null,
      expiresAt: null,
      callbackUrl: order.callbackUrl,
      state: 'open' as const,
      said: 'claim open',
      amountMsat: order.amountMsat,
    };
    this.claims.set(id, claim);
    return { ...claim };
  }

  async readClaimCode(id: string): Promise<ClaimCode> {
    const claim = this.claims.get(id);
    if (!claim) throw new Refused(`no claim ${id}`);
    return { ...claim };
  }

  async makePayCode(order: PayCodeOrder): Promise<PayCode> {
    const id = `pay-${++this.#next}`;
    const code = {
      id,
      code: `memory:${id}`,
      uri: null,
      callbackUrl: order.callbackUrl,
      payments: 0,
      closed: false,
      madeAt: null,
      said: 'pay code open',
      amountMsat: order.amountMsat,
    };
    this.payCodes.set(id, code);
    return { ...code };
  }

  async readPayCode(id: string): Promise<PayCode> {
    const code = this.payCodes.get(id);
    if (!code) throw new Refused(`no pay code ${id}`);
    return { ...code };
  }

  async closePayCode(code: PayCode): Promise<PayCode> {
    const held = this.payCodes.get(code.id);
    if (!held) throw new Refused(`no pay code ${code.id}`);
    held.closed = true;
    return { ...held };
  }

  /** A player's wallet claims a code: the callback URL it carries is what the provider calls. */
  claim(id: string): string {
    const claim = this.claims.get(id);
    assert.ok(claim && claim.state === 'open' && claim.callbackUrl);
    claim.state = 'claimed';
    return claim.callbackUrl;
  }

  /** A player's wallet pays a code. */
  pay(id: string): string {
    const code = this.payCodes.get(id);
    assert.ok(code && !code.closed && code.callbackUrl);
    code.payments += 1;
    code.closed = true;
    return code.callbackUrl;
  }

  failureOf(err: unknown): ServiceFailure {
    return {
      meaning: err instanceof Refused ? 'refused' : 'other',
      serverError: false,
      slowDown: false,
    };
  }

  payAddress = offered;
  readAddressPayment = offered;
  checkAddress = offered;
  spendPoints = offered;
  readWallet = offered;
  callbackSources = offered;
  regionOf = offered;
  btcUsd = offered;
  makeWidgetUser = offered;
  openWidget = offered;
  openPurchase = offered;
  acceptDisclosures = offered;
  updateEmail = offered;
}

async function offered(): Promise<never> {
  throw new Refused('this provider offers claim codes and pay codes only');
}

describe('a second provider: the kinds over an in-memory implementation of the port', () => {
  let ledger: SqliteLedger;
  let provider: MemoryProvider;
  let engine: Engine;
  let moved: Intent[];

  beforeEach(() => {
    moved = [];
    provider = new MemoryProvider();
    ledger = new SqliteLedger();
    const settings = resolveOptions({
      publicUrl: 'http://127.0.0.1:9',
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    });
    const built = buildEngine(
      { port: provider, ledger, outbound: null },
      settings,
      new SafeEmitter(() => settings.logger),
    );
    engine = built.engine;
    built.moves.subscribe((move) => {
      if (move.what === 'moved') moved.push(move.intent);
    });
  });

  afterEach(() => ledger.close());

  /** The provider calls the URL a code carries: the engine's callback route takes its token. */
  const callBack = async (url: string) =>
    (await engine.handleCallback(url.slice(url.lastIndexOf('/') + 1), Buffer.from('{}'))).status;

  it("a reward shows the provider's claim code, and ends completed once the player claims it", async () => {
    const reward = await startReward(engine, {
      playerId: 'alice',
      roomId: 'room-1',
      amountMsat: '21000',
      description: 'first place',
      expiresIn: 600,
    });
    assert.equal(reward.status, 'pending');
    const [claim] = [...provider.claims.values()];
    assert.ok(claim);
    assert.equal(reward.code, claim.code);
    assert.equal(claim.amountMsat, '21000');

    assert.equal(await callBack(provider.claim(claim.id)), 200);
    assert.equal((await ledger.get(reward.id))?.status, 'completed');
  });

  it("a reward the provider refuses ends failed, with the provider's own reason", async () => {
    await assert.rejects(
      startReward(engine, {
        playerId: 'bob',
        roomId: 'room-1',
        amountMsat: '5000000',
        description: 'too much',
        expiresIn: 600,
      }),
      Refused,
    );
    const failed = await ledger.get(moved.at(-1)?.id ?? '');
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.error, 'more than this provider pays');
    assert.equal(provider.claims.size, 0);
  });

  it('an entry fee is paid through the pay code and settles once', async () => {
    const fee = await startEntryFee(engine, {
      playerId: 'carol',
      roomId: 'room-1',
      amountMsat: '1000',
      description: 'entry',
      expiresIn: 600,
    });
    const code = provider.payCodes.get(fee.remoteId ?? '');
    assert.ok(code);
    assert.equal(fee.code, code.code);

    const url = provider.pay(code.id);
    assert.equal(await callBack(url), 200);
    assert.equal(await callBack(url), 200);
    const paid = await ledger.get(fee.id);
    assert.equal(paid?.status, 'completed');
    assert.equal(paid?.history.filter((h) => h.to === 'completed').length, 1);
  });
});
