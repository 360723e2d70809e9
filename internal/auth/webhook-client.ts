// internal/auth/webhook-client owns the one HTTPS call the outbound webhooks make (the token
// webhook and the authorization webhook): a JSON POST to the server a kubeconfig names, with
// its CA, client certificate or bearer token, an absolute timeout covering the reply body, a
// size cap on the reply, and failures classified the way upstream's webhook client retries and
// counts them (timeout, retryable, other).
// Imports: cluster-cli/kubeconfig (the credentials type).

import { request } from 'node:https';
import type { KubeconfigCredentials } from '../cluster-cli/kubeconfig.js';

const MAX_RESPONSE_BYTES = 1 << 20;

export class WebhookCallError extends Error {
  override name = 'WebhookCallError';
  constructor(
    message: string,
    /** `timeout` when no complete reply came in time (or the service answered 504), else `error`. */
    readonly kind: 'timeout' | 'error',
    /** Upstream's DefaultShouldRetry: connection reset, HTTP 500, 504, 429, or a Retry-After header. */
    readonly retryable: boolean,
    /** The HTTP status when the service answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface PostOptions {
  /** Absolute limit for the whole exchange, reply body included. */
  timeoutMs: number;
  /** Names the service in messages, e.g. `the token review service`. */
  service: string;
}

/** POSTs `body` (JSON text) to the kubeconfig's server and returns the parsed JSON reply. */
export function postJson(target: KubeconfigCredentials, body: string, options: PostOptions): Promise<unknown> {
  const { service } = options;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: WebhookCallError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(e);
    };
    const req = request(
      target.server,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(target.token ? { authorization: `Bearer ${target.token}` } : {}) },
        ...(target.caPem ? { ca: target.caPem } : {}),
        ...(target.certPem ? { cert: target.certPem, key: target.keyPem } : {}),
        ...(target.tlsServerName ? { servername: target.tlsServerName } : {}),
        rejectUnauthorized: !target.insecureSkipTlsVerify,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            fail(new WebhookCallError(`${service} sent a reply larger than ${MAX_RESPONSE_BYTES} bytes`, 'error', false));
            req.destroy();
          } else chunks.push(c);
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) {
            const retryable = code === 500 || code === 504 || code === 429 || res.headers['retry-after'] !== undefined;
            return fail(new WebhookCallError(`${service} answered HTTP ${code}`, code === 504 ? 'timeout' : 'error', retryable, code));
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return fail(new WebhookCallError(`${service} did not answer JSON`, 'error', false, code));
          }
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(parsed);
        });
        res.on('error', (e) => fail(new WebhookCallError(`reading the reply of ${service}: ${e.message}`, 'error', false)));
      },
    );
    const timer = setTimeout(() => {
      fail(new WebhookCallError(`${service} did not answer within ${options.timeoutMs}ms`, 'timeout', false));
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => fail(new WebhookCallError(`calling ${service}: ${e.message}`, 'error', e.code === 'ECONNRESET')));
    req.end(body);
  });
}
