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
}

export interface AuthnRequest {
  header(name: string): string | undefined;
  peerCertificate: PeerCertificate | undefined;
}

export type AuthnResult = { user: UserInfo; authenticator: string };

export interface Authenticator {
  readonly name: string;
  /** A user when this authenticator recognises the request, null for no opinion; throws AuthnError when it recognises but rejects the credentials. */
  authenticate(req: AuthnRequest): Promise<UserInfo | null> | UserInfo | null;
}

export class AuthnError extends Error {
  override name = 'AuthnError';
}

export interface UnionOptions {
  /** Unrecognised requests become system:anonymous instead of 401. */
  anonymous: boolean;
}

/** Runs authenticators in order. Returns null when the request must get 401. */
export async function authenticate(
  authenticators: readonly Authenticator[],
  req: AuthnRequest,
  options: UnionOptions,
): Promise<{ user: UserInfo; authenticator: string } | { error: string }> {
  const failures: string[] = [];
  for (const a of authenticators) {
    try {
      const user = await a.authenticate(req);
      if (user) return { user: withAuthenticatedGroup(user), authenticator: a.name };
    } catch (e) {
      failures.push(`${a.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  // Credentials that were presented and rejected are a 401 even when anonymous access is on.
  if (failures.length > 0) return { error: failures.join('; ') };
  if (options.anonymous) return { user: anonymousUser, authenticator: 'anonymous' };
  return { error: 'no credentials' };
}
