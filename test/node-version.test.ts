/**
 * The one Node version (src/node-version.ts): the check every entry point makes first, and
 * package.json saying the same. An older Node running the packed package is in
 * test/package/pack.test.ts.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { assertNodeVersion, MIN_NODE, nodeVersionProblem } from '../src/node-version.js';

describe('node version', () => {
  it('names the Node it needs, and the one it found, on an older Node', () => {
    for (const old of ['20.20.2', 'v22.18.9', '22.9.0', '18.0.0']) {
      expect(nodeVersionProblem(old), old)
        .to.include(`needs Node ${MIN_NODE} or newer`)
        .and.include(`this is Node ${old.replace('v', '')}`);
    }
    expect(() => assertNodeVersion('20.0.0')).to.throw(`Node ${MIN_NODE}`);
  });

  it('passes this Node and every newer one', () => {
    for (const ok of [MIN_NODE, '22.20.0', '23.0.0', '24.21.0', 'v25.1.0', process.versions.node]) {
      expect(nodeVersionProblem(ok), ok).to.equal(null);
    }
  });

  it('is the version package.json `engines` states', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.engines.node).to.equal(`>=${MIN_NODE}`);
  });
});
