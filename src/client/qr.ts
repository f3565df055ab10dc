/**
 * A code's QR as an SVG string. The matrix comes from `uqr`; this file draws one path of
 * horizontal runs, one unit per module, so the text stays small. Codes are encoded in upper
 * case, the densest (alphanumeric) mode, as LUD-01 recommends. Deterministic.
 */
import { encode } from 'uqr';
import { readCode } from './code.js';

export interface QrSvgOptions {
  /** Quiet zone around the symbol, in modules; default 2. */
  margin?: number;
  /** Colour of the dark modules; default 'black'. */
  color?: string;
  /** Colour behind them; default 'white'. */
  background?: string;
  /** The `aria-label` of the image; default 'Lightning QR code'. */
  label?: string;
}

/** The QR of `code` (an LNURL or a BOLT11 invoice) as SVG text; garbage is refused. */
export function qrSvg(code: string, options: QrSvgOptions = {}): string {
  const { text } = readCode(code);
  const margin = Math.max(0, Math.floor(options.margin ?? 2));
  const { data, size } = encode(text.toUpperCase(), { ecc: 'M', border: 0 });
  const full = size + 2 * margin;
  let path = '';
  data.forEach((row, y) => {
    for (let x = 0; x < size; x++) {
      if (!row[x]) continue;
      let end = x;
      while (end + 1 < size && row[end + 1]) end++;
      path += `M${x + margin} ${y + margin}h${end - x + 1}v1h${x - end - 1}z`;
      x = end;
    }
  });
  const label = escapeAttribute(options.label ?? 'Lightning QR code');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${full} ${full}" role="img" ` +
    `aria-label="${label}" shape-rendering="crispEdges">` +
    `<rect width="${full}" height="${full}" fill="${escapeAttribute(options.background ?? 'white')}"/>` +
    `<path fill="${escapeAttribute(options.color ?? 'black')}" d="${path}"/></svg>`
  );
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
