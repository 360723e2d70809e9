// internal/http/filters/with-authentication owns turning credentials into a user: the client
// certificate the TLS layer verified, then (later issues) tokens; anonymous when allowed.
// Failure is a 401 Status. Runs before authorization, which needs the user.
// Imports: auth, apierrors, http/context, http/respond.

import type { Context, MiddlewareHandler, Next } from 'hono';
import type { TLSSocket } from 'node:tls';
import { authenticate, type Authenticator, type AuthnResult, type PeerCertificate } from '../../auth/authenticator.js';
import { errors } from '../../apierrors/status.js';
import type { Logger } from '../../log/logger.js';
import type { Env } from '../context.js';
import { errorResponse } from '../respond.js';

/**
 * The peer certificate of each TLS connection, read once: getPeerCertificate() parses the
 * certificate anew on every call, and a keep-alive connection carries many requests.
 */
const byConnection = new WeakMap<TLSSocket, PeerCertificate | null>();

/**
 * Reads the peer certificate of the request's TLS socket (HTTP/1.1 and HTTP/2 alike). Over
 * HTTP/2 the connection is the session's socket: a request's own `socket` is a proxy node:http2
 * makes per stream, so keyed on it the certificate was parsed again for every request.
 */
export function peerCertificateOf(env: Env['Bindings'] | undefined): PeerCertificate | undefined {
  const incoming = env?.incoming as { socket?: TLSSocket; stream?: { session?: { socket?: TLSSocket } } } | undefined;
  const socket = incoming?.stream?.session?.socket ?? incoming?.socket;
  if (!socket || typeof socket.getPeerCertificate !== 'function') return undefined;
  const known = byConnection.get(socket);
  if (known !== undefined) return known ?? undefined;
  const read = readPeerCertificate(socket);
  byConnection.set(socket, read ?? null);
  return read;
}

function readPeerCertificate(socket: TLSSocket): PeerCertificate | undefined {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  const o = cert.subject?.O;
  const cn = cert.subject?.CN;
  const err = socket.authorizationError;
  return {
    authorized: socket.authorized,
    commonName: Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? ''),
    organizations: o === undefined ? [] : Array.isArray(o) ? o : [o],
    ...(err ? { authorizationError: err instanceof Error ? err.message : String(err) } : {}),
    ...(cert.raw ? { raw: cert.raw } : {}),
  };
}

/** The request's header lines as received ([name, value, name, value, ...]), HTTP/1.1 and HTTP/2 alike. */
function rawHeaderPairs(env: Env['Bindings'] | undefined): string[] {
  const incoming = env?.incoming as { rawHeaders?: string[] } | undefined;
  return incoming?.rawHeaders ?? [];
}

function rawHeaderValues(env: Env['Bindings'] | undefined, name: string): string[] {
  const raw = rawHeaderPairs(env);
  const want = name.toLowerCase();
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === want) out.push(raw[i + 1]!);
  return out;
}

export function withAuthentication(authenticators: readonly Authenticator[], anonymous: boolean | ((path: string) => boolean), log?: Logger): MiddlewareHandler<Env> {
  const proceed = (c: Context<Env>, next: Next, result: AuthnResult | { error: string }): Promise<Response | void> => {
    if ('error' in result) {
      // The reason, never the credential: no authenticator's message contains the token. The
      // client gets upstream's bare 401 Status.
      log?.debug('unable to authenticate the request', { reason: result.error });
      return Promise.resolve(errorResponse(c, errors.unauthorized()));
    }
    c.set('user', result.user);
    if (result.auditAnnotations) for (const [k, v] of Object.entries(result.auditAnnotations)) c.get('audit')?.annotate(k, v);
    return next();
  };
  // Not async: a client certificate is answered synchronously, and the request goes on
  // without a promise turn here.
  return (c, next) => {
    const result = authenticate(
      authenticators,
      {
        header: (name) => c.req.header(name),
        peerCertificate: peerCertificateOf(c.env),
        headerValues: (name) => rawHeaderValues(c.env, name),
        headerNames: () => [...new Set(rawHeaderPairs(c.env).filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()))],
      },
      { anonymous: typeof anonymous === 'function' ? anonymous(c.req.path) : anonymous },
    );
    return 'then' in result ? result.then((r) => proceed(c, next, r)) : proceed(c, next, result);
  };
}
