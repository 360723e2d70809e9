import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { SignJWT, base64url, importJWK, type JWTPayload } from 'jose';
import { createPublicKey } from 'node:crypto';
import { startOidcProvider, type OidcProvider } from '../../testserver/oidc-provider.js';
import { AuthnError } from '../authenticator.js';
import { jwtFromOidcFlags, parseAuthenticationConfig, type OidcFlags } from './authentication-config.js';
import { IssuerAuthenticator, JwtAuthenticator } from './jwt-authenticator.js';

const GROUP = 'apiserver.config.cluster.io';
let idp: OidcProvider;
let other: OidcProvider;

beforeAll(async () => {
  [idp, other] = await Promise.all([startOidcProvider(), startOidcProvider({ path: '/other' })]);
});
afterAll(async () => {
  await Promise.all([idp?.close(), other?.close()]);
});

const indent = (pem: string, n: number) => pem.trim().split('\n').map((l) => ' '.repeat(n) + l).join('\n');

/** A configuration for the test provider with the given extra YAML under the jwt entry. */
function configFor(p: OidcProvider, body: string, audiences = ['clusterd']): string {
  return `apiVersion: ${GROUP}/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${p.issuer}
    audiences: [${audiences.join(', ')}]
${audiences.length > 1 ? '    audienceMatchPolicy: MatchAny\n' : ''}    certificateAuthority: |
${indent(p.caPem, 6)}
${body}`;
}

function authenticatorFor(yaml: string, minRefreshIntervalMs?: number): JwtAuthenticator {
  const config = parseAuthenticationConfig(yaml, { group: GROUP });
  return new JwtAuthenticator(config.jwt.map((c) => new IssuerAuthenticator(c, minRefreshIntervalMs !== undefined ? { minRefreshIntervalMs } : {})));
}

const rejection = async (a: JwtAuthenticator, token: string): Promise<string> => {
  try {
    const user = await a.authenticateToken(token);
    return `accepted as ${JSON.stringify(user)}`;
  } catch (e) {
    expect(e).toBeInstanceOf(AuthnError);
    return (e as Error).message;
  }
};

const mappings = `  claimMappings:
    username: { claim: sub, prefix: "oidc:" }
    groups: { claim: groups, prefix: "oidc:" }
    uid: { claim: uid }
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
`;

