import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { VERSION } from '../src/version.js';

describe('package', () => {
  it('sends the version that package.json declares', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(VERSION).to.equal(pkg.version);
  });
});
