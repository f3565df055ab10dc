/**
 * The codes a player scans: `lightningUri`, `decodeLnurl` and `qrSvg`. The QR is checked
 * without a decoder: its SVG is read back into a grid of modules, which must be a QR symbol's
 * size (21 + 4k) with its three finder patterns where the standard puts them; the same code
 * gives the same text; empty or garbage input is refused, naming `code`.
 */
import { expect } from 'chai';
import { decodeLnurl, InvalidArgumentError, lightningUri, qrSvg } from '../../src/client/index.js';
import { encodeBolt11, encodeLnurl } from '../../src/emulator/index.js';

const URL_OF_FEE = 'http://127.0.0.1:43123/lnurl/pay/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const LNURL = encodeLnurl(URL_OF_FEE); // upper case, as entries carry it
const INVOICE = encodeBolt11({ amountMsat: 21_000, description: 'test' });

/** The garbage every reader refuses. */
const GARBAGE = [
  '',
  '   ',
  'hello',
  'lnurl1qqqq', // bad checksum
  `${LNURL.slice(0, -1)}${LNURL.endsWith('Q') ? 'P' : 'Q'}`, // one character changed
  `${LNURL.slice(0, 10).toLowerCase()}${LNURL.slice(10)}`, // mixed case
  'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', // bech32, but an address
  'https://example.com',
];

/** The grid of dark modules an SVG of qrSvg draws (runs of `M x y h n v1 h -n z`). */
function modules(svg: string): { size: number; dark: boolean[][] } {
  const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1]);
  const d = /<path [^>]*d="([^"]*)"/.exec(svg)?.[1] ?? '';
  expect(d).to.match(/^(M\d+ \d+h\d+v1h-\d+z)+$/);
  const dark = Array.from({ length: size }, () => Array<boolean>(size).fill(false));
  for (const [, x, y, n] of d.matchAll(/M(\d+) (\d+)h(\d+)/g)) {
    for (let i = 0; i < Number(n); i++) {
      const row = dark[Number(y)] as boolean[];
      expect(row[Number(x) + i], 'each module drawn once').to.equal(false);
      row[Number(x) + i] = true;
    }
  }
  return { size, dark };
}

/** A finder pattern at (x, y): a dark 7x7 ring, a light ring, a dark 3x3 centre. */
function isFinder(dark: boolean[][], x: number, y: number): boolean {
  for (let i = 0; i < 7; i++) {
    for (let j = 0; j < 7; j++) {
      const ring = Math.max(Math.abs(i - 3), Math.abs(j - 3));
      if (dark[y + i]?.[x + j] !== (ring !== 2)) return false;
    }
  }
  return true;
}

describe('client kit: codes, links and QR', () => {
  it('makes the lightning: link of an LNURL or an invoice, as given', () => {
    expect(lightningUri(LNURL)).to.equal(`lightning:${LNURL}`);
    expect(lightningUri(`lightning:${LNURL}`)).to.equal(`lightning:${LNURL}`);
    expect(lightningUri(`  ${LNURL.toLowerCase()} `)).to.equal(`lightning:${LNURL.toLowerCase()}`);
    expect(lightningUri(INVOICE)).to.equal(`lightning:${INVOICE}`);
  });

  it('decodes an LNURL to its URL', () => {
    expect(decodeLnurl(LNURL)).to.equal(URL_OF_FEE);
    expect(decodeLnurl(`LIGHTNING:${LNURL}`)).to.equal(URL_OF_FEE);
    expect(() => decodeLnurl(INVOICE)).to.throw(InvalidArgumentError, /invoice, not an LNURL/);
  });

  it('draws a QR symbol: a square of 21 + 4k modules with its three finder patterns', () => {
    for (const code of [LNURL, INVOICE, `lightning:${LNURL}`]) {
      const svg = qrSvg(code, { margin: 0 });
      expect(svg).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" [^>]*>.*<\/svg>$/);
      const { size, dark } = modules(svg);
      expect((size - 21) % 4, `size ${size}`).to.equal(0);
      expect(isFinder(dark, 0, 0)).to.equal(true);
      expect(isFinder(dark, size - 7, 0)).to.equal(true);
      expect(isFinder(dark, 0, size - 7)).to.equal(true);
      expect(isFinder(dark, size - 7, size - 7), 'no fourth finder').to.equal(false);
    }
  });

  it('keeps the quiet zone light, and stays small', () => {
    const { size, dark } = modules(qrSvg(LNURL));
    const inner = modules(qrSvg(LNURL, { margin: 0 })).size;
    expect(size).to.equal(inner + 4);
    expect(dark[0]?.some(Boolean)).to.equal(false);
    expect(dark.every((row) => !row[0] && !row[1] && !row[size - 1])).to.equal(true);
    expect(isFinder(dark, 2, 2)).to.equal(true);
    expect(qrSvg(LNURL).length).to.be.below(8_000);
  });

  it('is deterministic: the same code, the same text; another code, another', () => {
    expect(qrSvg(LNURL)).to.equal(qrSvg(LNURL));
    // Case and the lightning: prefix are not part of the symbol.
    expect(qrSvg(LNURL.toLowerCase())).to.equal(qrSvg(LNURL));
    expect(qrSvg(encodeLnurl(`${URL_OF_FEE}0`))).to.not.equal(qrSvg(LNURL));
  });

  it('escapes its label and colours', () => {
    const svg = qrSvg(LNURL, { label: 'Prize "1" <b>', color: '#123' });
    expect(svg).to.include('aria-label="Prize &#34;1&#34; &#60;b&#62;"');
    expect(svg).to.include('fill="#123"');
    expect(svg).to.include('role="img"');
  });

  it('refuses empty or garbage input with an error naming the code', () => {
    for (const bad of [...GARBAGE, undefined, 42]) {
      for (const read of [qrSvg, lightningUri, decodeLnurl]) {
        expect(() => read(bad as string), `${read.name}(${String(bad)})`)
          .to.throw(InvalidArgumentError)
          .with.property('field', 'code');
      }
    }
    expect(() => qrSvg('')).to.throw(/code: must be an LNURL or a BOLT11 invoice, not empty/);
    expect(() => qrSvg('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')).to.throw(
      /bech32 of 'bc', not an LNURL or an invoice/,
    );
  });
});
