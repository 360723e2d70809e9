// internal/auth/serviceaccount-keys owns the key material of service-account tokens: the signing
// key (--service-account-signing-key-file) and the verifying keys (--service-account-key-file,
// repeatable), read from PEM files that may hold several public keys, private keys (their
// public half is used) or certificates, as upstream's keyutil reads them. RSA signs RS256,
// ECDSA ES256/ES384/ES512 by curve. The key id is upstream's: base64url(SHA-256(DER SPKI)).
// Imports: nothing from the project.

import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface VerifyingKey {
  key: KeyObject;
  alg: string;
  kid: string;
}

export interface SigningKey {
  key: KeyObject;
  alg: string;
  kid: string;
}

/** The JWS algorithm of an RSA or ECDSA key; throws for any other kind. */
export function algorithmOf(key: KeyObject, source: string): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
    throw new Error(`${source}: unsupported elliptic curve ${curve ?? 'unknown'}`);
  }
  throw new Error(`${source}: unsupported key type ${key.asymmetricKeyType ?? 'unknown'} (want RSA or ECDSA)`);
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('base64url');
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** Every public key a PEM file yields (public keys, private keys, certificates). */
export function publicKeysFromPem(text: string, source: string): VerifyingKey[] {
  const keys: VerifyingKey[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    const type = m[1]!;
    let pub: KeyObject;
    if (type === 'CERTIFICATE') pub = new X509Certificate(m[0]).publicKey;
    else if (type.endsWith('PRIVATE KEY')) pub = createPublicKey(createPrivateKey(m[0]));
    else if (type.endsWith('PUBLIC KEY')) pub = createPublicKey(m[0]);
    else continue;
    keys.push({ key: pub, alg: algorithmOf(pub, source), kid: keyIdOf(pub) });
  }
  if (keys.length === 0) throw new Error(`${source}: no public keys found (want PEM RSA or ECDSA keys or certificates)`);
  return keys;
}

export function readVerifyingKeys(path: string): VerifyingKey[] {
  return publicKeysFromPem(readFileSync(path, 'utf8'), path);
}

export function readSigningKey(path: string): SigningKey {
  const key = createPrivateKey(readFileSync(path, 'utf8'));
  const pub = createPublicKey(key);
  return { key, alg: algorithmOf(key, path), kid: keyIdOf(pub) };
}

/** The public half of a signing key, as a verifying key. */
export function verifyingKeyOf(signing: SigningKey): VerifyingKey {
  return { key: createPublicKey(signing.key), alg: signing.alg, kid: signing.kid };
}
