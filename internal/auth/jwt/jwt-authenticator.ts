// internal/auth/jwt/jwt-authenticator owns turning a JWT bearer token from an external issuer
// (OIDC flags or a `jwt[]` entry of the AuthenticationConfiguration) into a user: pick the
// authenticator whose issuer the token names, verify signature (asymmetric algorithms only),
// expiry and audience, apply the claim validation rules, map claims to username, uid, groups
// and extra, and apply the user validation rules. A token for no configured issuer is no
// opinion; a token for one that fails any step is a 401. Messages never carry the token.
// A token authenticator in the bearer-token union, audience agnostic as upstream's (the union
// applies the API audiences; the issuer's own `audiences` are checked against `aud` here).
// Imports: authenticator, token-authenticator (the contract), user, claims-cel,
// authentication-config, issuer-keys.

import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { AuthnError } from '../authenticator.js';
import type { TokenAuthenticator } from '../token-authenticator.js';
import type { UserInfo } from '../user.js';
import { CelRuntimeError, expectBoolean, expectString, expectStrings } from '../../cel/cel.js';
import type { JwtAuthenticatorConfig } from './authentication-config.js';
import { IssuerKeys } from './issuer-keys.js';

/** Cheap structural test before any parsing: three base64url parts. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export class IssuerAuthenticator {
  readonly keys: IssuerKeys;
  constructor(
    readonly config: JwtAuthenticatorConfig,
    options: { minRefreshIntervalMs?: number } = {},
  ) {
    this.keys = new IssuerKeys({
      issuerUrl: config.issuerUrl,
      discoveryUrl: config.discoveryUrl,
      caPem: config.certificateAuthority,
      ...(options.minRefreshIntervalMs !== undefined ? { minRefreshIntervalMs: options.minRefreshIntervalMs } : {}),
    });
  }

  /** Verifies `token` (already known to name this issuer) and maps it to a user. */
  async verify(token: string): Promise<UserInfo> {
    const c = this.config;
    let claims: JWTPayload;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.alg !== 'string' || !c.signingAlgs.includes(header.alg)) {
        throw new AuthnError(`oidc: verify token: signing algorithm ${JSON.stringify(String(header.alg))} is not allowed (expected one of ${c.signingAlgs.join(', ')})`);
      }
      ({ payload: claims } = await jwtVerify(token, this.keys.getKey, {
        issuer: c.issuerUrl,
        audience: c.audiences,
        algorithms: [...c.signingAlgs],
        requiredClaims: ['exp'],
      }));
    } catch (e) {
      if (e instanceof AuthnError) throw e;
      throw new AuthnError(`oidc: verify token: ${describeJoseError(e)}`);
    }
    return this.mapClaims(claims);
  }

  private mapClaims(claims: JWTPayload): UserInfo {
    const c = this.config;
    const vars = { claims };
    try {
      for (const rule of c.claimValidationRules) {
        if (rule.kind === 'claim') {
          const v = claims[rule.claim];
          if (v === undefined) throw new AuthnError(`oidc: required claim ${rule.claim} not present in ID token`);
          if (typeof v !== 'string') throw new AuthnError(`oidc: claim ${rule.claim} is not a string`);
          if (v !== rule.requiredValue) throw new AuthnError(`oidc: required claim ${rule.claim} value does not match. Got = ${JSON.stringify(v)}, want = ${JSON.stringify(rule.requiredValue)}`);
        } else if (!expectBoolean(rule.expression.run(vars), rule.expression.path)) {
          throw new AuthnError(`oidc: error evaluating claim validation expression: ${rule.message || `expression ${JSON.stringify(rule.expression.source)} resolved to false`}`);
        }
      }

      let name: string;
      if (c.username.kind === 'claim') {
        const v = claims[c.username.claim];
        if (v === undefined) throw new AuthnError(`oidc: parse username claims "${c.username.claim}": claim not present`);
        if (typeof v !== 'string') throw new AuthnError(`oidc: parse username claims "${c.username.claim}": claim is not a string`);
        if (c.checkEmailVerified && claims['email_verified'] !== undefined && claims['email_verified'] !== true) {
          throw new AuthnError('oidc: email not verified');
        }
        name = c.username.prefix + v;
      } else {
        name = expectString(c.username.expression.run(vars), c.username.expression.path);
        if (name === '') throw new AuthnError('oidc: claim mapping: username expression resolved to an empty string');
      }

      let groups: string[] = [];
      if (c.groups?.kind === 'claim') {
        const v = claims[c.groups.claim];
        if (v !== undefined) {
          const list = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((g) => typeof g === 'string') ? (v as string[]) : undefined;
          if (!list) throw new AuthnError(`oidc: parse groups claim "${c.groups.claim}": must be a string or an array of strings`);
          const prefix = c.groups.prefix;
          groups = list.map((g) => prefix + g);
        }
      } else if (c.groups?.kind === 'expression') {
        groups = expectStrings(c.groups.expression.run(vars), c.groups.expression.path);
      }

      let uid: string | undefined;
      if (c.uid?.kind === 'claim') {
        const v = claims[c.uid.claim];
        if (v === undefined) throw new AuthnError(`oidc: parse uid claim "${c.uid.claim}": claim not present`);
        if (typeof v !== 'string') throw new AuthnError(`oidc: parse uid claim "${c.uid.claim}": claim is not a string`);
        uid = v;
      } else if (c.uid?.kind === 'expression') {
        uid = expectString(c.uid.expression.run(vars), c.uid.expression.path);
      }

      const extra: Record<string, string[]> = {};
      for (const e of c.extra) {
        const values = expectStrings(e.valueExpression.run(vars), e.valueExpression.path);
        if (values.length > 0) extra[e.key] = values;
      }

      const user: UserInfo = { name, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
      if (c.userValidationRules.length > 0) {
        const celUser = { user: { username: name, uid: uid ?? '', groups, extra } };
        for (const rule of c.userValidationRules) {
          if (!expectBoolean(rule.expression.run(celUser), rule.expression.path)) {
            throw new AuthnError(`oidc: error evaluating user info validation rule: ${rule.message || `expression ${JSON.stringify(rule.expression.source)} resolved to false`}`);
          }
        }
      }
      return user;
    } catch (e) {
      if (e instanceof CelRuntimeError) throw new AuthnError(`oidc: ${e.message}`);
      throw e;
    }
  }
}