describe('JWT authenticator (structured configuration)', () => {
  it('maps a valid token to username, groups, uid and extra', async () => {
    const a = authenticatorFor(configFor(idp, mappings));
    const token = await idp.mint({ sub: 'alice', aud: 'clusterd', groups: ['dev', 'ops'], uid: 'u-1', tenant: 't1' });
    expect(await a.authenticateToken(token)).toEqual({ name: 'oidc:alice', uid: 'u-1', groups: ['oidc:dev', 'oidc:ops'], extra: { 'example.com/tenant': ['t1'] } });
  });

  it('accepts any listed audience under MatchAny, and a list-valued aud', async () => {
    const a = authenticatorFor(configFor(idp, mappings, ['clusterd', 'other-aud']));
    const token = await idp.mint({ sub: 'bob', aud: ['x', 'other-aud'], uid: 'u', tenant: 't' });
    expect((await a.authenticateToken(token))?.name).toBe('oidc:bob');
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, RegExp]>([
    ['expired', { sub: 'a', aud: 'clusterd', uid: 'u', tenant: 't' }, { expiresIn: -120 }, /token is expired/],
    ['without exp', { sub: 'a', aud: 'clusterd', uid: 'u', tenant: 't' }, { expiresIn: null }, /claim exp: missing/],
    ['for another audience', { sub: 'a', aud: 'someone-else', uid: 'u', tenant: 't' }, {}, /audience/],
    ['without the username claim', { aud: 'clusterd', uid: 'u', tenant: 't' }, {}, /username claims "sub": claim not present/],
    ['with a non-string username claim', { sub: 7, aud: 'clusterd', uid: 'u', tenant: 't' }, {}, /not a string/],
    ['signed by a key the issuer does not publish', { sub: 'a', aud: 'clusterd', uid: 'u', tenant: 't' }, { unpublishedKey: true }, /no key|signature/],
  ])('rejects a token %s', async (_name, claims, options, message) => {
    const a = authenticatorFor(configFor(idp, mappings));
    expect(await rejection(a, await idp.mint(claims, options))).toMatch(message);
  });

  it('has no opinion on tokens of other issuers and on non-JWTs', async () => {
    const a = authenticatorFor(configFor(idp, mappings));
    expect(await a.authenticateToken(await other.mint({ sub: 'a', aud: 'clusterd' }))).toBeNull();
    expect(await a.authenticateToken('abcdef.0123456789abcdef')).toBeNull();
    expect(await a.authenticateToken('x'.repeat(100_000))).toBeNull();
    expect(await a.authenticateToken('a.b.c')).toBeNull();
  });

  it('refuses alg none and HS256 keyed with the issuer\'s public key', async () => {
    const a = authenticatorFor(configFor(idp, mappings));
    const claims = { iss: idp.issuer, sub: 'mallory', aud: 'clusterd', exp: Math.floor(Date.now() / 1000) + 600, uid: 'u', tenant: 't' };
    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(claims))}.`;
    expect(await rejection(a, none)).toMatch(/algorithm "none" is not allowed/);
    // The classic confusion attack: the public key's PEM used as an HMAC secret.
    const publicPem = createPublicKey({ key: idp.publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: idp.publicJwk.kid! }).sign(Buffer.from(publicPem));
    expect(await rejection(a, hs)).toMatch(/algorithm "HS256" is not allowed/);
    // A token with a tampered payload keeps the signature of another.
    const good = await idp.mint({ sub: 'alice', aud: 'clusterd', uid: 'u', tenant: 't' });
    const [h, , s] = good.split('.');
    expect(await rejection(a, `${h}.${base64url.encode(JSON.stringify(claims))}.${s}`)).toMatch(/signature/);
  });

  it('picks up a rotated key (refetching the JWKS on an unknown kid, rate-limited)', async () => {
    const p = await startOidcProvider();
    try {
      const a = authenticatorFor(configFor(p, mappings), 0);
      expect((await a.authenticateToken(await p.mint({ sub: 'a', aud: 'clusterd', uid: 'u', tenant: 't' })))?.name).toBe('oidc:a');
      await p.rotate();
      expect((await a.authenticateToken(await p.mint({ sub: 'b', aud: 'clusterd', uid: 'u', tenant: 't' })))?.name).toBe('oidc:b');
      expect(p.served.get('/keys')).toBe(2);

      const slow = authenticatorFor(configFor(p, mappings), 60_000);
      expect((await slow.authenticateToken(await p.mint({ sub: 'c', aud: 'clusterd', uid: 'u', tenant: 't' })))?.name).toBe('oidc:c');
      const before = p.served.get('/keys');
      for (let i = 0; i < 5; i++) expect(await rejection(slow, await p.mint({ sub: 'x', aud: 'clusterd', uid: 'u', tenant: 't' }, { kid: `made-up-${i}` }))).toMatch(/no key/);
      expect(p.served.get('/keys')).toBe(before);
    } finally {
      await p.close();
    }
  });

  it('rejects a provider whose discovery document names another issuer', async () => {
    const p = await startOidcProvider();
    try {
      p.setAdvertisedIssuer('https://elsewhere.example');
      const a = authenticatorFor(configFor(p, mappings));
      expect(await rejection(a, await p.mint({ sub: 'a', aud: 'clusterd', uid: 'u', tenant: 't' }))).toMatch(/issuer did not match/);
    } finally {
      await p.close();
    }
  });

  it('fetches keys through discoveryURL when the document lives elsewhere', async () => {
    // The discovery document is served under another path of the same provider whose issuer
    // is the configured one; here: `other` serves its own document, so point at it for `other`.
    const yaml = configFor(other, mappings).replace(`    url: ${other.issuer}\n`, `    url: ${other.issuer}\n    discoveryURL: ${other.discoveryUrl}\n`);
    const a = authenticatorFor(yaml);
    expect((await a.authenticateToken(await other.mint({ sub: 'd', aud: 'clusterd', uid: 'u', tenant: 't' })))?.name).toBe('oidc:d');
  });

  it('applies claim validation rules (required value and CEL) and user validation rules', async () => {
    const a = authenticatorFor(
      configFor(
        idp,
        `  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.level > 2'
    message: level too low
  claimMappings:
    username: { expression: '"cel:" + claims.sub' }
    groups: { expression: 'claims.roles.map(r, "role:" + r)' }
    uid: { expression: 'claims.sub + "-uid"' }
  userValidationRules:
  - expression: '!("banned" in user.groups)'
    message: banned users may not sign in
`,
      ),
    );
    const ok = await idp.mint({ sub: 'carol', aud: 'clusterd', hd: 'example.com', level: 3, roles: ['a', 'b'] });
    expect(await a.authenticateToken(ok)).toEqual({ name: 'cel:carol', uid: 'carol-uid', groups: ['role:a', 'role:b'] });
    expect(await rejection(a, await idp.mint({ sub: 'c', aud: 'clusterd', hd: 'evil.com', level: 3, roles: [] }))).toMatch(/required claim hd value does not match/);
    expect(await rejection(a, await idp.mint({ sub: 'c', aud: 'clusterd', level: 3, roles: [] }))).toMatch(/required claim hd not present/);
    expect(await rejection(a, await idp.mint({ sub: 'c', aud: 'clusterd', hd: 'example.com', level: 1, roles: [] }))).toMatch(/level too low/);
    const banned = await idp.mint({ sub: 'c', aud: 'clusterd', hd: 'example.com', level: 5, roles: [] });
    const b = authenticatorFor(configFor(idp, `  claimMappings:\n    username: { claim: sub, prefix: "" }\n    groups: { expression: '["banned"]' }\n  userValidationRules:\n  - expression: '!("banned" in user.groups)'\n    message: banned users may not sign in\n`));
    expect(await rejection(b, banned)).toMatch(/banned users may not sign in/);
  });

  it('fails an empty username from an expression and a wrongly typed result, without echoing claims', async () => {
    const a = authenticatorFor(configFor(idp, `  claimMappings:\n    username: { expression: 'has(claims.nick) ? claims.nick : ""' }\n`));
    expect(await rejection(a, await idp.mint({ sub: 'a', aud: 'clusterd' }))).toMatch(/empty string/);
    const b = authenticatorFor(configFor(idp, `  claimMappings:\n    username: { expression: 'claims.missing' }\n`));
    const msg = await rejection(b, await idp.mint({ sub: 'a', aud: 'clusterd', secretish: 'do-not-log' }));
    expect(msg).toMatch(/evaluation failed/);
    expect(msg).not.toContain('do-not-log');
    const c = authenticatorFor(configFor(idp, `  claimMappings:\n    username: { expression: 'claims.n' }\n`));
    expect(await rejection(c, await idp.mint({ sub: 'a', aud: 'clusterd', n: 5 }))).toMatch(/must return a string, got double/);
  });
});

describe('JWT authenticator (--oidc-* flags)', () => {
  const flags = (over: Partial<OidcFlags>): OidcFlags => ({
    issuerUrl: idp.issuer, clientId: 'kubectl', usernameClaim: 'sub', usernamePrefix: undefined, groupsClaim: undefined,
    groupsPrefix: undefined, requiredClaims: [], caFile: undefined, signingAlgs: ['RS256'], ...over,
  });
  const fromFlags = (f: OidcFlags) => new JwtAuthenticator([new IssuerAuthenticator(jwtFromOidcFlags(f, idp.caPem))]);

  it('prefixes non-email usernames with the issuer URL and #, and "-" disables prefixing', async () => {
    const token = await idp.mint({ sub: 'dave', aud: 'kubectl', email: 'dave@example.com', email_verified: true, g: ['x'] });
    expect(await fromFlags(flags({ groupsClaim: 'g', groupsPrefix: 'oidc:' })).authenticateToken(token)).toEqual({ name: `${idp.issuer}#dave`, groups: ['oidc:x'] });
    expect((await fromFlags(flags({ usernamePrefix: '-' })).authenticateToken(token))?.name).toBe('dave');
    expect((await fromFlags(flags({ usernamePrefix: 'u:' })).authenticateToken(token))?.name).toBe('u:dave');
    expect((await fromFlags(flags({ usernameClaim: 'email' })).authenticateToken(token))?.name).toBe('dave@example.com');
  });

  it('rejects an email username whose email_verified is false', async () => {
    const a = fromFlags(flags({ usernameClaim: 'email' }));
    expect(await rejection(a, await idp.mint({ sub: 'e', aud: 'kubectl', email: 'e@example.com', email_verified: false }))).toMatch(/email not verified/);
  });

  it('checks --oidc-required-claim and --oidc-signing-algs', async () => {
    const a = fromFlags(flags({ requiredClaims: [{ claim: 'hd', value: 'example.com' }] }));
    expect(await rejection(a, await idp.mint({ sub: 'f', aud: 'kubectl', hd: 'other.com' }))).toMatch(/does not match/);
    expect((await a.authenticateToken(await idp.mint({ sub: 'f', aud: 'kubectl', hd: 'example.com' })))?.name).toBe(`${idp.issuer}#f`);
    const es = fromFlags(flags({ signingAlgs: ['ES256'] }));
    expect(await rejection(es, await idp.mint({ sub: 'f', aud: 'kubectl' }))).toMatch(/"RS256" is not allowed/);
    expect(() => jwtFromOidcFlags(flags({ signingAlgs: ['HS256'] }), undefined)).toThrow(/unsupported algorithm HS256/);
    expect(() => jwtFromOidcFlags(flags({ issuerUrl: 'http://x' }), undefined)).toThrow(/must be https/);
  });

  it('verifies an ES256 issuer', async () => {
    const ec = await startOidcProvider({ alg: 'ES256' });
    try {
      const a = new JwtAuthenticator([new IssuerAuthenticator(jwtFromOidcFlags(flags({ issuerUrl: ec.issuer, signingAlgs: ['ES256'] }), ec.caPem))]);
      expect((await a.authenticateToken(await ec.mint({ sub: 'g', aud: 'kubectl' })))?.name).toBe(`${ec.issuer}#g`);
      // An imported JWK is a real verification key (guards the test's own key handling).
      expect(await importJWK(ec.publicJwk, 'ES256')).toBeTruthy();
    } finally {
      await ec.close();
    }
  });
});

