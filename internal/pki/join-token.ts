// internal/pki/join-token owns the text of a cluster join token, k3s-style: `K10<ca-hash>::<secret>`,
// where ca-hash is the SHA-256 of the cluster CA certificate's DER (the CA that signs the API
// serving certificates). A joining replica knows only the token and an address; it pins that CA by its hash before trusting anything the
// address sends, then proves itself with the secret. Two secret forms: the `join-token` file's
// 32 hex digits (made by `clusterd pki`), and kubeadm's bootstrap-token form `<id>.<secret>`
// (`[a-z0-9]{6}.[a-z0-9]{16}`) of the tokens `clusterd token create` makes, whose id names the
// token in lists and revocations. Either way the cluster keeps only a hash of the secret
// (internal/cluster/join-tokens). Uses node:crypto only (no certificate library), so the
// running server can check tokens. Imports: nothing from the project.

import { createHash, randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';

export interface JoinToken {
  /** SHA-256 of the cluster CA certificate's DER, 64 lower-case hex digits. */
  caHash: string;
  /** 32 lower-case hex digits (128 bits: the join-token file), or 16 of [a-z0-9] (a created token). */
  secret: string;
  /** The token id of a created token (`[a-z0-9]{6}`); absent for the join-token file's form. */
  id?: string;
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
  const created = CREATED_SECRET.exec(secret);
  if (created) return { caHash: caHash.toLowerCase(), id: created[1]!, secret: created[2]! };
  if (secret.includes('.')) {
    throw new JoinTokenError(`join token's secret must be <id>.<secret> with 6 and 16 characters of a-z and 0-9 (as \`clusterd token create\` prints it), got ${secret.length} characters`);
  }
  if (!/^[0-9a-fA-F]{32}$/.test(secret)) {
    throw new JoinTokenError(`join token's secret must be 32 hex digits, got ${secret.length} characters${/^[0-9a-fA-F]*$/.test(secret) ? '' : ' including non-hex ones'}`);
  }
  return { caHash: caHash.toLowerCase(), secret: secret.toLowerCase() };
}

/** kubeadm's bootstrap token form: `<6-character id>.<16-character secret>`, a-z and 0-9. */
const CREATED_SECRET = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const TOKEN_ID = /^[a-z0-9]{6}$/;
const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `n` random characters of [a-z0-9], uniformly (bytes of 252 and above are drawn again). */
function randomTokenChars(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b >= 252) continue;
      out += TOKEN_ALPHABET[b % 36];
      if (out.length === n) break;
    }
  }
  return out;
}

/** A fresh created token's id and secret (about 31 and 83 bits). */
export function newTokenParts(): { id: string; secret: string } {
  return { id: randomTokenChars(6), secret: randomTokenChars(16) };
}

/** The printed form of a created token. */
export function formatJoinToken(caHash: string, id: string, secret: string): string {
  return `${PREFIX}${caHash}${SEPARATOR}${id}.${secret}`;
}

/**
 * The id a token is recorded under: a created token's own, or for the join-token file's form one
 * derived from its secret (so every replica derives the same, whatever file it holds).
 */
export function joinTokenId(token: Pick<JoinToken, 'id' | 'secret'>): string {
  return token.id ?? createHash('sha256').update(`clusterd join-token file:${token.secret.toLowerCase()}`).digest('hex').slice(0, 6);
}

/** What the cluster stores in place of a secret. The secrets are random (83 or 128 bits), so one SHA-256 suffices. */
export function hashJoinSecret(secret: string): string {
  return `sha256:${createHash('sha256').update(secret.toLowerCase()).digest('hex')}`;
}

/** Whether `presented` hashes to `hash` (constant time on the digest). */
export function joinSecretHashMatches(hash: string, presented: string): boolean {
  const want = Buffer.from(hash.replace(/^sha256:/, ''), 'hex');
  const got = Buffer.from(hashJoinSecret(presented).slice('sha256:'.length), 'hex');
  return want.length === got.length && timingSafeEqual(want, got);
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

