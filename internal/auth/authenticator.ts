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

/** Runs authenticators in order. Returns an error when the request must get 401. */
export async function authenticate(
  authenticators: readonly Authenticator[],
  req: AuthnRequest,
  options: UnionOptions,
): Promise<AuthnResult | { error: string }> {
  const failures: string[] = [];
  for (const a of authenticators) {
    try {
      const r = await a.authenticate(req);
      if (!r) continue;
      if (isResponse(r)) return { user: withAuthenticatedGroup(r.user), authenticator: a.name, ...(r.audiences ? { audiences: r.audiences } : {}), ...(r.auditAnnotations ? { auditAnnotations: r.auditAnnotations } : {}) };
      return { user: withAuthenticatedGroup(r), authenticator: a.name };
    } catch (e) {
      // Upstream's aggregate: the messages, without the authenticators' names.
      failures.push(e instanceof Error ? e.message : String(e));
    }
  }
  // Credentials that were presented and rejected are a 401 even when anonymous access is on.
  if (failures.length > 0) return { error: failures.join('; ') };
  if (options.anonymous) return { user: anonymousUser, authenticator: 'anonymous' };
  return { error: 'no credentials' };
}