describe('CEL in claim mappings (the full CEL library)', () => {
  it('maps with string functions and macros, and refuses a type error at load', async () => {
    const a = authenticatorFor(
      configFor(
        idp,
        `  claimMappings:\n    username: { expression: 'claims.email.split("@")[0].lowerAscii()' }\n    groups: { expression: 'claims.roles.filter(r, r.startsWith("k8s-")).map(r, r.substring(4))' }\n    uid: { expression: 'string(claims.num)' }\n  claimValidationRules:\n  - expression: 'claims.email_verified && claims.email.endsWith("@example.com")'\n`,
      ),
    );
    const token = await idp.mint({ sub: 'x', aud: 'clusterd', email: 'Ada@example.com', email_verified: true, roles: ['k8s-dev', 'other', 'k8s-ops'], num: 7 });
    expect(await a.authenticateToken(token)).toMatchObject({ name: 'ada', uid: '7', groups: ['dev', 'ops'] });
    expect(await rejection(a, await idp.mint({ sub: 'x', aud: 'clusterd', email: 'ada@elsewhere.org', email_verified: true, roles: [], num: 1 }))).toMatch(/claim validation|claimValidationRules/);
    expect(() => authenticatorFor(configFor(idp, `  claimMappings:\n    username: { claim: sub, prefix: "" }\n  claimValidationRules:\n  - expression: '"a" + 1'\n`))).toThrow(/claimValidationRules\[0\]\.expression: Invalid value: .*compilation failed: no such overload: string \+ int/);
    expect(() => authenticatorFor(configFor(idp, `  claimMappings:\n    username: { claim: sub, prefix: "" }\n  claimValidationRules:\n  - expression: 'user.username == "x"'\n`))).toThrow(/compilation failed/);
  });
});
