// internal/auth/webhook-client owns the one HTTPS call the outbound webhooks make (the token
// webhook and the authorization webhook): a JSON POST to the server a kubeconfig names, with
// its CA, client certificate or bearer token, an absolute timeout covering the reply body, a
// size cap on the reply, and failures classified the way upstream's webhook client retries and
// counts them (timeout, retryable, other). Connections are kept alive per TLS identity (CA,
// client certificate, server name): one agent each, with its secure context built once, so a
// call on a warm connection costs no handshake and no CA parsing (admission webhooks are called
// on every matching write).
// Imports: cluster-cli/kubeconfig (the credentials type).

import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { KubeconfigCredentials } from '../cluster-cli/kubeconfig.js';

const MAX_RESPONSE_BYTES = 1 << 20;
/** Idle keep-alive connections are closed after this long (Go's http.Transport IdleConnTimeout). */
const IDLE_CONNECTION_MS = 90_000;
/** Distinct TLS identities kept at once; the least recently used one's connections are closed beyond it. */
const MAX_AGENTS = 64;

const agents = new Map<string, Agent>();

/**
 * The keep-alive agent for one TLS identity. The secure context is built here once and shared by
 * the agent's connections; since the agent's pool key does not see it, identities never share an
 * agent (a connection verified against one CA is never reused for a target trusting another).
 */
function agentFor(target: KubeconfigCredentials): Agent {
  const key = JSON.stringify([target.caPem ?? null, target.certPem ?? null, target.keyPem ?? null, target.tlsServerName ?? null, target.insecureSkipTlsVerify]);
  let agent = agents.get(key);
  if (agent) {
    // Most recently used last: Map iteration order is insertion order.
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  const secureContext = createSecureContext({
    ...(target.caPem ? { ca: target.caPem } : {}),
    ...(target.certPem ? { cert: target.certPem, key: target.keyPem } : {}),
  });
  agent = new Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo', secureContext, rejectUnauthorized: !target.insecureSkipTlsVerify, ...(target.tlsServerName ? { servername: target.tlsServerName } : {}) });
  const connect = agent.createConnection.bind(agent);
  agent.createConnection = ((...args: Parameters<typeof connect>) => {
    const socket = connect(...args) as Socket;
    // Node's agents leave TLS sockets with Nagle on; a request must never wait for an ACK.
    socket.setNoDelay(true);
    return socket;
  }) as typeof agent.createConnection;
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

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
        agent: agentFor(target),
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
