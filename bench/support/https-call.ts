// bench/support/https-call owns one HTTPS request with a deadline, made from the bench process
// itself for control traffic (leader look-ups, readiness, failover probes) — never for load,
// which the generator processes make. Imports: node only.

import { request, type Agent } from 'node:https';

export interface CallResult {
  status: number;
  body: Buffer;
}

export interface CallOptions {
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** The request is destroyed (and the promise rejects) after this long. Default 5 s. */
  timeoutMs?: number;
}

/** Rejects on network errors and on the deadline; any status resolves. */
export function httpsCall(agent: Agent, url: string, o: CallOptions = {}): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined : Buffer.from(o.body);
    const headers: Record<string, string> = { ...o.headers };
    if (body) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(body.length);
    }
    const req = request(url, { method: o.method ?? 'GET', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${o.timeoutMs ?? 5000} ms`)), o.timeoutMs ?? 5000);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}
