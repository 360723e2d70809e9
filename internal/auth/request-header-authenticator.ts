// internal/auth/request-header-authenticator owns the authenticating proxy
// (--requestheader-*): a request whose client certificate chains to the request-header CA (and
// whose CN is allowed, when names are listed) names its user in headers: the first non-empty
// username header, uid, every value of the group headers, and extra attributes from headers
// under a prefix (key lowercased, then percent-decoded). Without such a certificate the headers
// are ignored: the authenticator has no opinion, so forged headers identify nobody. It verifies
// the certificate itself, against its own CA, independently of the client CA the TLS layer
// trusts, so a proxy certificate is never a user certificate and vice versa.
// Imports: authenticator, user.

import { X509Certificate } from 'node:crypto';
import type { Authenticator, AuthnRequest } from './authenticator.js';
import type { UserInfo } from './user.js';

export interface RequestHeaderOptions {
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  /** PEM bundle of the CA(s) that sign the proxy's client certificate. */
  clientCaPem: string;
  /** Allowed proxy certificate CNs; empty allows any certificate the CA signed. */
  allowedNames: string[];
  now?: () => Date;
}

export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'requestheader';
  private readonly roots: X509Certificate[];
  private readonly verified = new WeakMap<Buffer, boolean>();

  constructor(private readonly options: RequestHeaderOptions) {
    const blocks = options.clientCaPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    this.roots = blocks.map((b) => new X509Certificate(b));
    if (this.roots.length === 0) throw new Error('--requestheader-client-ca-file holds no certificate');
  }

  authenticate(req: AuthnRequest): UserInfo | null {
    const o = this.options;
    const name = firstNonEmpty(req, o.usernameHeaders);
    if (name === undefined) return null;
    const cert = req.peerCertificate;
    if (!cert?.raw || !this.trusted(cert.raw)) return null;
    if (o.allowedNames.length > 0 && !o.allowedNames.includes(cert.commonName)) return null;
    const uid = firstNonEmpty(req, o.uidHeaders);
    const groups = o.groupHeaders.flatMap((h) => values(req, h));
    const extra: Record<string, string[]> = {};
    if (o.extraHeaderPrefixes.length > 0) {
      for (const header of req.headerNames?.() ?? []) {
        const lower = header.toLowerCase();
        const prefix = o.extraHeaderPrefixes.find((p) => lower.startsWith(p.toLowerCase()));
        if (!prefix) continue;
        const key = decodeExtraKey(lower.slice(prefix.length));
        if (!key) continue;
        (extra[key] ??= []).push(...values(req, header));
      }
    }
    return { name, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
  }

  /** Signed by one of the CA certificates, in its validity period, usable for client auth. */
  private trusted(raw: Buffer): boolean {
    const known = this.verified.get(raw);
    if (known !== undefined) return known;
    let ok = false;
    try {
      const leaf = new X509Certificate(raw);
      const now = (this.options.now ?? (() => new Date()))();
      const inPeriod = new Date(leaf.validFrom) <= now && now <= new Date(leaf.validTo);
      const usages = leaf.keyUsage;
      const clientAuth = !usages || usages.length === 0 || usages.includes('1.3.6.1.5.5.7.3.2');
      ok = inPeriod && clientAuth && this.roots.some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
    } catch {
      ok = false;
    }
    this.verified.set(raw, ok);
    return ok;
  }
}

function values(req: AuthnRequest, header: string): string[] {
  if (req.headerValues) return req.headerValues(header).filter((v) => v !== '');
  const v = req.header(header);
  return v ? [v] : [];
}

function firstNonEmpty(req: AuthnRequest, headers: readonly string[]): string | undefined {
  for (const h of headers) {
    const v = values(req, h)[0];
    if (v) return v;
  }
  return undefined;
}

/** The extra key: percent-decoded (after lowercasing); undefined when the escape is broken. */
function decodeExtraKey(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
