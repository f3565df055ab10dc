import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { call, useEmulator } from './helpers.js';

describe('emulator: widget users', () => {
  const t = useEmulator();

  async function newUser(email = 'ada@example.com', reference_id = 'player-ada') {
    const res = await call(t.emu, 'POST', '/api/v1/widget/users', {
      body: { email, reference_id },
    });
    expect(res.status).to.equal(201);
    return res.body.data as { id: string; email: string; reference_id: string };
  }

  it('creates a user (201, widget envelope), idempotent on reference_id and on email', async () => {
    const res = await call(t.emu, 'POST', '/api/v1/widget/users', {
      body: { email: 'ada@example.com', reference_id: 'player-ada' },
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ success: true, error: null });
    expect(res.body.data).to.deep.include({
      reference_id: 'player-ada',
      email: 'ada@example.com',
      outstanding_disclosures: [2, 3, 6],
    });
    const id = res.body.data.id;
    const again = await call(t.emu, 'POST', '/api/v1/widget/users', {
      body: { email: 'other@example.com', reference_id: 'player-ada' },
    });
    expect(again.status).to.equal(201);
    expect(again.body.data.id).to.equal(id);
    const byEmail = await call(t.emu, 'POST', '/api/v1/widget/users', {
      body: { email: 'ADA@example.com' },
    });
    expect(byEmail.body.data.id).to.equal(id);
    expect(t.emu.control.users()).to.have.length(1);

    const bad = await call(t.emu, 'POST', '/api/v1/widget/users', { body: { reference_id: 'x' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('VALIDATION_ERROR');
  });

  it('widget calls need a production key: 401 without, 403 with a sandbox key', async () => {
    const user = await newUser();
    const calls: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/widget/users', { email: 'b@example.com' }],
      [
        'POST',
        '/api/v1/widget/users/deplete',
        { user_id: user.id, amount: 1, currency: 'USDZ', idempotency_key: randomUUID() },
      ],
      ['POST', '/api/v1/widget/users/session', { email: 'b@example.com' }],
      ['PATCH', `/api/v1/widget/users/${user.id}`, { email: 'c@example.com' }],
      ['POST', `/api/v1/widget/users/${user.id}/disclosures`, { acceptedDisclosureTypeIds: [2] }],
      [
        'POST',
        '/api/v1/ramp-widget',
        { email: 'b@example.com', webhook_url: 'https://example.com/h' },
      ],
    ];
    for (const [method, path, body] of calls) {
      const none = await call(t.emu, method, path, { key: null, body });
      expect(none.status, `${path} no key`).to.equal(401);
      expect(none.body.error.code).to.equal('UNAUTHORIZED');
      const sandbox = await call(t.emu, method, path, { key: t.emu.sandboxKey, body });
      expect(sandbox.status, `${path} sandbox`).to.equal(403);
      expect(sandbox.body).to.include({ success: false, data: null });
    }
    expect(t.emu.control.users()[0]?.email).to.equal('ada@example.com');
  });

  it('PATCH changes only the email; other fields are refused; other projects get 404', async () => {
    const user = await newUser();
    const res = await call(t.emu, 'PATCH', `/api/v1/widget/users/${user.id}`, {
      body: { email: 'new@example.com' },
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      success: true,
      message: res.body.message,
      data: { id: user.id, reference_id: 'player-ada', email: 'new@example.com' },
      error: null,
    });
    const other = await call(t.emu, 'PATCH', `/api/v1/widget/users/${user.id}`, {
      body: { reference_id: 'z' },
    });
    expect(other.status).to.equal(400);
    expect(other.body.error.message).to.match(/reference_id/);
    const badEmail = await call(t.emu, 'PATCH', `/api/v1/widget/users/${user.id}`, {
      body: { email: 'nope' },
    });
    expect(badEmail.status).to.equal(400);
    const project = t.emu.control.createProject();
    const foreign = await call(t.emu, 'PATCH', `/api/v1/widget/users/${user.id}`, {
      key: project.apiKey,
      body: { email: 'x@example.com' },
    });
    expect(foreign.status).to.equal(404);
    expect(t.emu.control.users()[0]?.email).to.equal('new@example.com');
  });

  describe('deplete', () => {
    it('debits the point balance and returns a COMPLETED transfer', async () => {
      const user = await newUser();
      t.emu.control.setPoints(user.id, 'USDZ', 1000);
      const res = await call(t.emu, 'POST', '/api/v1/widget/users/deplete', {
        body: { user_id: user.id, amount: 250, currency: 'USDZ', idempotency_key: randomUUID() },
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ success: true, error: null });
      expect(res.body.data.status).to.equal('COMPLETED');
      expect(res.body.data.transfer_id).to.be.a('string');
      expect(t.emu.control.points(user.id, 'USDZ')).to.equal(750);
    });

    it('is idempotent on idempotency_key, also when two requests race', async () => {
      const user = await newUser();
      t.emu.control.setPoints(user.id, 'USDZ', 1000);
      const body = {
        user_id: user.id,
        amount: 300,
        currency: 'USDZ',
        idempotency_key: randomUUID(),
      };
      const [a, b] = await Promise.all([
        call(t.emu, 'POST', '/api/v1/widget/users/deplete', { body }),
        call(t.emu, 'POST', '/api/v1/widget/users/deplete', { body }),
      ]);
      expect(a.status).to.equal(200);
      expect(b.status).to.equal(200);
      expect(a.body.data.transfer_id).to.equal(b.body.data.transfer_id);
      const c = await call(t.emu, 'POST', '/api/v1/widget/users/deplete', { body });
      expect(c.body.data.transfer_id).to.equal(a.body.data.transfer_id);
      expect(t.emu.control.points(user.id, 'USDZ')).to.equal(700);
      expect(t.emu.control.transfers()).to.have.length(1);
      expect(t.emu.control.count('POST', '/api/v1/widget/users/deplete')).to.equal(3);
    });

    it('refuses the same key with a different body (409, clear code)', async () => {
      const user = await newUser();
      t.emu.control.setPoints(user.id, 'USDZ', 1000);
      const key = randomUUID();
      await call(t.emu, 'POST', '/api/v1/widget/users/deplete', {
        body: { user_id: user.id, amount: 100, currency: 'USDZ', idempotency_key: key },
      });
      const res = await call(t.emu, 'POST', '/api/v1/widget/users/deplete', {
        body: { user_id: user.id, amount: 200, currency: 'USDZ', idempotency_key: key },
      });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
      expect(t.emu.control.points(user.id, 'USDZ')).to.equal(900);
    });

    it('answers TX3017 when the balance is short, debiting nothing', async () => {
      const user = await newUser();
      t.emu.control.setPoints(user.id, 'USDZ', 99);
      const res = await call(t.emu, 'POST', '/api/v1/widget/users/deplete', {
        body: { user_id: user.id, amount: 100, currency: 'USDZ', idempotency_key: randomUUID() },
      });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({
        success: false,
        message: 'insufficient point balance',
        data: null,
        error: { code: 'TX3017', message: 'insufficient point balance' },
      });
      expect(t.emu.control.points(user.id, 'USDZ')).to.equal(99);
      expect(t.emu.control.transfers()).to.have.length(0);
    });

    it('validates the body, the currency and the user', async () => {
      const user = await newUser();
      t.emu.control.setPoints(user.id, 'USDZ', 1000);
      const base = {
        user_id: user.id,
        amount: 10,
        currency: 'USDZ',
        idempotency_key: randomUUID(),
      };
      for (const body of [
        { ...base, amount: 1.5 },
        { ...base, amount: '10' },
        { ...base, amount: 0 },
        { ...base, idempotency_key: undefined },
        { ...base, currency: 'EUR' },
      ]) {
        const res = await call(t.emu, 'POST', '/api/v1/widget/users/deplete', { body });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      }
      const project = t.emu.control.createProject();
      const foreign = await call(t.emu, 'POST', '/api/v1/widget/users/deplete', {
        key: project.apiKey,
        body: base,
      });
      expect(foreign.status).to.equal(404);
      expect(t.emu.control.points(user.id, 'USDZ')).to.equal(1000);
    });
  });

  describe('disclosures', () => {
    it('records accepted types (201) and reports them no longer outstanding', async () => {
      const user = await newUser();
      const res = await call(t.emu, 'POST', `/api/v1/widget/users/${user.id}/disclosures`, {
        body: { acceptedDisclosureTypeIds: [2, 6, 2] },
      });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ success: true, error: null });
      expect(res.body.data).to.deep.equal({ acceptedDisclosureTypeIds: [2, 6] });
      expect(t.emu.control.users()[0]?.outstanding_disclosures).to.deep.equal([3]);
      // The idempotent create does not change acceptance, and reports what is outstanding.
      const again = await call(t.emu, 'POST', '/api/v1/widget/users', {
        body: { email: user.email },
      });
      expect(again.body.data.outstanding_disclosures).to.deep.equal([3]);
    });

    it('answers 400 for empty, missing or unknown types', async () => {
      const user = await newUser();
      for (const body of [
        { acceptedDisclosureTypeIds: [] },
        {},
        { acceptedDisclosureTypeIds: [2, 4] },
      ]) {
        const res = await call(t.emu, 'POST', `/api/v1/widget/users/${user.id}/disclosures`, {
          body,
        });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.success).to.equal(false);
        expect(res.body.error.message).to.be.a('string');
      }
      expect(t.emu.control.users()[0]?.outstanding_disclosures).to.deep.equal([2, 3, 6]);
    });

    it('answers 401 for a bad key, 403 for a project denied the interface, 404 for a foreign user', async () => {
      const user = await newUser();
      const path = `/api/v1/widget/users/${user.id}/disclosures`;
      const body = { acceptedDisclosureTypeIds: [2] };
      expect((await call(t.emu, 'POST', path, { key: 'wrong', body })).status).to.equal(401);
      t.emu.control.setDisclosures(t.emu.projectId, false);
      const denied = await call(t.emu, 'POST', path, { body });
      expect(denied.status).to.equal(403);
      expect(denied.body.error.message).to.match(/disclosure/);
      t.emu.control.setDisclosures(t.emu.projectId, true);
      const other = t.emu.control.createProject({ disclosures: true });
      expect((await call(t.emu, 'POST', path, { key: other.apiKey, body })).status).to.equal(404);
      const deniedProject = t.emu.control.createProject({ disclosures: false });
      expect(
        (await call(t.emu, 'POST', path, { key: deniedProject.apiKey, body })).status,
      ).to.equal(403);
      expect(t.emu.control.users()[0]?.outstanding_disclosures).to.deep.equal([2, 3, 6]);
    });
  });
});
