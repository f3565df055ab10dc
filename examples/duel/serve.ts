/**
 * Answers the client's files (`/`, `/client.js`, `/style.css`) before Colyseus's own request
 * listeners, which get every other request. Not router endpoints: the router's Node adapter
 * never ends a response whose body is one chunk larger than the socket's high-water mark
 * (16 KiB), and the bundle is larger (examples/arena/serve.ts says more).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ClientFiles } from './build.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function serveFiles(server: Server, files: ClientFiles): void {
  const others = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const file =
      req.method === 'GET' ? files.get((req.url ?? '/').split('?')[0] ?? '/') : undefined;
    if (!file) {
      for (const listener of others) listener.call(server, req, res);
      return;
    }
    res.writeHead(200, {
      'content-type': `${file.type}; charset=utf-8`,
      'content-length': file.body.length,
      'cache-control': 'no-cache',
    });
    res.end(file.body);
  });
}
