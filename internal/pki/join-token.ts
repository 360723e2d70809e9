// internal/pki/join-token owns the cluster join token, k3s-style: `K10<ca-hash>::<secret>`,
// where ca-hash is the SHA-256 of the cluster CA certificate's DER (the CA that signs the API
// serving certificates). A joining replica knows only the token and an address; it pins that CA by its hash before trusting anything the
// address sends, then proves itself with the secret. Uses node:crypto only (no certificate
// library), so the running server can check tokens. Imports: nothing from the project.

import { createHash, randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';

export interface JoinToken {
  /** SHA-256 of the cluster CA certificate's DER, 64 lower-case hex digits. */
  caHash: string;
  /** 32 lower-case hex digits (128 bits). */
  secret: string;
}

export class JoinTokenError extends Error {
  override name = 'JoinTokenError';
}

const PREFIX = 'K10';
const SEPARATOR = '::';

/** The SHA-256 (hex) of the first certificate in `pem`, as a join token pins it. */
export function caHashOf(pem: string): string {
  return createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');
}

/** A fresh token pinning `caPem` with a random 128-bit secret. */
export function makeJoinToken(caPem: string): string {
  return `${PREFIX}${caHashOf(caPem)}${SEPARATOR}${randomBytes(16).toString('hex')}`;
}

/**
 * Splits a token into its CA hash and secret. Surrounding white space is ignored (tokens are
 * read from files and pasted); hex may be either case. Error messages never repeat the token,
 * since it is a credential and they end up in logs.
 */
export function parseJoinToken(token: string): JoinToken {
  const t = token.trim();
  if (t === '') throw new JoinTokenError('join token is empty');
  if (!t.startsWith(PREFIX)) throw new JoinTokenError(`join token must start with "${PREFIX}" (format K10<sha256 of the cluster CA>::<secret>)`);
  const sep = t.indexOf(SEPARATOR);
  if (sep < 0) throw new JoinTokenError('join token has no "::" between the CA hash and the secret (format K10<sha256 of the cluster CA>::<secret>)');
  const caHash = t.slice(PREFIX.length, sep);
  const secret = t.slice(sep + SEPARATOR.length);
  if (!/^[0-9a-fA-F]{64}$/.test(caHash)) {
    throw new JoinTokenError(`join token's CA hash must be 64 hex digits (a SHA-256), got ${caHash.length} characters${/^[0-9a-fA-F]*$/.test(caHash) ? '' : ' including non-hex ones'}`);
  }
  if (!/^[0-9a-fA-F]{32}$/.test(secret)) {
    throw new JoinTokenError(`join token's secret must be 32 hex digits, got ${secret.length} characters${/^[0-9a-fA-F]*$/.test(secret) ? '' : ' including non-hex ones'}`);
  }
  return { caHash: caHash.toLowerCase(), secret: secret.toLowerCase() };
}

/**
 * Whether `pem`'s first certificate hashes to `hash` (hex, either case). A PEM that does not
 * parse is not the pinned CA, so it answers false rather than throwing: the caller's only
 * decision is whether to trust it.
 */
export function verifyCaHash(pem: string, hash: string): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(hash)) return false;
  let actual: string;
  try {
    actual = caHashOf(pem);
  } catch {
    return false;
  }
  return timingSafeEqual(Buffer.from(actual, 'hex'), Buffer.from(hash.toLowerCase(), 'hex'));
}

/** Whether `presented` carries the same secret as `expected` (constant time on the secret). */
export function joinSecretMatches(expected: JoinToken, presented: string): boolean {
  if (!/^[0-9a-fA-F]{32}$/.test(presented)) return false;
  return timingSafeEqual(Buffer.from(expected.secret, 'hex'), Buffer.from(presented.toLowerCase(), 'hex'));
}
