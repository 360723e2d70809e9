// bench/targets/free-port owns picking a free loopback TCP port for a process the bench starts
// (so it can be polled from the moment it is spawned). Imports: node only.

import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
