/**
 * The HTTP mounts, raw: hostile request lines, headers and bodies written on a `net.Socket`
 * (node's and undici's clients refuse to send most of them) to each mount of the one running
 * game server: `lightning.attach(server)`, `lightning.operator.console.attach(server)`, the router's
 * `lightning.endpoints()` and the router's `lightning.operator.console.endpoints()`. A Host no URL can be built
 * from, an X-Forwarded-Proto that is no scheme, bad percent-escapes and dot segments, methods
 * no route takes, junk Origin / Sec-Fetch-Site / Content-Type / Transfer-Encoding, bodies of
 * any bytes; now and then the operator's own valid read. (Not CONNECT, which node hands to no
 * request listener, and not the overview, whose balances read the service's wallet.)
 *
 * Each must be answered (a status line, never a hang or a closed socket; only a body over the
 * cap may lose its 413 to a reset), with a status below 500 (a 4xx, or a valid answer to a valid
 * request; the router's CSV exports answer 501 by design), and with nothing recorded, sent or
 * emitted; then a normal request to the same server still answers 200. A listener's throw or a
 * rejection nobody handled is counted by the environment and fails the target.
 */
import fc from 'fast-check';
import { type RawOutcome, rawRequest } from '../../test/support/raw-http.js';
import { ATTACHED_PREFIX, type FuzzEnvironment, OPERATOR_TOKEN } from '../environment.js';
import type { Outcome, Target } from '../harness.js';

interface RawInput {
  method: string;
  path: string;
  host: string | null;
  headers: [string, string][];
  body: string;
  chunked: boolean;
}

/** Printable ASCII and the characters a URL's authority or path trips on. */
const junkChar = fc.oneof(
  fc.mapToConstant({ num: 0x7e - 0x21 + 1, build: (i) => String.fromCharCode(0x21 + i) }),
  fc.constantFrom('[', ']', '@', ':', ' ', '%', '#', '?', '/', '\\', '^', '|', '<', '>'),
);
const junk = (max: number) => fc.string({ unit: junkChar, maxLength: max });

function hosts(port: number): fc.Arbitrary<string | null> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant(`127.0.0.1:${port}`) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '[',
        'a b',
        'x:99999',
        'user@x',
        'a:b@x',
        '999.1.1.1',
        '[::1',
        '[::1]:70000',
        'x:-1',
        '',
        'localhost:',
        'example.com:80',
        '%zz',
      ),
    },
    { weight: 3, arbitrary: junk(40) },
    { weight: 1, arbitrary: fc.constant(null) },
  );
}

const methods = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('GET', 'POST') },
  { weight: 2, arbitrary: fc.constantFrom('HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('get', 'BREW', 'G\tET', 'TRACE') },
);

/** Path tails that trip a router or a decoder: escapes, dots, slashes, long and odd text. */
const tails = fc.oneof(
  fc.constantFrom(
    '',
    '/',
    '%',
    '%zz',
    '%E0%A4%A',
    '%00',
    '%2F',
    '/..',
    '/../..',
    '//',
    '/%2e%2e/',
    '?',
    '?a=%zz&since=%',
    '?since=-1&until=x&after=99999999999999999999',
    '?after=99999999999999999999:tab:x&limit=1000',
    '?after=-1:house:x&limit=0',
    '#x',
  ),
  junk(80).map((s) => s.replaceAll(' ', '%20')),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom('a'.repeat(4000), `/${'%zz'.repeat(500)}`),
);

function paths(bases: string[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...bases), tails)
    .map(([base, tail]) => (tail.startsWith('?') || tail === '' ? base + tail : base + tail));
}

/** A header present one time in four. */
const header = (name: string, values: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: values.map((v): [string, string] => [name, v]) },
  );

const optionalHeaders: fc.Arbitrary<[string, string][]> = fc
  .tuple(
    header('X-Forwarded-Proto', fc.oneof(fc.constantFrom('https', 'a b', ''), junk(12))),
    header(
      'Origin',
      fc.oneof(fc.constantFrom('null', 'http://evil.example', 'http://['), junk(30)),
    ),
    header(
      'Sec-Fetch-Site',
      fc.oneof(fc.constantFrom('same-origin', 'cross-site', 'none', 'same-site'), junk(12)),
    ),
    header('Sec-Fetch-Mode', fc.constantFrom('navigate', 'cors', 'no-cors', 'x')),
    header(
      'Content-Type',
      fc.oneof(fc.constantFrom('application/json', 'text/plain', 'application/json; x'), junk(20)),
    ),
    header('Cookie', junk(60)),
    header('X-Forwarded-For', junk(40)),
    header('Accept-Encoding', junk(20)),
    header('Expect', fc.constantFrom('100-continue', 'x')),
    header('X-Zbd-Signature', junk(70)),
    header('X-Lightning-Console', fc.constantFrom('action', 'x')),
  )
  .map((hs) => hs.filter((h): h is [string, string] => h !== null));

const bodies = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.constant('x'.repeat(70 * 1024)) },
);

