// internal/auth/jwt/issuer-keys owns an issuer's signing keys: the discovery document (its
// `issuer` must be the configured URL) and the JWKS it names, fetched over HTTPS trusting the
// configured CA (the system's roots when none). Keys are fetched on first use and again when a
// token names a key the set does not hold (the provider rotated), at most once per interval so
// tokens with made-up key ids cannot make the server hammer the provider.
// Imports: nothing from the project (jose).

import { request } from 'node:https';
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

const MAX_DOCUMENT_BYTES = 1 << 20;
const FETCH_TIMEOUT_MS = 10_000;

export interface IssuerKeysOptions {
  issuerUrl: string;
  discoveryUrl?: string | undefined;
  caPem?: string | undefined;
  /** Least time between two JWKS fetches caused by unknown key ids (default 2 s). */
  minRefreshIntervalMs?: number;
  now?: () => number;
}

export class IssuerKeysError extends Error {
  override name = 'IssuerKeysError';
}

export class IssuerKeys {
  private jwksUri: string | undefined;
  private local: JWTVerifyGetKey | undefined;
  private lastFetch = -Infinity;
  private inflight: Promise<void> | undefined;
  private readonly minInterval: number;
  private readonly now: () => number;
  /** Fetches of the JWKS made so far (tests and metrics read it). */
  fetches = 0;

  constructor(private readonly options: IssuerKeysOptions) {
    this.minInterval = options.minRefreshIntervalMs ?? 2000;
    this.now = options.now ?? Date.now;
  }

  /** Fetches discovery and keys ahead of the first token; failures only mean a later retry. */
  prefetch(): void {
    this.refresh().catch(() => {});
  }

  /** The key function jose's verifier calls: known keys first, one refetch on a miss. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (!this.local) await this.refresh();
    try {
      return await this.local!(header, token);
    } catch (e) {
      if (!(e instanceof joseErrors.JWKSNoMatchingKey)) throw e;
      if (this.now() - this.lastFetch < this.minInterval) throw e;
      await this.refresh();
      return await this.local!(header, token);
    }
  };

  private refresh(): Promise<void> {
    if (this.now() - this.lastFetch < this.minInterval && this.local) return Promise.resolve();
    this.inflight ??= this.fetchKeys().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async fetchKeys(): Promise<void> {
    this.lastFetch = this.now();
    if (!this.jwksUri) {
      const discovery = this.options.discoveryUrl ?? `${this.options.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const doc = (await fetchJson(discovery, this.options.caPem)) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc.issuer !== this.options.issuerUrl) {
        throw new IssuerKeysError(`oidc: issuer did not match the issuer returned by provider, expected "${this.options.issuerUrl}" got "${String(doc.issuer)}"`);
      }
      if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri.startsWith('https://')) throw new IssuerKeysError('oidc: the discovery document has no https jwks_uri');
      this.jwksUri = doc.jwks_uri;
    }
    const jwks = (await fetchJson(this.jwksUri, this.options.caPem)) as JSONWebKeySet;
    if (!jwks || !Array.isArray(jwks.keys)) throw new IssuerKeysError('oidc: the JWKS document has no keys');
    this.fetches++;
    this.local = createLocalJWKSet(jwks);
  }
}

/** GET a JSON document over HTTPS (bounded in size and time). */
export function fetchJson(url: string, caPem: string | undefined, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'https:') return reject(new IssuerKeysError(`${url}: only https is allowed`));
    const req = request(
      u,
      { method: init.method ?? 'GET', headers: { accept: 'application/json', ...init.headers }, ...(caPem ? { ca: caPem } : {}), timeout: FETCH_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_DOCUMENT_BYTES) req.destroy(new IssuerKeysError(`${url}: response larger than ${MAX_DOCUMENT_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) return reject(new IssuerKeysError(`${url}: HTTP ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new IssuerKeysError(`${url}: not JSON`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new IssuerKeysError(`${url}: timed out`)));
    req.on('error', (e) => reject(e instanceof IssuerKeysError ? e : new IssuerKeysError(`${url}: ${e.message}`)));
    req.end(init.body);
  });
}
