/**
 * Setting up a game as a new user does (issue 16): what `createLightning` says at start, what
 * it makes of a `.env` left half filled in, and the probe that catches the mistakes that would
 * otherwise only make every payment 15 s slow (a forgotten `lightning.endpoints()`, a game on
 * another port than `publicUrl`), with the emulator's line about each callback it could not
 * deliver.
 */
import { createRouter, defineRoom, defineServer, Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { ConfigurationError } from '../../src/errors.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { resolveOptions } from '../../src/server/options.js';
import { newProbeToken, probeCallbackRoute } from '../../src/server/probe.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/ports.js';

/** A logger that keeps every line, by level. */
function recordingLogger() {
  const lines: { level: 'info' | 'warn' | 'error'; message: string }[] = [];
  const at = (level: 'info' | 'warn' | 'error') => (message: string) =>
    void lines.push({ level, message });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('server set-up', () => {
  it('says in its one start line that it runs on the emulator, where, and where the dev wallet is', async () => {
    const { lines, logger } = recordingLogger();
    const lightning = createLightning({ logger });
    try {
      await lightning.ready();
      const emulator = lightning.service.emulator;
      if (!emulator) throw new Error('expected the embedded emulator');
      const notices = lines.filter((l) => l.message.includes('emulator'));
      expect(notices).to.have.length(1);
      expect(notices[0]?.level).to.equal('info');
      expect(notices[0]?.message)
        .to.include(emulator.url)
        .and.include(`dev wallet: ${emulator.devWalletUrl}`);
      const page = await request(emulator.devWalletUrl);
      expect(page.statusCode).to.equal(200);
      await page.body.dump();
    } finally {
      await lightning.close();
    }
  });

  it('takes an empty LIGHTNING_API_KEY (and PUBLIC_URL) from a .env template as unset: the emulator, with the same notice', async () => {
    const { lines, logger } = recordingLogger();
    const lightning = createLightning({ apiKey: '', publicUrl: ' ', logger });
    try {
      await lightning.ready();
      const emulator = lightning.service.emulator;
      if (!emulator) throw new Error('expected the embedded emulator');
      // The blank PUBLIC_URL is the default: a reward's callback points at it.
      await lightning.reward({ playerId: 'p', amountMsat: 10_000, description: 'x' });
      const [made] = emulator.control.withdrawalRequests();
      expect(made?.callbackUrl).to.match(/^http:\/\/127\.0\.0\.1:2567\/lightning\/callbacks\//);
      expect(
        lines.filter((l) => l.message.startsWith('no apiKey: using the embedded')),
      ).to.have.length(1);
    } finally {
      await lightning.close();
    }
  });

  it('still refuses an empty key in production, naming the option', () => {
    const refused = (() => {
      try {
        resolveOptions({ apiKey: '' }, { NODE_ENV: 'production' });
      } catch (err) {
        return err;
      }
    })();
    expect(refused).to.be.instanceOf(ConfigurationError);
    expect((refused as ConfigurationError).field).to.equal('options.apiKey');
  });
});

class Lobby extends Room {}

/** A Colyseus server as a game defines one, on `port`, with or without the lightning routes. */
async function serve(lightning: Lightning, port: number, routes: boolean) {
  const server = defineServer({
    greet: false,
    rooms: { lobby: defineRoom(Lobby) },
    ...(routes ? { routes: createRouter({ ...lightning.endpoints() }) } : {}),
    beforeListen: () => lightning.ready(),
  });
  await server.listen(port);
  return server;
}

/** An entry fee made at the server level and paid through the emulator's control. */
async function payAFee(lightning: Lightning) {
  const fee = await lightning.chargeEntryFee({
    playerId: 'alice',
    amountMsat: 21_000,
    description: 'Entry',
  });
  lightning.service.emulator?.control.payStaticCharge(fee.remoteId ?? '');
  return fee;
}

describe('server set-up probe', () => {
  let lightning: Lightning | undefined;
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  afterEach(async () => {
    await server?.gracefullyShutdown(false);
    await lightning?.close();
    server = undefined;
    lightning = undefined;
  });

  it('finds its own callback route at publicUrl, warns nothing, and a paid fee settles by its callback', async () => {
    const { lines, logger } = recordingLogger();
    const port = await freePort();
    // No reconciler: the callback is the only way the fee can learn it was paid.
    lightning = createLightning({
      publicUrl: `http://127.0.0.1:${port}`,
      logger,
      reconciler: { enabled: false },
    });
    server = await serve(lightning, port, true);
    await eventually(
      () => lines.find((l) => l.message.startsWith('callbacks reach this server at')),
      5000,
      'the probe to find the route',
    );
    const fee = await payAFee(lightning);
    const ledger = lightning.books.ledger;
    await eventually(
      async () => (await ledger.get(fee.id))?.status === 'completed',
      5000,
      'the fee',
    );
    const control = lightning.service.emulator?.control;
    const callbacks = () =>
      (control?.callbackLog ?? [])
        .filter((c) => c.resourceId === fee.remoteId)
        .map((c) => [new URL(c.url).origin, c.outcome]);
    await eventually(() => callbacks().length > 0 && callbacks().every(([, o]) => o !== 'pending'));
    expect(callbacks()).to.deep.equal([[`http://127.0.0.1:${port}`, 'delivered']]);
    expect(lines.filter((l) => l.level !== 'info')).to.deep.equal([]);
  });

  it('warns in one line, with the fix, when the server forgot lightning.endpoints(); the emulator logs the lost callback', async () => {
    const { lines, logger } = recordingLogger();
    const port = await freePort();
    lightning = createLightning({ publicUrl: `http://127.0.0.1:${port}`, logger });
    server = await serve(lightning, port, false);
    const warning = await eventually(
      () => lines.find((l) => l.level === 'warn' && l.message.includes('will not reach')),
      5000,
      'the warning',
    );
    expect(warning.message)
      .to.include('answered 404')
      .and.include('createRouter({ ...lightning.endpoints() })')
      .and.include('15 s');
    expect(warning.message).to.not.include('\n');
    const fee = await payAFee(lightning);
    const lost = await eventually(
      () => lines.find((l) => l.message.startsWith('callback not delivered')),
      5000,
      "the emulator's line",
    );
    expect(lost.message)
      .to.include(`http://127.0.0.1:${port}/lightning/callbacks/…`)
      .and.include('answered 404')
      .and.not.include(fee.callbackToken ?? 'no token');
  });

  it('warns when nothing listens at publicUrl (a game on another port); the emulator logs each lost callback', async () => {
    const { lines, logger } = recordingLogger();
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const stop = new AbortController();
    const found = await probeCallbackRoute({
      publicUrl: nobody,
      prefix: '/lightning',
      token: newProbeToken(),
      logger,
      firstCheckMs: 15_000,
      signal: stop.signal,
      waitMs: 300,
      retryMs: 50,
    });
    expect(found).to.equal('unreachable');
    expect(lines.map((l) => l.level)).to.deep.equal(['warn']);
    expect(lines[0]?.message)
      .to.include(`nothing answers at ${nobody} (ECONNREFUSED)`)
      .and.include('Set publicUrl to the address this server listens on');

    const { lines: embedded, logger: its } = recordingLogger();
    lightning = createLightning({ publicUrl: nobody, logger: its });
    await lightning.ready();
    await payAFee(lightning);
    const lost = await eventually(
      () => embedded.find((l) => l.message.startsWith('callback not delivered')),
      5000,
      "the emulator's line",
    );
    expect(lost.level).to.equal('warn');
    expect(lost.message)
      .to.include(`POST ${nobody}/lightning/callbacks/…`)
      .and.include('ECONNREFUSED');
  });

  it('tells apart another server that answers at publicUrl', async () => {
    const { lines, logger } = recordingLogger();
    const port = await freePort();
    lightning = createLightning({ publicUrl: `http://127.0.0.1:${port}`, logger });
    // Another game's lightning routes at that address: they do not know this server's probe.
    const other = createLightning({ logger: recordingLogger().logger });
    try {
      server = await serve(other, port, true);
      await lightning.ready();
      const warning = await eventually(
        () => lines.find((l) => l.level === 'warn'),
        5000,
        'the warning',
      );
      expect(warning.message).to.include('answered 404, not from this server');
    } finally {
      await server?.gracefullyShutdown(false);
      server = undefined;
      await other.close();
    }
  });
});

describe('server set-up: a forgotten ready() (issue 23, finding 5)', () => {
  it('starts anyway soon after the routes are made, says so once with the fix, and prints the dev wallet', async () => {
    const { lines, logger } = recordingLogger();
    const lightning = createLightning({ logger, startWithoutReadyMs: 200 });
    try {
      lightning.endpoints();
      lightning.plugin();
      await eventually(
        () => lines.some((l) => l.message.includes('dev wallet')),
        5_000,
        'the start line with the dev wallet',
      );
      const warned = lines.filter((l) => l.message.includes('lightning.ready() was not called'));
      expect(warned).to.have.length(1);
      expect(warned[0]?.level).to.equal('warn');
      expect(warned[0]?.message).to.include('lightning.endpoints()').and.include('beforeListen');
      // Started: the ledger's reads answer without a ready() of the game's.
      expect(await lightning.books.ledger.unknowns()).to.deep.equal([]);
    } finally {
      await lightning.close();
    }
  });

  it('says nothing when ready() is called, and nothing in production', async () => {
    const { lines, logger } = recordingLogger();
    const lightning = createLightning({ logger, startWithoutReadyMs: 100 });
    // A witness armed just after, that nobody readies: once it has spoken, the first one's
    // watch (armed earlier, as long) has run too.
    const witness = recordingLogger();
    const forgotten = createLightning({ logger: witness.logger, startWithoutReadyMs: 100 });
    const previous = process.env.NODE_ENV;
    try {
      lightning.endpoints();
      forgotten.endpoints();
      await lightning.ready();
      await eventually(
        () => witness.lines.some((l) => l.message.includes('ready()')),
        5_000,
        "the witness's warning",
      );
      expect(lines.filter((l) => l.message.includes('ready()'))).to.deep.equal([]);
    } finally {
      await lightning.close();
      await forgotten.close();
    }
    const { lines: quiet, logger: quietOne } = recordingLogger();
    process.env.NODE_ENV = 'production';
    const port = await freePort();
    const prod = createLightning({
      logger: quietOne,
      startWithoutReadyMs: 100,
      apiKey: 'a_production_key_for_this_test',
      baseUrl: `http://127.0.0.1:${port}`,
      publicUrl: 'https://game.example.com',
      ledger: ':memory:',
    });
    try {
      prod.endpoints();
      await eventually(() => quiet.length > 0 || hasStarted(prod), 5_000, 'the start');
      expect(quiet.filter((l) => l.message.includes('ready()'))).to.deep.equal([]);
    } finally {
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
      await prod.close();
    }
  });
});

describe('server set-up: startWithoutReadyMs 0', () => {
  it('never starts on its own: only ready() starts it', async () => {
    const { lines, logger } = recordingLogger();
    const waiting = createLightning({ logger, startWithoutReadyMs: 0 });
    // A witness armed just after, that nobody readies: once it has started, a watch of the
    // first one's would have run too.
    const witness = recordingLogger();
    const forgotten = createLightning({ logger: witness.logger, startWithoutReadyMs: 1 });
    try {
      waiting.endpoints();
      forgotten.endpoints();
      await eventually(() => hasStarted(forgotten), 5_000, "the witness's start");
      expect(hasStarted(waiting), 'started without ready()').to.equal(false);
      expect(lines).to.deep.equal([]);
      await waiting.ready();
      expect(hasStarted(waiting)).to.equal(true);
    } finally {
      await waiting.close();
      await forgotten.close();
    }
  });

  it('refuses a negative wait', () => {
    expect(() => createLightning({ startWithoutReadyMs: -1 })).to.throw(/startWithoutReadyMs/);
  });
});

function hasStarted(lightning: Lightning): boolean {
  try {
    return lightning.books.ledger !== undefined;
  } catch {
    return false;
  }
}
