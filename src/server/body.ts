/**
 * A request body as raw bytes (a webhook's signature is over them) with a size cap: the routes
 * are open to the internet, so an oversized body is cut off rather than buffered.
 */

export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

export async function readRawBody(request: Request, maxBytes: number): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw new BodyTooLargeError(`body over ${maxBytes} bytes`);
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new BodyTooLargeError(`body over ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** JSON of a body, or undefined when it is not JSON: callers treat the body as a hint only. */
export function parseJson(raw: Buffer): unknown {
  try {
    return raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
