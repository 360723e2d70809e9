// internal/auth/bootstrap-token owns bootstrap tokens (spec §2.4, --enable-bootstrap-token-auth):
// the `<id>.<secret>` format, reading a token's secret (`bootstrap-token-<id>` of the bootstrap
// type in the system namespace), its expiry and usages, the user it stands for
// (system:bootstrap:<id> in system:bootstrappers plus its validated auth-extra-groups), and the
// detached JWS the bootstrap signer puts in cluster-info. As upstream, anything wrong with a
// token of the right form is no opinion (the bearer chain then answers 401), never an error
// that names the token.
// Imports: token-authenticator, user; jose.

import { timingSafeEqual } from 'node:crypto';
import { CompactSign } from 'jose';
import type { TokenAuthenticator } from './token-authenticator.js';
import type { UserInfo } from './user.js';

export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BOOTSTRAP_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
const EXTRA_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** A secret as the bootstrap code reads it: type, decoded data, and whether it is being deleted. */
export interface BootstrapSecret {
  type: string;
  data: Readonly<Record<string, string>>;
  deleting: boolean;
}

/** Decoded `data` (base64 values) of a stored Secret object. */
export function secretData(obj: { data?: unknown }): Record<string, string> {
  const out: Record<string, string> = {};
  const data = obj.data;
  if (typeof data !== 'object' || data === null) return out;
  for (const [k, v] of Object.entries(data)) if (typeof v === 'string') out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}

export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = BOOTSTRAP_TOKEN_PATTERN.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

/** Upstream's HasExpired: an expiration that does not parse counts as expired. */
export function bootstrapTokenExpired(data: Readonly<Record<string, string>>, now: Date): boolean {
  const exp = data.expiration;
  if (exp === undefined || exp === '') return false;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(exp)) return true;
  const t = Date.parse(exp);
  return Number.isNaN(t) || t <= now.getTime();
}

/** system:bootstrappers plus the extra groups, deduplicated and sorted; undefined when an extra group is invalid. */
export function bootstrapGroups(data: Readonly<Record<string, string>>): string[] | undefined {
  const groups = new Set([BOOTSTRAPPERS_GROUP]);
  const extra = data['auth-extra-groups'] ?? '';
  if (extra !== '') {
    for (const g of extra.split(',')) {
      if (!EXTRA_GROUP_PATTERN.test(g)) return undefined;
      groups.add(g);
    }
  }
  return [...groups].sort();
}

/** The secret of a token id when it is a usable bootstrap token secret of `type`, else undefined. */
export function usableBootstrapSecret(secret: BootstrapSecret | undefined, type: string, id: string, now: Date): Readonly<Record<string, string>> | undefined {
  if (!secret || secret.deleting || secret.type !== type) return undefined;
  if (secret.data['token-id'] !== id) return undefined;
  if (bootstrapTokenExpired(secret.data, now)) return undefined;
  return secret.data;
}

export interface BootstrapAuthenticatorOptions {
  /** `bootstrap.kubernetes.io/token` or the naming's spelling. */
  secretType: string;
  /** Reads `kube-system/<name>` (from the watch cache). */
  getSecret(name: string): Promise<BootstrapSecret | undefined> | BootstrapSecret | undefined;
  now?: () => Date;
}

export function bootstrapTokenAuthenticator(o: BootstrapAuthenticatorOptions): TokenAuthenticator {
  const now = o.now ?? (() => new Date());
  return {
    name: 'bootstrap-token',
    async authenticateToken(token: string): Promise<UserInfo | null> {
      const parsed = parseBootstrapToken(token);
      if (!parsed) return null;
      const data = usableBootstrapSecret(await o.getSecret(`${BOOTSTRAP_SECRET_PREFIX}${parsed.id}`), o.secretType, parsed.id, now());
      if (!data) return null;
      const stored = Buffer.from(data['token-secret'] ?? '');
      const given = Buffer.from(parsed.secret);
      if (stored.length !== given.length || !timingSafeEqual(stored, given)) return null;
      if (data['usage-bootstrap-authentication'] !== 'true') return null;
      const groups = bootstrapGroups(data);
      if (!groups) return null;
      return { name: `${BOOTSTRAP_USER_PREFIX}${parsed.id}`, groups };
    },
  };
}

/**
 * The detached JWS over `content` for a token (spec §2.4: HS256, the full token `<id>.<secret>`
 * as the shared secret, kid = the token id): `<header>..<signature>`.
 */
export async function detachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  const jws = await new CompactSign(Buffer.from(content, 'utf8'))
    .setProtectedHeader({ alg: 'HS256', kid: tokenId })
    .sign(Buffer.from(`${tokenId}.${tokenSecret}`, 'utf8'));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}
