/**
 * Issue 30, finding 1: no request takes the game down. A game server in its own process, set up
 * as the docs show (Colyseus's `listen()`, the console by `lightning.operator.console.attach(server)`, the
 * routes by `lightning.attach(server)`; or both on Colyseus's router), gets requests node's own
 * clients would not send, written raw on a socket: a Host no URL can be built from, a bad
 * percent-escape in a path, a method no route takes, an X-Forwarded-Proto that is no scheme. Each
 * answers a 4xx, the process is still running afterwards, and a normal request still answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { nodeArgs } from '../support/node-child.js';
import { freePort } from '../support/ports.js';
import { type RawOutcome, rawRequest, rawText } from '../support/raw-http.js';
import { readyLine } from '../support/ready-line.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/http-process.ts', import.meta.url));
const OPERATOR: [string, string] = ['authorization', 'Bearer operator'];

interface GameProcess {
  child: ChildProcess;
  port: number;
  output(): string;
  alive(): boolean;
}

async function startProcess(mount: 'listener' | 'router'): Promise<GameProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, await nodeArgs(FIXTURE), {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, PORT: String(port), MOUNT: mount },
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  await readyLine(child, 'ready', `the ${mount} game process`, 30_000);
  return {
    child,
    port,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

const statusOf = (outcome: RawOutcome) => (typeof outcome === 'string' ? outcome : outcome.status);

describe('hostile requests: the game process lives and answers (issue 30)', function () {
  this.timeout(60_000);
  let game: GameProcess | undefined;
  afterEach(async () => {
    if (game?.alive()) {
      const exited = new Promise((resolve) => game?.child.once('exit', resolve));
      game.child.kill('SIGKILL');
      await exited;
    }
    game = undefined;
  });

  it('through attach and operator.console.attach: a Host no URL can be built from answers 400, on every path, and the process lives', async () => {
    game = await startProcess('listener');
    const { port } = game;
    for (const host of ['[', 'a b', 'x:99999', 'operator@x', '999.1.1.1']) {
      for (const line of [
        'GET /lightning/console HTTP/1.1',
        'GET /lightning/console/api/overview HTTP/1.1',
        'POST /lightning/callbacks/abc HTTP/1.1',
        'POST /lightning/webhooks/ramp HTTP/1.1',
        // Colyseus's own routes, guarded by the same front.
        'GET / HTTP/1.1',
        'POST /matchmake/joinOrCreate/empty HTTP/1.1',
      ]) {
        const answer = await rawRequest(
          port,
          rawText(line, [['Host', host], OPERATOR, ['Content-Length', '0']]),
        );
        expect(statusOf(answer), `${line} with Host ${host}: ${game.output()}`).to.equal(400);
        expect(game.alive(), `${line} with Host ${host}`).to.equal(true);
      }
    }
    const proto = await rawRequest(
      port,
      rawText('GET /lightning/console HTTP/1.1', [
        ['Host', 'game.example'],
        ['X-Forwarded-Proto', 'a b'],
        OPERATOR,
      ]),
    );
    expect(statusOf(proto)).to.equal(400);
    const badEscape = await rawRequest(
      port,
      rawText('GET /lightning/console/api/intents/%zz HTTP/1.1', [['Host', 'a'], OPERATOR]),
    );
    expect(statusOf(badEscape)).to.equal(400);

    // Still the game: the console answers the operator, and refuses anyone else.
    const page = await rawRequest(
      port,
      rawText('GET /lightning/console/api/overview HTTP/1.1', [
        ['Host', `127.0.0.1:${port}`],
        OPERATOR,
        ['Connection', 'close'],
      ]),
    );
    expect(statusOf(page)).to.equal(200);
    expect(typeof page === 'object' && JSON.parse(page.body)).to.have.property('balances');
    const anyone = await rawRequest(
      port,
      rawText('GET /lightning/console HTTP/1.1', [['Host', `127.0.0.1:${port}`]]),
    );
    expect(statusOf(anyone)).to.equal(401);
    expect(game.alive()).to.equal(true);
  });

  it("through Colyseus's router: a bad path, method or escape answers a 4xx, never a 500, and the process lives", async () => {
    game = await startProcess('router');
    const { port } = game;
    const host: [string, string] = ['Host', `127.0.0.1:${port}`];
    const cases: [string, [string, string][], number[]][] = [
      ['GET /lightning/console/api/intents/%zz HTTP/1.1', [host, OPERATOR], [400]],
      ['GET /lightning/console/api/matches/%E0%A4%A HTTP/1.1', [host, OPERATOR], [400]],
      ['GET /lightning/console/api/intents?since=%zz HTTP/1.1', [host, OPERATOR], [400]],
      ['GET /lightning/console/api/nothing HTTP/1.1', [host, OPERATOR], [404]],
      ['DELETE /lightning/console/api/overview HTTP/1.1', [host, OPERATOR], [404, 405]],
      ['POST /lightning/callbacks/%zz HTTP/1.1', [host, ['Content-Length', '0']], [404]],
      ['GET /lightning/callbacks/abc HTTP/1.1', [host], [404, 405]],
      [
        'POST /lightning/webhooks/ramp HTTP/1.1',
        [host, ['Content-Type', 'application/json'], ['Content-Length', '3']],
        [400, 401],
      ],
    ];
    for (const [line, headers, statuses] of cases) {
      const body = line.startsWith('POST /lightning/webhooks') ? '{x}' : '';
      const answer = await rawRequest(port, rawText(line, headers, body));
      expect(statusOf(answer), `${line}: ${game.output()}`).to.be.oneOf(statuses);
      expect(game.alive()).to.equal(true);
    }
    const overview = await rawRequest(
      port,
      rawText('GET /lightning/console/api/overview HTTP/1.1', [host, OPERATOR]),
    );
    expect(statusOf(overview)).to.equal(200);
  });
});
