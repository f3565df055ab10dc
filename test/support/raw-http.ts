/**
 * One HTTP/1.1 request written raw on a fresh `net.Socket`, for the requests node's and undici's
 * clients refuse to send (`Host: [`, a bare `%` in a path, a header with odd bytes). Resolves
 * with the answer's status line, headers and body once the answer is whole (by its
 * Content-Length, its last chunk, or the socket closing after it), `reset` when the server
 * closed the connection without a byte of answer, or `no answer` when nothing came back within
 * `timeoutMs` (a hang). The socket is always closed afterwards.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type RawOutcome = RawAnswer | 'reset' | 'no answer';

/** The answer once `bytes` hold all of it, or null while more is due. */
function whole(all: Buffer, headOnly: boolean, closed: boolean): RawAnswer | null {
  let bytes = all;
  // An interim answer (100 Continue) goes before the answer.
  while (/^HTTP\/1\.[01] 1(?!01)\d\d /.test(bytes.subarray(0, 16).toString('latin1'))) {
    const interim = bytes.indexOf('\r\n\r\n');
    if (interim < 0) return null;
    bytes = bytes.subarray(interim + 4);
  }
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? Number.NaN);
  if (Number.isNaN(status)) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(end + 4);
  const answer = (body: Buffer) => ({ status, headers, body: body.toString('utf8') });
  if (headOnly || status === 204 || status === 304) return answer(Buffer.alloc(0));
  const length = headers['content-length'];
  if (length !== undefined) {
    return rest.length >= Number(length) ? answer(rest.subarray(0, Number(length))) : null;
  }
  if (headers['transfer-encoding'] === 'chunked') {
    if (!rest.includes('0\r\n\r\n') && !closed) return null;
    const body: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return closed ? answer(Buffer.concat(body)) : null;
      const size = Number.parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (!(size > 0)) return answer(Buffer.concat(body));
      body.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  return closed ? answer(rest) : null;
}

export function rawRequest(
  port: number,
  request: string | Buffer,
  timeoutMs = 5_000,
): Promise<RawOutcome> {
  const headOnly = request.slice(0, 5).toString() === 'HEAD ';
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (outcome: RawOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const timer = setTimeout(() => finish('no answer'), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const answer = whole(Buffer.concat(chunks), headOnly, false);
      if (answer) finish(answer);
    });
    const closed = () => {
      const bytes = Buffer.concat(chunks);
      finish(bytes.length === 0 ? 'reset' : (whole(bytes, headOnly, true) ?? 'reset'));
    };
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', closed);
  });
}

/** A request's text: its line, its headers (in order, as given), and its body. */
export function rawText(line: string, headers: [string, string][], body = ''): string {
  return `${line}\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n${body}`;
}
