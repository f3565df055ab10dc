/**
 * Requests per second of the emulator for simple GETs over loopback. The emulator runs in
 * a child process (one core, its own event loop) so that the load generator, an undici
 * keep-alive Pool with pipelining, does not share its core.
 *
 *   npm run bench:emulator            (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_PIPELINING)
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const PIPELINING = Number(process.env.BENCH_PIPELINING ?? 16);
const TARGET_RPS = 10_000;

interface Info {
  url: string;
  apiKey: string;
}

async function startChild() {
  const bin = fileURLToPath(new URL('../bin/colyseus-lightning.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffer = '';
  child.stdout.setEncoding('utf8');
  for await (const chunk of child.stdout) {
    buffer += chunk;
    if (buffer.includes('\n')) break;
  }
  return { child, info: JSON.parse(buffer.split('\n')[0] as string) as Info };
}

async function measure(pool: Pool, path: string, apiKey: string, seconds: number): Promise<number> {
  let done = 0;
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const res = await pool.request({ path, method: 'GET', headers: { apikey: apiKey } });
      await res.body.dump();
      if (res.statusCode === 200) done++;
      else errors++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS * PIPELINING }, worker));
  const elapsed = (performance.now() - start) / 1000;
  if (errors > 0) throw new Error(`${errors} non-200 answers on ${path}`);
  return done / elapsed;
}

const { child, info } = await startChild();
try {
  const created = await request(`${info.url}/v0/withdrawal-requests`, {
    method: 'POST',
    headers: { apikey: info.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ amount: '100000', description: 'bench', expiresIn: 3600 }),
  });
  const { data } = (await created.body.json()) as { data: { id: string } };
  const pool = new Pool(info.url, { connections: CONNECTIONS, pipelining: PIPELINING });
  const paths = ['/v0/wallet', `/v0/withdrawal-requests/${data.id}`];
  console.log(
    `emulator in a child process; undici Pool ${CONNECTIONS} connections x pipelining ${PIPELINING}; ${SECONDS}s per route`,
  );
  for (const path of paths) {
    await measure(pool, path, info.apiKey, 1); // warm-up: JIT and connections
    const rps = await measure(pool, path, info.apiKey, SECONDS);
    const label = path.startsWith('/v0/withdrawal-requests/')
      ? 'GET /v0/withdrawal-requests/{id}'
      : `GET ${path}`;
    const verdict = rps >= TARGET_RPS ? 'ok' : 'BELOW TARGET';
    console.log(
      `${label.padEnd(36)} ${Math.round(rps).toLocaleString('en-US').padStart(8)} req/s  (${verdict}: target ${TARGET_RPS.toLocaleString('en-US')})`,
    );
  }
  await pool.close();
} finally {
  child.kill('SIGTERM');
  await once(child, 'exit');
}
