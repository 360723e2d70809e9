// internal/auth/webhook-client owns the one HTTPS call the outbound webhooks make (the token
// webhook, the authorization webhook, admission and conversion webhooks): a JSON POST to the
// server a kubeconfig names, with its CA, client certificate or bearer token, an absolute
// timeout covering the reply body, a size cap on the reply, and failures classified the way
// upstream's webhook client retries and counts them (timeout, retryable, other). Connections
// are kept alive per TLS identity (CA, client certificate, server name): one undici Agent each,
// with its secure context built once, so a call on a warm connection costs no handshake and no
// CA parsing (admission webhooks are called on every matching write). undici rather than
// node:https: the same call costs about half the client CPU (node:https builds a ClientRequest,
// an agent queue entry and socket listeners per call: measured 101–128 µs against 50–60 µs per
// 5 KB review on loopback), and this runs on the server's one event loop for every write a
// webhook selects. It is required on first use (internal/lazy): a server without webhooks
// never loads it.
// Imports: cluster-cli/kubeconfig (the credentials type), lazy, memo.

import { createSecureContext } from 'node:tls';
import type * as Undici from 'undici';
import type { KubeconfigCredentials } from '../cluster-cli/kubeconfig.js';
import { lazyRequire } from '../lazy/lazy-require.js';
import { BoundedMap } from '../memo/bounded-map.js';

const undici = lazyRequire<typeof Undici>('undici');

const MAX_RESPONSE_BYTES = 1 << 20;
/** Idle keep-alive connections are closed after this long (Go's http.Transport IdleConnTimeout). */
const IDLE_CONNECTION_MS = 90_000;
/** Distinct TLS identities kept at once; the least recently used one's connections are closed beyond it. */
const MAX_AGENTS = 64;

const agents = new Map<string, Undici.Agent>();

/**
 * The keep-alive agent for one TLS identity. The secure context is built here once and shared by
 * the agent's connections; identities never share an agent (a connection verified against one
 * CA is never reused for a target trusting another).
 */
function agentFor(target: KubeconfigCredentials): Undici.Agent {
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
  agent = new (undici().Agent)({
    // undici hands these to tls.connect (and turns Nagle off on its sockets: a request never
    // waits for an ACK). An IP address gets no SNI unless the target names a server.
    connect: { secureContext, rejectUnauthorized: !target.insecureSkipTlsVerify, ...(target.tlsServerName ? { servername: target.tlsServerName } : {}) },
    // A server that announces no keep-alive timeout of its own keeps Go's idle timeout.
    keepAliveTimeout: IDLE_CONNECTION_MS,
    keepAliveMaxTimeout: IDLE_CONNECTION_MS,
  });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Undici.Agent];
    agents.delete(oldestKey);
    // Calls already under way on it finish; its idle connections close.
    oldest.close().catch(() => undefined);
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

/**
 * A connection the peer reset or closed under the request (undici's "other side closed" is
 * what node:https called "socket hang up", ECONNRESET): upstream retries those.
 */
const RESET_CODES = new Set(['ECONNRESET', 'UND_ERR_SOCKET']);

const errorCode = (e: unknown): string | undefined => (e as { code?: unknown } | null)?.code as string | undefined;

/**
 * The failure as it reads after `calling <service>: `. A connection closed before the reply is
 * Go's "EOF" (what upstream's message ends with); undici's own words, "other side closed", stay
 * beside it.
 */
const messageOf = (e: unknown): string => {
  const text = e instanceof Error ? e.message : String(e);
  return errorCode(e) === 'UND_ERR_SOCKET' ? `EOF (${text})` : text;
};

/** Server URLs split as undici's Agent takes them; the few targets a server calls repeat. */
const parsedUrls = new BoundedMap<string, { origin: string; path: string }>(256);

function originAndPath(server: string): { origin: string; path: string } {
  let parsed = parsedUrls.get(server);
  if (parsed === undefined) {
    const url = new URL(server);
    parsed = { origin: url.origin, path: `${url.pathname}${url.search}` };
    parsedUrls.set(server, parsed);
  }
  return parsed;
}

/**
 * The call's absolute deadline as the abort signal undici takes: undici accepts an emitter
 * (`on`, `once`, `removeListener`), and an AbortController per call cost more of the call's
 * client CPU than anything else the call adds to undici's own work (about 25 µs: AbortSignal's
 * listener machinery). Only the request registers a listener, once.
 */
class Deadline {
  aborted = false;
  private listener: (() => void) | undefined;
  /** undici checks that `on` exists (an EventEmitter) and registers with `once`. */
  once(_event: 'abort', listener: () => void): void {
    this.listener = listener;
  }
  readonly on = this.once;
  removeListener(_event: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }
  expire(): void {
    this.aborted = true;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }
}

/** POSTs `body` (JSON text) to the kubeconfig's server and returns the parsed JSON reply. */
export async function postJson(target: KubeconfigCredentials, body: string, options: PostOptions): Promise<unknown> {
  const { service } = options;
  const deadline = new Deadline();
  const timer = setTimeout(() => deadline.expire(), options.timeoutMs);
  const timeout = () => new WebhookCallError(`${service} did not answer within ${options.timeoutMs}ms`, 'timeout', false);
  try {
    let res: Undici.Dispatcher.ResponseData;
    try {
      const { origin, path } = originAndPath(target.server);
      res = await agentFor(target).request({
        origin,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(target.token ? { authorization: `Bearer ${target.token}` } : {}) },
        body,
        // The emitter form of undici's signal (see Deadline).
        signal: deadline as unknown as NonNullable<Undici.Dispatcher.RequestOptions['signal']>,
      });
    } catch (e) {
      if (deadline.aborted) throw timeout();
      throw new WebhookCallError(`calling ${service}: ${messageOf(e)}`, 'error', RESET_CODES.has(errorCode(e) ?? ''));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const c = chunk as Buffer;
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) {
          res.body.destroy();
          throw new WebhookCallError(`${service} sent a reply larger than ${MAX_RESPONSE_BYTES} bytes`, 'error', false);
        }
        chunks.push(c);
      }
    } catch (e) {
      if (e instanceof WebhookCallError) throw e;
      if (deadline.aborted) throw timeout();
      throw new WebhookCallError(`reading the reply of ${service}: ${messageOf(e)}`, 'error', false);
    }
    const code = res.statusCode;
    if (code < 200 || code >= 300) {
      const retryable = code === 500 || code === 504 || code === 429 || res.headers['retry-after'] !== undefined;
      throw new WebhookCallError(`${service} answered HTTP ${code}`, code === 504 ? 'timeout' : 'error', retryable, code);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    } catch {
      throw new WebhookCallError(`${service} did not answer JSON`, 'error', false, code);
    }
  } finally {
    clearTimeout(timer);
  }
}
