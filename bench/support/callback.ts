/**
 * The callback a benchmark POSTs for a claimed resource: the body the service would send,
 * to the lightning callback route of the game server. One place for the benchmarks that
 * settle intents this way (scale, loop, screen).
 */
import type { Pool } from 'undici';

/** What a benchmark knows of an intent it will settle: its callback token and resource id. */
export interface CallbackItem {
  token: string;
  remoteId: string;
}

/** The request: path, method, headers and body (give it a pool, or prefix the path with a URL). */
export function callbackPost(item: CallbackItem) {
  return {
    path: `/lightning/callbacks/${item.token}`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: item.remoteId, status: 'completed' }),
  };
}

/** POSTs the item's callback through `pool`, reads the answer, and resolves with its status. */
export async function postCallback(pool: Pool, item: CallbackItem): Promise<number> {
  const res = await pool.request(callbackPost(item));
  await res.body.dump();
  return res.statusCode;
}
