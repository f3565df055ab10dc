/**
 * The transport behind a gate (issue 26): every attempt asks the gate first, with the call's
 * priority from the one table; a 429 is told to the gate and waited out there without spending
 * the call's attempts; a wait past the client's cap ends the call and holds the others for the
 * cap only.
 */
import { expect } from 'chai';
import { paymentsService } from '../../src/api/client.js';
import { AmbiguousResultError, RateLimitError } from '../../src/api/errors.js';
import { type CallPriority, OPERATIONS, type OutboundGate } from '../../src/api/operations.js';
import { ConfigurationError } from '../../src/errors.js';
import { useEmulator } from '../support/emulator.js';

class RecordingGate implements OutboundGate {
  readonly asked: CallPriority[] = [];
  readonly holds: number[] = [];
  async acquire(priority: CallPriority): Promise<void> {
    this.asked.push(priority);
  }
  async limited(waitMs: number): Promise<void> {
    this.holds.push(waitMs);
  }
}

const REQUESTS = '/v0/withdrawal-requests';

describe('api: the transport behind an outbound gate', () => {
  const box = useEmulator();
  const service = (gate: OutboundGate, maxRetries = 0) =>
    paymentsService(
      {
        apiKey: box.emu.apiKey,
        baseUrl: box.emu.url,
        maxRetries,
        retry: { maxRetryAfterMs: 2_000 },
      },
      gate,
    );

  it('asks the gate before each attempt, with the priority of the call', async () => {
    const gate = new RecordingGate();
    const { api, calls } = service(gate);
    try {
      const made = await calls.send('withdrawalRequests.create', {
        body: { amount: '20000', description: 'x' },
      });
      await calls.send('withdrawalRequests.get', { id: made.id });
      await api.wallet.get();
      expect(gate.asked).to.deep.equal(['payout', 'read', 'payout']);
    } finally {
      await api.close();
    }
  });

  it('waits a 429 out at the gate without spending an attempt: one is enough', async () => {
    box.emu.control.faults.add({
      method: 'POST',
      path: REQUESTS,
      status: 429,
      retryAfter: 0,
      times: 2,
    });
    const gate = new RecordingGate();
    const { api, calls } = service(gate, 0);
    try {
      const made = await calls.send('withdrawalRequests.create', {
        body: { amount: '20000', description: 'x' },
      });
      expect(made.id).to.be.a('string');
      expect(gate.holds).to.deep.equal([0, 0]);
      expect(gate.asked).to.have.length(3);
      expect(box.emu.control.count('POST', REQUESTS)).to.equal(3);
    } finally {
      await api.close();
    }
  });

  it('ends a call whose Retry-After passes the cap, and holds the others for the cap only', async () => {
    box.emu.control.faults.add({ method: 'POST', path: REQUESTS, status: 429, retryAfter: 60 });
    const gate = new RecordingGate();
    const { api, calls } = service(gate, 2);
    try {
      const err = await calls
        .send('withdrawalRequests.create', { body: { amount: '20000', description: 'x' } })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RateLimitError);
      expect(gate.holds).to.deep.equal([2_000]);
      expect(box.emu.control.count('POST', REQUESTS)).to.equal(1);
    } finally {
      await api.close();
    }
  });

  it('a keyed call closed while waiting to send again stays ambiguous, never "nothing was sent"', async () => {
    const user = box.emu.control.createUser({ email: 'p@example.com' });
    box.emu.control.faults.add({
      method: 'POST',
      path: '/api/v1/widget/users/deplete',
      status: 503,
      times: 1,
    });
    let asked = 0;
    const closing: OutboundGate = {
      acquire: async () => {
        asked++;
        if (asked > 1) throw new ConfigurationError('PaymentsApi', 'is closed; nothing was sent');
      },
      limited: async () => {},
    };
    const { api } = service(closing, 2);
    try {
      const err = await api.widgetUsers
        .deplete({ user_id: user, amount: 1 })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AmbiguousResultError);
      expect(asked).to.equal(2);
    } finally {
      await api.close();
    }
  });

  it('reads the priority from the one table of operations', () => {
    const priority = (name: keyof typeof OPERATIONS) => OPERATIONS[name].priority;
    expect(priority('staticCharges.create')).to.equal('player');
    expect(priority('widgetUsers.deplete')).to.equal('player');
    expect(priority('withdrawalRequests.create')).to.equal('payout');
    expect(priority('lnAddress.sendPayment')).to.equal('payout');
    expect(priority('payments.get')).to.equal('read');
  });
});
