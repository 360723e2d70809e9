// internal/testserver/api-client owns a small HTTPS client for tests: real TLS against the
// server's CA, a client certificate (the admin's, or one issued for any user and groups),
// HTTP/1.1 or HTTP/2, raw bytes in and out. Test-only; the server never imports it.
// Imports: node only.

import { request as httpsRequest, Agent } from 'node:https';
import { connect as http2Connect } from 'node:http2';

export interface ClientCredentials {
  caPem: string;
  certPem?: string;
  keyPem?: string;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text(): string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the body as is (no JSON encoding). */
  raw?: boolean;
}

export class ApiClient {
  private readonly agent: Agent;

  constructor(
    readonly baseUrl: string,
    private readonly creds: ClientCredentials,
  ) {
    this.agent = new Agent({ ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, keepAlive: true });
  }

  close(): void {
    this.agent.destroy();
  }

  request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const url = new URL(path, this.baseUrl);
    let payload: Buffer | undefined;
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) {
      payload = options.raw ? Buffer.from(options.body as string | Buffer) : Buffer.from(JSON.stringify(options.body));
      headers['content-type'] ??= 'application/json';
      // Node sends DELETE bodies unframed unless told their length.
      headers['content-length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text: () => body.toString('utf8'),
            json: <T>() => JSON.parse(body.toString('utf8')) as T,
          });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }

  get(path: string, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request('GET', path, headers ? { headers } : {});
  }
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request('POST', path, { body, ...(headers ? { headers } : {}) });
  }
  put(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request('PUT', path, { body, ...(headers ? { headers } : {}) });
  }
  delete(path: string, body?: unknown): Promise<ApiResponse> {
    return this.request('DELETE', path, body === undefined ? {} : { body });
  }

  /**
   * Streams a watch: calls `onLine` per newline-terminated chunk until `stop()` or the end.
   * Resolves with the lines seen when the server ends the stream.
   */
  watch(path: string, onLine: (line: string) => void): { done: Promise<{ status: number; lines: string[] }>; stop(): void } {
    const url = new URL(path, this.baseUrl);
    const lines: string[] = [];
    let stopReq = () => {};
    const done = new Promise<{ status: number; lines: string[] }>((resolve, reject) => {
      const req = httpsRequest(url, { method: 'GET', agent: this.agent }, (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            lines.push(line);
            onLine(line);
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, lines }));
        res.on('close', () => resolve({ status: res.statusCode ?? 0, lines }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, lines }));
      });
      req.on('error', (e) => (lines.length ? resolve({ status: 0, lines }) : reject(e)));
      req.end();
      stopReq = () => req.destroy();
    });
    return { done, stop: () => stopReq() };
  }

  /** One request over HTTP/2 (ALPN h2), to check protocol negotiation. */
  http2Get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; alpn: string | false; body: string }> {
    return new Promise((resolve, reject) => {
      const session = http2Connect(this.baseUrl, { ca: this.creds.caPem, cert: this.creds.certPem, key: this.creds.keyPem });
      session.on('error', reject);
      const req = session.request({ ...headers, ':path': path });
      let body = '';
      let status = 0;
      req.on('response', (h) => (status = Number(h[':status'])));
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const alpn = session.alpnProtocol ?? false;
        session.close();
        resolve({ status, alpn, body });
      });
      req.end();
    });
  }
}
