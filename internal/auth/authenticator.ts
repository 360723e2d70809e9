// internal/auth/authenticator owns the authentication contract and the union that runs the
// configured authenticators in order. Each answers a user, no opinion (null), or an error; the
// first user wins, and errors only matter when nobody recognised the request.
// Imports: user.

import { anonymousUser, withAuthenticatedGroup, type UserInfo } from './user.js';

/** The peer certificate as the TLS layer saw it. */
export interface PeerCertificate {
  /** True when the chain verified against the client CA. */
  authorized: boolean;
  commonName: string;
  organizations: string[];
  authorizationError?: string;
  /** The certificate (DER), for authenticators that verify it against a CA of their own. */
  raw?: Buffer;
}

export interface AuthnRequest {
  header(name: string): string | undefined;
  peerCertificate: PeerCertificate | undefined;
  /**
   * Audiences the credential must be valid for (a TokenReview's spec.audiences). Undefined
   * means the API server's own audiences (--api-audiences), as for every API request.
   */
  audiences?: readonly string[];
  /** Every value of a repeated header, one entry per header line (the authenticating proxy's groups). */
  headerValues?(name: string): string[];
  /** The names of all request headers (the authenticating proxy's extra prefix). */
  headerNames?(): string[];
}

/**
 * A user together with the audiences the credential was found valid for (upstream's
 * authenticator.Response). Authenticators that know nothing of audiences return a bare
 * UserInfo instead.
 */
export interface AuthnResponse {
  user: UserInfo;
  audiences?: readonly string[];
  /** Audit annotations the authentication adds to the request's event (a stale token). */
  auditAnnotations?: Readonly<Record<string, string>>;
}

export type AuthnResult = { user: UserInfo; authenticator: string; audiences?: readonly string[]; auditAnnotations?: Readonly<Record<string, string>> };

export interface Authenticator {
  readonly name: string;
  /** A user when this authenticator recognises the request, null for no opinion; throws AuthnError when it recognises but rejects the credentials. */
  authenticate(req: AuthnRequest): Promise<UserInfo | AuthnResponse | null> | UserInfo | AuthnResponse | null;
}

export class AuthnError extends Error {
  override name = 'AuthnError';
}

export interface UnionOptions {
  /** Unrecognised requests become system:anonymous instead of 401. */
  anonymous: boolean;
}

const isResponse = (r: UserInfo | AuthnResponse): r is AuthnResponse => 'user' in r;

type UnionResult = AuthnResult | { error: string };

/**
 * Runs authenticators in order. Returns an error when the request must get 401. Answers
 * synchronously while every authenticator it asks answers synchronously (a client certificate,
 * the authenticating proxy's headers): most requests then take no promise turn here.
 */
export function authenticate(authenticators: readonly Authenticator[], req: AuthnRequest, options: UnionOptions): UnionResult | Promise<UnionResult> {
  const failures: string[] = [];
  for (let i = 0; i < authenticators.length; i++) {
    const a = authenticators[i]!;
    let r: ReturnType<Authenticator['authenticate']>;
    try {
      r = a.authenticate(req);
    } catch (e) {
      failures.push(failureMessage(e));
      continue;
    }
    if (isThenable(r)) return settleFrom(authenticators, i, r, req, options, failures);
    if (r) return resultOf(a, r);
  }
  return noUser(failures, options);
}

/** The rest of the union once an authenticator answered with a promise. */
async function settleFrom(authenticators: readonly Authenticator[], at: number, pending: Promise<UserInfo | AuthnResponse | null>, req: AuthnRequest, options: UnionOptions, failures: string[]): Promise<UnionResult> {
  for (let i = at; i < authenticators.length; i++) {
    const a = authenticators[i]!;
    try {
      const r = await (i === at ? pending : a.authenticate(req));
      if (r) return resultOf(a, r);
    } catch (e) {
      failures.push(failureMessage(e));
    }
  }
  return noUser(failures, options);
}

/** Whether an authenticator's answer is a promise (the rest of a chain then waits for it). */
export const isThenable = <T>(r: T | Promise<T>): r is Promise<T> => typeof (r as { then?: unknown } | null)?.then === 'function';

// Upstream's aggregate: the messages, without the authenticators' names.
export const failureMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function resultOf(a: Authenticator, r: UserInfo | AuthnResponse): AuthnResult {
  if (isResponse(r)) return { user: withAuthenticatedGroup(r.user), authenticator: a.name, ...(r.audiences ? { audiences: r.audiences } : {}), ...(r.auditAnnotations ? { auditAnnotations: r.auditAnnotations } : {}) };
  return { user: withAuthenticatedGroup(r), authenticator: a.name };
}

function noUser(failures: string[], options: UnionOptions): UnionResult {
  // Credentials that were presented and rejected are a 401 even when anonymous access is on.
  if (failures.length > 0) return { error: failures.join('; ') };
  if (options.anonymous) return { user: anonymousUser, authenticator: 'anonymous' };
  return { error: 'no credentials' };
}
