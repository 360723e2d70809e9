// e2e/support/https-client owns the small HTTPS client the multi-replica e2e tests and their
// load processes use against clusterd replicas: the admin client certificate, keep-alive per
// replica, a deadline per request, and errors sorted by what a client may conclude from them
// (the request certainly never reached the server, or its outcome is unknown). Test-only.

import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';

export interface Credentials {
  ca: string;
  cert: string;
  key: string;
}

/** The admin credentials of a cluster PKI directory (clusterd pki / generateClusterPki). */
export function adminCredentials(pkiDir: string): Credentials {
  return {
    ca: readFileSync(join(pkiDir, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(pkiDir, 'admin.crt'), 'utf8'),
    key: readFileSync(join(pkiDir, 'admin.key'), 'utf8'),
  };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request that got no HTTP answer. `sent` is false only when the connection was refused, so
 * the server cannot have seen the request; anything else (reset, timeout) may have reached it.
 */
export class RequestFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly sent: boolean,
  ) {
    super(message);
    this.name = 'RequestFailure';
  }
}

export class HttpsClient {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly creds: Credentials) {}

  private agent(origin: string): Agent {
    let a = this.agents.get(origin);
    if (!a) {
      a = new Agent({ ca: this.creds.ca, cert: this.creds.cert, key: this.creds.key, keepAlive: true, maxSockets: 64 });
      this.agents.set(origin, a);
    }
    return a;
  }

  /** Forgets pooled connections to `origin` (after its server died: they are dead too). */
  reset(origin: string): void {
    this.agents.get(origin)?.destroy();
    this.agents.delete(origin);
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }

  request(base: string, method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<HttpResult> {
    const url = new URL(path, base);
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      let settled = false;
      const req = httpsRequest(url, { method, agent: this.agent(url.origin), headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (e) => fail(e));
        res.on('aborted', () => fail(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' })));
      });
      const fail = (e: Error & { code?: string }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const code = e.code ?? 'ERROR';
        reject(new RequestFailure(`${method} ${url.href}: ${e.message}`, code, code !== 'ECONNREFUSED'));
      };
      const timer = setTimeout(() => {
        fail(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
        req.destroy();
      }, timeoutMs);
      req.on('error', fail);
      req.end(payload);
    });
  }

  async json<T>(base: string, method: string, path: string, body?: unknown, timeoutMs?: number): Promise<{ status: number; body: T }> {
    const r = await this.request(base, method, path, body, timeoutMs);
    let parsed: unknown;
    try {
      parsed = JSON.parse(r.body);
    } catch {
      parsed = r.body;
    }
    return { status: r.status, body: parsed as T };
  }
}