function describeJoseError(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return 'token is expired';
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'aud') return 'audience does not match any of the configured audiences';
    if (e.claim === 'iss') return 'issuer does not match';
    return `claim ${e.claim}: ${e.reason}`;
  }
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'failed to verify signature';
  if (e instanceof joseErrors.JWKSNoMatchingKey) return 'failed to verify signature: no key in the issuer\'s key set matches';
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'signing algorithm is not allowed';
  if (e instanceof joseErrors.JOSEError) return e.message.split('\n')[0]!.slice(0, 200);
  // Network and discovery problems: their messages name URLs, never the token.
  return e instanceof Error ? e.message.slice(0, 300) : 'verification failed';
}

/** Every configured issuer behind one authenticator: the token's `iss` picks the issuer. */
export class JwtAuthenticator implements TokenAuthenticator {
  readonly name = 'jwt';
  private readonly byIssuer: Map<string, IssuerAuthenticator>;

  constructor(readonly issuers: readonly IssuerAuthenticator[]) {
    this.byIssuer = new Map(issuers.map((i) => [i.config.issuerUrl, i]));
  }

  prefetch(): void {
    for (const i of this.issuers) i.keys.prefetch();
  }

  /** No opinion for anything that is not a JWT naming one of the issuers. */
  async authenticateToken(token: string): Promise<UserInfo | null> {
    if (this.byIssuer.size === 0 || !JWT_SHAPE.test(token)) return null;
    let iss: unknown;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      return null;
    }
    const issuer = typeof iss === 'string' ? this.byIssuer.get(iss) : undefined;
    return issuer ? issuer.verify(token) : null;
  }
}
