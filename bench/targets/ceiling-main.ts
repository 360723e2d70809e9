// bench/targets/ceiling-main is the entry point of the ceiling baseline: a bare node:https
// server with the real server's certificate, key and client-certificate check, answering each
// route with bytes captured from the real server's response (status, headers, body) and
// doing nothing else. What it measures is the cost of TLS, HTTP/1.1 and the bytes themselves.
// Configured over the IPC channel. Imports: node only.

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';

export interface CeilingRoute {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  bodyFile: string;
}

export type ToCeiling = { type: 'listen'; cert: string; key: string; ca: string } | { type: 'route'; route: CeilingRoute };
export type FromCeiling = { type: 'listening'; port: number } | { type: 'routed' } | { type: 'error'; message: string };

if (!process.send) throw new Error('ceiling-main must be started with an IPC channel (child_process.fork)');

const routes = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();
let server: Server | undefined;
const send = (m: FromCeiling) => process.send!(m);

process.on('message', (raw) => {
  const m = raw as ToCeiling;
  try {
    if (m.type === 'listen') {
      server = createServer({ cert: m.cert, key: m.key, ca: m.ca, requestCert: true, rejectUnauthorized: true, keepAliveTimeout: 60_000 }, (req, res) => {
        const route = routes.get(`${req.method} ${req.url}`);
        // Drain any request body before answering, as a real server must.
        req.resume();
        req.on('end', () => {
          if (!route) {
            res.writeHead(404).end();
            return;
          }
          res.writeHead(route.status, { ...route.headers, 'content-length': route.body.length });
          res.end(route.body);
        });
      });
      server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server!.address() as { port: number }).port }));
    } else if (m.type === 'route') {
      const { route } = m;
      routes.set(`${route.method} ${route.path}`, { status: route.status, headers: route.headers, body: readFileSync(route.bodyFile) });
      send({ type: 'routed' });
    }
  } catch (e) {
    send({ type: 'error', message: (e as Error).message });
  }
});
process.on('disconnect', () => process.exit(0));
