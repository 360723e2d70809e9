// internal/testserver/oidc-provider owns a real OpenID Connect identity provider for tests:
// HTTPS under its own CA, a discovery document, a JWKS of jose-generated keys, ID tokens minted
// with chosen claims, key rotation, and a token endpoint that answers refresh-token grants (the
// `clusterd credential` plugin's flow). Test-only; it loads the certificate library.
// Imports: pki/certificates.

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface MintOptions {
  /** Seconds from now until `exp` (default 3600; negative mints an expired token). Null omits exp. */
  expiresIn?: number | null;
  /** Override the header's kid (for example a key the JWKS never had). */
  kid?: string;
  /** Sign with a key that is not published. */
  unpublishedKey?: boolean;
}

export interface OidcProvider {
  /** `https://127.0.0.1:<port><path>` */
  readonly issuer: string;
  readonly caPem: string;
  readonly discoveryUrl: string;
  readonly tokenEndpoint: string;
  /** The current key's public JWK (with kid and alg). */
  readonly publicJwk: JWK;
  /** Requests the provider served, by path (tests count JWKS fetches). */
  readonly served: Map<string, number>;
  /** An ID token with `iss` = issuer, `iat`, `exp` and the given claims (claims may override iss). */
  mint(claims: JWTPayload, options?: MintOptions): Promise<string>;
  /** A new signing key; the old one leaves the JWKS unless keepOld. */
  rotate(options?: { keepOld?: boolean }): Promise<void>;
  /** Registers a refresh token that the token endpoint exchanges for ID tokens with these claims. */
  addRefreshToken(claims: JWTPayload, options?: { expiresIn?: number }): string;
  /** The discovery document's `issuer` value (tests break it to check the match rule). */
  setAdvertisedIssuer(issuer: string): void;
  close(): Promise<void>;
}

export interface OidcProviderOptions {
  /** Path under which the issuer lives (default ''): several issuers can share one server this way. */
  path?: string;
  alg?: 'RS256' | 'ES256' | 'PS256';
}

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcProvider> {
  const alg = options.alg ?? 'RS256';
  const path = options.path ?? '';
  const ca = await createCertificateAuthority('test-oidc-ca');
  const serving = await issueCertificate(ca, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], usage: 'server' });
  const newKey = async (): Promise<SigningKey> => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = randomBytes(8).toString('hex');
    return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
  };
  let keys: SigningKey[] = [await newKey()];
  const hidden = await newKey();
  const refreshTokens = new Map<string, { claims: JWTPayload; expiresIn: number }>();
  const served = new Map<string, number>();
  let issuer = '';
  let advertised: string | undefined;

  const mint = async (claims: JWTPayload, o: MintOptions = {}): Promise<string> => {
    const key = o.unpublishedKey ? hidden : keys[0]!;
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = { iss: issuer, iat: now, ...claims };
    const expiresIn = o.expiresIn === undefined ? 3600 : o.expiresIn;
    if (expiresIn !== null && payload.exp === undefined) payload.exp = now + expiresIn;
    return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: o.kid ?? key.kid, typ: 'JWT' }).sign(key.privateKey);
  };

  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    served.set(url.pathname, (served.get(url.pathname) ?? 0) + 1);
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === `${path}/.well-known/openid-configuration`) {
      return json(200, {
        issuer: advertised ?? issuer,
        jwks_uri: `${issuer}/keys`,
        token_endpoint: `${issuer}/token`,
        authorization_endpoint: `${issuer}/auth`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [alg],
        grant_types_supported: ['refresh_token'],
      });
    }
    if (req.method === 'GET' && url.pathname === `${path}/keys`) return json(200, { keys: keys.map((k) => k.publicJwk) });
    if (req.method === 'POST' && url.pathname === `${path}/token`) {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const entry = refreshTokens.get(form.get('refresh_token') ?? '');
        if (form.get('grant_type') !== 'refresh_token' || !entry) return json(400, { error: 'invalid_grant' });
        mint(entry.claims, { expiresIn: entry.expiresIn }).then(
          (idToken) => json(200, { id_token: idToken, access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: entry.expiresIn, refresh_token: form.get('refresh_token') }),
          () => json(500, { error: 'server_error' }),
        );
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;

  return {
    issuer,
    caPem: ca.certPem,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    tokenEndpoint: `${issuer}/token`,
    get publicJwk() {
      return keys[0]!.publicJwk;
    },
    served,
    mint,
    async rotate(o = {}) {
      const next = await newKey();
      keys = o.keepOld ? [next, ...keys] : [next];
    },
    addRefreshToken(claims, o = {}) {
      const token = randomBytes(24).toString('base64url');
      refreshTokens.set(token, { claims, expiresIn: o.expiresIn ?? 3600 });
      return token;
    },
    setAdvertisedIssuer(i) {
      advertised = i;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
