// internal/auth/token-authenticator owns bearer tokens: reading `Authorization: Bearer <token>`
// and running the token authenticators (static file, service accounts, bootstrap, and any added
// later) in order, as upstream's bearertoken + tokenunion do. A bearer token nobody accepts is
// an error (401 even with anonymous access on). Audience-agnostic authenticators are wrapped as
// upstream's WrapAudienceAgnosticToken does: they answer only when the audiences asked for meet
// the API audiences, and the response carries that intersection.
// No message produced here or by a token authenticator may contain the token.
// Imports: authenticator, user.

import { AuthnError, failureMessage, isThenable, type Authenticator, type AuthnRequest, type AuthnResponse } from './authenticator.js';
import type { UserInfo } from './user.js';

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * True when the authenticator checks `audiences` itself and answers the audiences the token
   * is valid for (service-account tokens, a token webhook). Absent or false: audience
   * agnostic, and the chain applies the API audiences.
   */
  readonly audienceAware?: boolean;
  /**
   * A user when the token is recognised, null when it is not this authenticator's; throws
   * AuthnError when it is recognisably this authenticator's but invalid (expired, revoked).
   * `audiences` is never empty: the request's audiences or else the API audiences.
   */
  authenticateToken(token: string, audiences: readonly string[]): Promise<UserInfo | AuthnResponse | null> | UserInfo | AuthnResponse | null;
}

/** The token of `Authorization: Bearer <token>`, or undefined when the header is absent or not a bearer one. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  // As upstream: split on single spaces into at most three parts; the scheme is case-insensitive.
  const parts = header.trim().split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1]!;
  return token === '' ? undefined : token;
}

const isResponse = (r: UserInfo | AuthnResponse): r is AuthnResponse => 'user' in r;

/**
 * The bearer-token authenticator over `tokens` (tried in order; the first user wins).
 * `apiAudiences` are the server's own audiences (--api-audiences), never empty. Answers
 * without a promise while every token authenticator it asks does (a static token, a
 * service-account token verified a moment ago whose objects the cache holds), as the
 * authenticator union does.
 */
export function bearerTokenAuthenticator(tokens: readonly TokenAuthenticator[], apiAudiences: readonly string[]): Authenticator {
  /** The API audiences an audience-agnostic authenticator answers for; null: it is not asked. */
  const implicitFor = (t: TokenAuthenticator, wanted: readonly string[]): string[] | undefined | null => {
    if (t.audienceAware) return undefined;
    const implicit = apiAudiences.filter((a) => wanted.includes(a));
    return implicit.length === 0 ? null : implicit;
  };
  const answer = (r: UserInfo | AuthnResponse, implicit: string[] | undefined): AuthnResponse => {
    const response = isResponse(r) ? r : { user: r };
    return implicit ? { ...response, audiences: implicit } : response;
  };
  const rejected = (failures: string[]): AuthnError =>
    new AuthnError(failures.length > 0 ? `invalid bearer token, ${failures.join('; ')}` : 'invalid bearer token');

  /** The rest of the chain once token authenticator `at` answered with a promise. */
  async function settleFrom(at: number, pending: Promise<UserInfo | AuthnResponse | null>, token: string, wanted: readonly string[], failures: string[]): Promise<AuthnResponse> {
    for (let i = at; i < tokens.length; i++) {
      const t = tokens[i]!;
      const implicit = implicitFor(t, wanted);
      if (implicit === null) continue;
      try {
        const r = await (i === at ? pending : t.authenticateToken(token, wanted));
        if (r) return answer(r, implicit);
      } catch (e) {
        failures.push(failureMessage(e));
      }
    }
    throw rejected(failures);
  }

  return {
    name: 'bearer-token',
    authenticate(req: AuthnRequest): Promise<AuthnResponse | null> | AuthnResponse | null {
      const token = bearerToken(req.header('authorization'));
      if (token === undefined) return null;
      const wanted = req.audiences && req.audiences.length > 0 ? req.audiences : apiAudiences;
      const failures: string[] = [];
      for (let i = 0; i < tokens.length; i++) {
        const t = tokens[i]!;
        const implicit = implicitFor(t, wanted);
        if (implicit === null) continue;
        let r: ReturnType<TokenAuthenticator['authenticateToken']>;
        try {
          r = t.authenticateToken(token, wanted);
        } catch (e) {
          failures.push(failureMessage(e));
          continue;
        }
        if (isThenable(r)) return settleFrom(i, r, token, wanted, failures);
        if (r) return answer(r, implicit);
      }
      throw rejected(failures);
    },
  };
}