/** A mount's hostile requests, and now and then the operator's own read of a console. */
function requests(port: number, bases: string[], operatorRead: string): fc.Arbitrary<RawInput> {
  const hostile = fc
    .record({
      method: methods,
      path: paths(bases),
      host: hosts(port),
      headers: optionalHeaders,
      body: bodies,
      chunked: fc.boolean(),
      // The operator's credentials on reads only: an action must never run here.
      operator: fc.boolean(),
    })
    .map(({ operator, ...r }) => ({
      ...r,
      headers:
        operator && (r.method === 'GET' || r.method === 'HEAD')
          ? [...r.headers, ['Authorization', OPERATOR_TOKEN] as [string, string]]
          : r.headers,
    }));
  const valid = fc.constant<RawInput>({
    method: 'GET',
    path: operatorRead,
    host: `127.0.0.1:${port}`,
    headers: [['Authorization', OPERATOR_TOKEN]],
    body: '',
    chunked: false,
  });
  return fc.oneof({ weight: 19, arbitrary: hostile }, { weight: 1, arbitrary: valid });
}

/** The request's bytes: every body framed whole (by its length, or chunked), never half sent. */
function text(input: RawInput): Buffer {
  const lines = [`${input.method} ${input.path} HTTP/1.1`];
  if (input.host !== null) lines.push(`Host: ${input.host}`);
  for (const [name, value] of input.headers) lines.push(`${name}: ${value}`);
  const body = Buffer.from(input.body, 'latin1');
  if (input.chunked) lines.push('Transfer-Encoding: chunked');
  else if (body.length > 0 || input.method === 'POST') lines.push(`Content-Length: ${body.length}`);
  lines.push('Connection: close', '', '');
  const head = Buffer.from(lines.join('\r\n'), 'latin1');
  if (!input.chunked) return Buffer.concat([head, body]);
  const chunk = body.length > 0 ? `${body.length.toString(16)}\r\n` : '';
  return Buffer.concat([
    head,
    Buffer.from(chunk, 'latin1'),
    body,
    Buffer.from(body.length > 0 ? '\r\n0\r\n\r\n' : '0\r\n\r\n', 'latin1'),
  ]);
}

const describeOutcome = (o: RawOutcome) => (typeof o === 'string' ? o : String(o.status));

/** The routes' and the console's body cap (maxBodyBytes' default). */
const BODY_CAP = 64 * 1024;

/**
 * The status a 4xx-or-valid rule allows beyond those below 500: the router's console answers a
 * CSV export 501 by design (its answers cannot stream; OPERATING.md, The console).
 */
const allowed = (input: RawInput, status: number) =>
  status < 500 || (status === 501 && /\/console\/export\//.test(input.path));

async function attempt(port: number, input: RawInput, normal: string): Promise<Outcome> {
  const answer = await rawRequest(port, text(input));
  if (answer === 'reset' && input.body.length > BODY_CAP) {
    // Past its cap a route answers 413 and closes rather than read on; the body still arriving
    // makes the kernel reset the connection, which may take the 413 with it.
  } else if (typeof answer === 'string') return { problem: `no status: ${answer}` };
  else if (!allowed(input, answer.status)) return { problem: `answered ${answer.status}` };
  const after = await rawRequest(
    port,
    `GET ${normal} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${OPERATOR_TOKEN}\r\nConnection: close\r\n\r\n`,
  );
  if (typeof after === 'string' || after.status !== 200) {
    return { problem: `then a normal request: ${describeOutcome(after)}` };
  }
  return { label: typeof answer === 'string' ? `${answer} (over the cap)` : String(answer.status) };
}

export function httpTargets(env: FuzzEnvironment): Target[] {
  const port = env.game.port;
  const routes = (prefix: string) => [
    `${prefix}/callbacks/`,
    `${prefix}/callbacks/abc`,
    `${prefix}/webhooks/ramp`,
    `${prefix}/webhooks/widget`,
    `${prefix}/webhooks`,
    prefix,
  ];
  const consoles = (prefix: string) => [
    `${prefix}/console`,
    `${prefix}/console/api/intents`,
    `${prefix}/console/api/intents/`,
    `${prefix}/console/api/matches/`,
    `${prefix}/console/api/oplog`,
    `${prefix}/console/api/tabs`,
    `${prefix}/console/api/refusals`,
    `${prefix}/console/api/actions/`,
    `${prefix}/console/api/actions/pause`,
    `${prefix}/console/export/journal.csv`,
    `${prefix}/console/export/`,
  ];
  const target = (name: string, bases: string[], prefix: string): Target<RawInput> => {
    const normal = `${prefix}/console/api/oplog?limit=1`;
    return {
      name,
      inputs: requests(port, bases, `${prefix}/console/api/intents`),
      attempt: (input) => attempt(port, input, normal),
    };
  };
  return [
    target('http attach(server)', routes(ATTACHED_PREFIX), ATTACHED_PREFIX),
    target('http operator.console.attach(server)', consoles(ATTACHED_PREFIX), ATTACHED_PREFIX),
    target('http router endpoints()', routes('/lightning'), '/lightning'),
    target('http router console()', consoles('/lightning'), '/lightning'),
  ];
}
