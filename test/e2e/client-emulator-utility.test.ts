/**
 * The utility reads against the emulator: the callback source addresses and region support,
 * as the emulator's control sets them; a bad IP is refused before anything is sent.
 */
import { expect } from 'chai';
import { InvalidArgumentError } from '../../src/errors.js';
import { useClientAndEmulator } from './setup.js';

describe('e2e client -> emulator: utility reads', () => {
  const t = useClientAndEmulator();

  it('utility.prodIps: the addresses callbacks come from', async () => {
    expect((await t.api.utility.prodIps()).ips).to.deep.equal(['127.0.0.1', '::1']);
    t.emu.control.setProdIps(['198.51.100.7']);
    expect((await t.api.utility.prodIps()).ips).to.deep.equal(['198.51.100.7']);
  });

  it('utility.isSupportedRegion: supported unless the control refuses the IP', async () => {
    expect(await t.api.utility.isSupportedRegion('203.0.113.9')).to.include({
      ipAddress: '203.0.113.9',
      isSupported: true,
    });
    t.emu.control.setRegion('203.0.113.9', { country: 'KP', region: 'Pyongyang' });
    expect(await t.api.utility.isSupportedRegion('203.0.113.9')).to.include({
      isSupported: false,
      ipCountry: 'KP',
    });
    expect((await t.api.utility.isSupportedRegion('2001:db8::1')).isSupported).to.equal(true);
  });

  it('refuses what is not an IP address, sending nothing', async () => {
    for (const bad of ['', 'example.com', '../wallet', '1.2.3.4/8', 42 as unknown as string]) {
      const err = await t.api.utility.isSupportedRegion(bad).catch((e: unknown) => e);
      expect(err, String(bad)).to.be.instanceOf(InvalidArgumentError);
    }
    expect(t.emu.control.count('GET', /is-supported-region/)).to.equal(0);
  });
});
