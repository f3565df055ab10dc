/**
 * The set-up probe: in development the server POSTs to its own callback route at `publicUrl` and
 * warns, with the fix, when the answer is not its own. Otherwise a forgotten route or a wrong
 * `publicUrl` is silent: every payment settles only when the reconciler re-reads it.
 *
 * Cost: one request once the server listens, on timers that never keep the process alive.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { LightningLogger } from './logger.js';

/** The header the callback route answers a probe with. */
export const PROBE_HEADER = 'x-colyseus-lightning-probe';

/** A probe token: the '.' never occurs in an intent's token (base64url), so none can match. */
export function newProbeToken(): string {
  return `probe.${randomBytes(12).toString('base64url')}`;
}

interface ProbeOptions {
  publicUrl: string;
  prefix: string;
  token: string;
  logger: LightningLogger;
  /** When the reconciler would re-read a payment whose callback never came, in ms. */
  firstCheckMs: number;
  /** Stops the probe (the server closes). */
  signal: AbortSignal;
  /** How long a refused connection counts as "not listening yet". Default 10,000 ms. */
  waitMs?: number;
  /** Between two attempts while refused. Default 200 ms. */
  retryMs?: number;
}

/** What the probe found. */
type ProbeResult = 'own' | 'other' | 'unreachable' | 'stopped';

export async function probeCallbackRoute(o: ProbeOptions): Promise<ProbeResult> {
  const shown = `${o.publicUrl}${o.prefix}/callbacks/…`;
  const url = `${o.publicUrl}${o.prefix}/callbacks/${o.token}`;
  const fallback = `; until then each payment settles only when the reconciler re-reads it, ${Math.round(o.firstCheckMs / 1000)} s after it was made`;
  const deadline = Date.now() + (o.waitMs ?? 10_000);
  for (;;) {
    if (o.signal.aborted) return 'stopped';
    try {
      const res = await request(url, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
        signal: o.signal,
      });
      await res.body.dump();
      if (res.statusCode === 200 && res.headers[PROBE_HEADER] === 'ok') {
        o.logger.info(`callbacks reach this server at ${shown}`);
        return 'own';
      }
      o.logger.warn(
        `callbacks will not reach this server: POST ${shown} answered ${res.statusCode}, not from this server's callback route. Put \`routes: createRouter({ ...lightning.endpoints() })\` in defineServer (or call \`lightning.attach(transport.server)\`), and set publicUrl to this server's own address${fallback}`,
      );
      return 'other';
    } catch (err) {
      if (o.signal.aborted) return 'stopped';
      const code = (err as { code?: string }).code ?? (err as Error).message;
      if (code === 'ECONNREFUSED' && Date.now() < deadline) {
        // The server is probably not listening yet: ready() runs before listen().
        await sleep(o.retryMs ?? 200, undefined, { signal: o.signal, ref: false }).catch(() => {});
        continue;
      }
      o.logger.warn(
        `callbacks will not reach this server: nothing answers at ${o.publicUrl} (${code}). Set publicUrl to the address this server listens on (in development http://127.0.0.1:<port>, the port passed to listen())${fallback}`,
      );
      return 'unreachable';
    }
  }
}
