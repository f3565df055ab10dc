/**
 * A TCP proxy in front of a database server that, once armed, lets the next request through
 * and drops its answer by closing the client's connection: what a network blip or a failover
 * does to a write the server applied. The client sees a lost connection; the server committed.
 */
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

export interface ReplyDropper {
  /** The proxy's loopback port. */
  port: number;
  /** Drops the next answer the server sends, on any connection, and closes that connection. */
  arm(): void;
  /** How many answers were dropped so far. */
  dropped(): number;
  close(): void;
}

export async function startReplyDropper(upstreamPort: number): Promise<ReplyDropper> {
  let armed = false;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (armed) {
        armed = false;
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => {});
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(s);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    arm: () => {
      armed = true;
    },
    dropped: () => dropped,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
