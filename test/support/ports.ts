/** A loopback port that was free a moment ago (the OS picks it; we release it at once). */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const { port, release } = await holdPort();
  await release();
  return port;
}

/**
 * A loopback port held until `release()`: nothing else on the machine can take it meanwhile.
 * For a server that learns its port long before it listens (its public URL is made first):
 * released just before that listen, the window another process's listen(0) could take the port
 * in is a moment, not the seconds of a start. (Colyseus's listen never settles when its port is
 * taken: it waits for 'listening'.)
 */
export function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    // A connection meanwhile (a start's probe of its own URL) is refused at once: an open one
    // would hold close(), and so the release, until it ended.
    const server = createServer((socket) => socket.destroy());
    server.on('error', reject);
    // Unref'd: a start that fails before its release keeps no process alive.
    server.unref();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({ port, release: () => new Promise((done) => server.close(() => done())) });
    });
  });
}
