/**
 * Setting up a game as a new user does (issue 16): what `createLightning` says at start and
 * what it makes of a `.env` left half filled in.
 */
import { expect } from 'chai';
import { request } from 'undici';
import { ConfigurationError } from '../../src/errors.js';
import { createLightning } from '../../src/lightning.js';
import { resolveOptions } from '../../src/server/options.js';

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
      const emulator = lightning.emulator;
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
      expect(lightning.emulator).to.not.equal(null);
      expect(lightning.toJSON()).to.deep.equal({ publicUrl: 'http://127.0.0.1:2567' });
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
