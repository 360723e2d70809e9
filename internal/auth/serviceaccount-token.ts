// internal/auth/serviceaccount-token owns service-account JWTs: minting them (TokenRequest, the
// token controller's legacy secrets) and authenticating them. Claims are upstream 1.32's: iss,
// sub = system:serviceaccount:<ns>:<name>, aud, exp, iat, nbf, jti and the private claim
// (`kubernetes.io`, or the naming's label domain) holding namespace, serviceaccount {name, uid}
// and the bound pod, secret or node {name, uid}. Legacy secret tokens carry the older flat
// claims (`<domain>/serviceaccount/namespace`, …) under their own issuer and no expiry.
//
// Authentication: a token whose `iss` is not ours is no opinion; ours is verified with the
// configured keys (RS256/ES256/ES384/ES512 only: `none` and HMAC are refused whatever the key),
// then checked for time (one minute of leeway, as upstream), audience (the request's or the API
// audiences) and, with lookup on, for the ServiceAccount (same uid, not being deleted) and the
// bound object still existing. Signature checks are cached by token digest for a short time;
// time, audience and lookup are checked on every request. Messages never contain the token.
// Imports: authenticator, token-authenticator, user, serviceaccount-keys; jose.

import * as nodeCrypto from 'node:crypto';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { CompactSign, compactVerify, decodeJwt } from 'jose';
import { BoundedMap } from '../memo/bounded-map.js';
import { AuthnError, isThenable, type AuthnResponse } from './authenticator.js';
import type { TokenAuthenticator } from './token-authenticator.js';
import { SERVICE_ACCOUNTS_GROUP, type UserInfo } from './user.js';

export { SERVICE_ACCOUNTS_GROUP };
import type { SigningKey, VerifyingKey } from './serviceaccount-keys.js';

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
/** Upstream's default leeway for exp, nbf and iat. */
const LEEWAY_S = 60;

export interface ObjectRef {
  name: string;
  uid: string;
}

export interface MintRequest {
  namespace: string;
  serviceAccount: ObjectRef;
  audiences: readonly string[];
  expirationSeconds: number;
  /** Seconds after issue when using the token is stale (an extended token's requested lifetime): the warnafter claim. */
  warnAfterSeconds?: number;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
}

/** The naming-dependent names of the claims and extra keys. */
export interface ServiceAccountNames {
  /** `kubernetes.io` or `cluster.io`: the private claim, and the legacy claims' prefix. */
  domain: string;
  /** `authentication.kubernetes.io/` or `authentication.cluster.io/`: prefix of extra keys. */
  extraPrefix: string;
  /** `kubernetes/serviceaccount` or `cluster/serviceaccount`: the issuer of legacy secret tokens. */
  legacyIssuer: string;
  /** `authentication.k8s.io/stale-token` or `authentication.cluster.io/stale-token`: the audit annotation of a stale extended token. */
  staleTokenAnnotation: string;
}

export function serviceAccountNames(naming: { labelDomain: string; labelPrefix(sub: string): string; group(upstream: string): string; mode: string }): ServiceAccountNames {
  return { domain: naming.labelDomain, extraPrefix: naming.labelPrefix('authentication'), legacyIssuer: `${naming.mode}/serviceaccount`, staleTokenAnnotation: `${naming.group('authentication.k8s.io')}/stale-token` };
}

export const serviceAccountUsername = (namespace: string, name: string): string => `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;

export class ServiceAccountTokenSigner {
  constructor(
    private readonly key: SigningKey,
    private readonly issuer: string,
    private readonly names: ServiceAccountNames,
  ) {}

  private sign(payload: Record<string, unknown>): Promise<string> {
    return new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader({ alg: this.key.alg, kid: this.key.kid }).sign(this.key.key);
  }

  /** A bound token (TokenRequest). */
  async mint(req: MintRequest, now: Date): Promise<{ token: string; expiration: Date; jti: string }> {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + req.expirationSeconds;
    const jti = randomUUID();
    const priv: Record<string, unknown> = { namespace: req.namespace };
    // Bound objects in upstream's order of precedence: a pod (with its node), a secret, a node.
    if (req.pod) {
      if (req.node) priv.node = { ...req.node };
      priv.pod = { ...req.pod };
    } else if (req.secret) priv.secret = { ...req.secret };
    else if (req.node) priv.node = { ...req.node };
    priv.serviceaccount = { ...req.serviceAccount };
    if (req.warnAfterSeconds !== undefined) priv.warnafter = iat + req.warnAfterSeconds;
    const payload = {
      aud: [...req.audiences],
      exp,
      iat,
      iss: this.issuer,
      jti,
      [this.names.domain]: priv,
      nbf: iat,
      sub: serviceAccountUsername(req.namespace, req.serviceAccount.name),
    };
    return { token: await this.sign(payload), expiration: new Date(exp * 1000), jti };
  }

  /** A legacy, non-expiring token for a kubernetes.io/service-account-token secret. */
  mintLegacy(namespace: string, serviceAccount: ObjectRef, secretName: string): Promise<string> {
    const d = this.names.domain;
    return this.sign({
      iss: this.names.legacyIssuer,
      [`${d}/serviceaccount/namespace`]: namespace,
      [`${d}/serviceaccount/secret.name`]: secretName,
      [`${d}/serviceaccount/service-account.name`]: serviceAccount.name,
      [`${d}/serviceaccount/service-account.uid`]: serviceAccount.uid,
      sub: serviceAccountUsername(namespace, serviceAccount.name),
    });
  }
}

/** What lookup needs of an object: read from the watch cache (then the store), never per field. */
export interface LookedUpObject {
  uid: string;
  deleting: boolean;
  labels: Readonly<Record<string, string>>;
  /** Secret data (base64 values), for the legacy token comparison. */
  data?: Readonly<Record<string, string>>;
}

export interface ObjectLookup {
  /**
   * The object, or undefined when it does not exist. Answers without a promise when it can (the
   * watch cache holds the key): a token verified a moment ago then authenticates in one turn.
   */
  get(kind: 'ServiceAccount' | 'Pod' | 'Secret' | 'Node', namespace: string, name: string): Promise<LookedUpObject | undefined> | LookedUpObject | undefined;
  /** Called when a legacy secret token is used (upstream's last-used label tracking). */
  legacyTokenUsed?(namespace: string, secretName: string): void;
}

export interface ServiceAccountAuthenticatorOptions {
  issuers: readonly string[];
  keys: readonly VerifyingKey[];
  /** The API audiences: what a token must name when the request names none. */
  apiAudiences: readonly string[];
  names: ServiceAccountNames;
  /** Undefined when --service-account-lookup is off. */
  lookup: ObjectLookup | undefined;
  now?: () => Date;
  /** How long a verified signature is remembered (default 10 s). */
  cacheTtlMs?: number;
  cacheSize?: number;
  /** Called when an extended token is used after its warnafter time (serviceaccount_stale_tokens_total). */
  onStaleToken?: () => void;
}

type Claims = Record<string, unknown>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const refOf = (v: unknown): ObjectRef | undefined => (isRecord(v) && typeof v.name === 'string' ? { name: v.name, uid: str(v.uid) } : undefined);

const ALGORITHMS = ['RS256', 'ES256', 'ES384', 'ES512'];

// crypto.hash (Node 20.12+) digests in one call; a Hash object per request cost more than the
// digest itself. Older Node 20 releases get the Hash object.
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;
/** The key of the verified-token memo: the token itself is not kept. */
export const tokenDigest = (token: string): string =>
  oneShotHash ? oneShotHash('sha256', token, 'base64url') : createHash('sha256').update(token).digest('base64url');

export function serviceAccountTokenAuthenticator(o: ServiceAccountAuthenticatorOptions): TokenAuthenticator {
  const now = o.now ?? (() => new Date());
  const ttl = o.cacheTtlMs ?? 10_000;
  const cacheSize = o.cacheSize ?? 4096;
  const verified = new BoundedMap<string, { claims: Claims; until: number }>(cacheSize);
  const issuers = new Set(o.issuers);
  const d = o.names.domain;

  async function verifySignature(token: string, digest: string): Promise<Claims> {
    const t = Date.now();
    let header: { kid?: unknown; alg?: unknown };
    try {
      header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as typeof header;
    } catch {
      throw new AuthnError('malformed service account token header');
    }
    if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) throw new AuthnError(`service account token uses a refused signing algorithm`);
    // The key the token names first; every key of its algorithm when it names none we know.
    const byKid = o.keys.filter((k) => k.kid === header.kid && k.alg === header.alg);
    const candidates = byKid.length > 0 ? byKid : o.keys.filter((k) => k.alg === header.alg);
    for (const k of candidates) {
      try {
        const { payload } = await compactVerify(token, k.key, { algorithms: [k.alg] });
        const claims = JSON.parse(Buffer.from(payload).toString('utf8')) as unknown;
        if (!isRecord(claims)) throw new AuthnError('malformed service account token claims');
        verified.set(digest, { claims, until: t + ttl });
        return claims;
      } catch (e) {
        if (e instanceof AuthnError) throw e;
      }
    }
    throw new AuthnError('service account token signature is invalid');
  }

  /** The object `ref` names, checked to exist as the token knew it; without a promise when the lookup answers at once. */
  function mustExist(kind: 'ServiceAccount' | 'Pod' | 'Secret' | 'Node', namespace: string, ref: ObjectRef, what: string): Promise<LookedUpObject | undefined> | LookedUpObject | undefined {
    if (!o.lookup) return undefined;
    const found = o.lookup.get(kind, namespace, ref.name);
    return isThenable(found) ? found.then((obj) => existing(obj, ref, what)) : existing(found, ref, what);
  }

  function existing(obj: LookedUpObject | undefined, ref: ObjectRef, what: string): LookedUpObject {
    if (!obj) throw new AuthnError(`${what} has been deleted`);
    if (obj.deleting) throw new AuthnError(`${what} is being deleted`);
    if (ref.uid !== '' && obj.uid !== ref.uid) throw new AuthnError(`${what} has been deleted and recreated (uid ${obj.uid} does not match the token's ${ref.uid})`);
    return obj;
  }

  function checkAudiences(tokenAuds: readonly string[], wanted: readonly string[]): string[] {
    const auds = tokenAuds.filter((a) => wanted.includes(a));
    if (auds.length === 0) throw new AuthnError(`token audiences ${JSON.stringify(tokenAuds)} is invalid for the target audiences ${JSON.stringify(wanted)}`);
    return auds;
  }

  /**
   * What a bound token's claims say, worked out once per verified claims object: its static
   * checks' first failure (in the order `bound` reports them) and the user it names. Only the
   * time, the audiences asked for and the lookups differ between requests.
   */
  interface BoundToken {
    /** The missing-expiry failure, reported before the time checks. */
    noExpiry?: string;
    exp: number;
    nbf: unknown;
    iat: unknown;
    aud: string[];
    /** The first failure of the private claim and subject, reported after the audience check. */
    malformed?: string;
    namespace: string;
    sa: ObjectRef;
    pod: ObjectRef | undefined;
    secret: ObjectRef | undefined;
    node: ObjectRef | undefined;
    user: UserInfo;
    warnAfter: unknown;
    /** The audiences of the last `wanted` list seen (the API audiences, nearly always). */
    lastWanted?: readonly string[];
    lastAudiences?: string[];
  }
  const boundTokens = new WeakMap<Claims, BoundToken>();

  function boundToken(claims: Claims): BoundToken {
    const known = boundTokens.get(claims);
    if (known) return known;
    const exp = claims.exp;
    const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
    const priv = claims[d];
    const namespace = isRecord(priv) ? str(priv.namespace) : '';
    const sa = isRecord(priv) ? refOf(priv.serviceaccount) : undefined;
    let malformed: string | undefined;
    if (!isRecord(priv)) malformed = `service account token lacks the ${d} claim`;
    else if (!namespace || !sa || !sa.uid) malformed = 'service account token lacks its namespace or service account';
    else if (claims.sub !== serviceAccountUsername(namespace, sa.name)) malformed = 'service account token subject does not match its claims';
    const pod = isRecord(priv) ? refOf(priv.pod) : undefined;
    const secret = isRecord(priv) ? refOf(priv.secret) : undefined;
    const node = isRecord(priv) ? refOf(priv.node) : undefined;
    const extra: Record<string, string[]> = {};
    const x = o.names.extraPrefix;
    if (pod) {
      extra[`${x}pod-name`] = [pod.name];
      extra[`${x}pod-uid`] = [pod.uid];
    }
    if (node) {
      extra[`${x}node-name`] = [node.name];
      extra[`${x}node-uid`] = [node.uid];
    }
    if (typeof claims.jti === 'string' && claims.jti) extra[`${x}credential-id`] = [`JTI=${claims.jti}`];
    // One user object per token: the same object on every request lets the authenticated-group
    // form and anything else keyed by the user be remembered. Users are read-only downstream.
    const user: UserInfo = {
      name: serviceAccountUsername(namespace, sa?.name ?? ''),
      uid: sa?.uid ?? '',
      groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`],
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    };
    const t: BoundToken = {
      ...(typeof exp !== 'number' ? { noExpiry: 'service account token has no expiration' } : {}),
      exp: typeof exp === 'number' ? exp : 0,
      nbf: claims.nbf,
      iat: claims.iat,
      aud,
      ...(malformed ? { malformed } : {}),
      namespace,
      sa: sa ?? { name: '', uid: '' },
      pod,
      secret,
      node,
      user,
      warnAfter: isRecord(priv) ? priv.warnafter : undefined,
    };
    boundTokens.set(claims, t);
    return t;
  }

  /**
   * A bound token's checks. Synchronous while the lookups answer at once (the watch cache holds
   * the objects): the time, audience and claim checks never wait, and the lookups run in
   * order, the first failure being the one reported, as before.
   */
  function bound(claims: Claims, wanted: readonly string[]): Promise<AuthnResponse> | AuthnResponse {
    const b = boundToken(claims);
    const t = Math.floor(now().getTime() / 1000);
    if (b.noExpiry) throw new AuthnError(b.noExpiry);
    if (t > b.exp + LEEWAY_S) throw new AuthnError('service account token has expired');
    if (typeof b.nbf === 'number' && t < b.nbf - LEEWAY_S) throw new AuthnError('service account token is not valid yet');
    if (typeof b.iat === 'number' && t < b.iat - LEEWAY_S) throw new AuthnError('service account token was issued in the future');
    let audiences: string[];
    if (b.lastWanted === wanted && b.lastAudiences) audiences = b.lastAudiences;
    else {
      audiences = checkAudiences(b.aud, wanted);
      b.lastWanted = wanted;
      b.lastAudiences = audiences;
    }
    if (b.malformed) throw new AuthnError(b.malformed);
    const { namespace, sa, pod, secret, node } = b;
    const lookups: (() => ReturnType<typeof mustExist>)[] = [() => mustExist('ServiceAccount', namespace, sa, `service account ${namespace}/${sa.name}`)];
    if (pod) lookups.push(() => mustExist('Pod', namespace, pod, `pod ${namespace}/${pod.name} the token is bound to`));
    if (secret) lookups.push(() => mustExist('Secret', namespace, secret, `secret ${namespace}/${secret.name} the token is bound to`));
    // A pod's node is informational; a token bound to a node alone needs the node.
    if (node && !pod) lookups.push(() => mustExist('Node', '', node, `node ${node.name} the token is bound to`));
    for (let i = 0; i < lookups.length; i++) {
      const r = lookups[i]!();
      if (isThenable(r)) {
        return (async () => {
          await r;
          for (const next of lookups.slice(i + 1)) await next();
          return boundResponse(b, t, audiences);
        })();
      }
    }
    return boundResponse(b, t, audiences);
  }

  /** What a bound token that passed every check answers, at `t` (seconds). */
  function boundResponse(b: BoundToken, t: number, audiences: string[]): AuthnResponse {
    const user = b.user;
    // An extended token still works after its requested lifetime; its use is made visible.
    const warnAfter = b.warnAfter;
    if (typeof warnAfter === 'number' && t > warnAfter) {
      o.onStaleToken?.();
      return { user, audiences, auditAnnotations: { [o.names.staleTokenAnnotation]: `subject: ${user.name}, seconds after warning threshold: ${t - warnAfter}` } };
    }
    return { user, audiences };
  }

  async function legacy(claims: Claims, token: string, wanted: readonly string[]): Promise<AuthnResponse> {
    // No aud: valid for the API audiences only.
    const audiences = checkAudiences(o.apiAudiences, wanted);
    const namespace = str(claims[`${d}/serviceaccount/namespace`]);
    const secretName = str(claims[`${d}/serviceaccount/secret.name`]);
    const saName = str(claims[`${d}/serviceaccount/service-account.name`]);
    const saUid = str(claims[`${d}/serviceaccount/service-account.uid`]);
    if (!namespace || !secretName || !saName || !saUid) throw new AuthnError('legacy service account token lacks a claim');
    if (claims.sub !== serviceAccountUsername(namespace, saName)) throw new AuthnError('service account token subject does not match its claims');
    if (o.lookup) {
      const secret = await mustExist('Secret', namespace, { name: secretName, uid: '' }, `secret ${namespace}/${secretName} holding the token`);
      const stored = Buffer.from(secret?.data?.token ?? '', 'base64');
      const given = Buffer.from(token);
      if (stored.length !== given.length || !timingSafeEqual(stored, given)) throw new AuthnError(`the token does not match secret ${namespace}/${secretName}`);
      if (secret?.labels[`${d}/legacy-token-invalid-since`] !== undefined) {
        throw new AuthnError(`the token in secret ${namespace}/${secretName} has been marked invalid (label ${d}/legacy-token-invalid-since)`);
      }
      await mustExist('ServiceAccount', namespace, { name: saName, uid: saUid }, `service account ${namespace}/${saName}`);
      o.lookup.legacyTokenUsed?.(namespace, secretName);
    }
    return { user: { name: serviceAccountUsername(namespace, saName), uid: saUid, groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`] }, audiences };
  }

  return {
    name: 'service-account',
    audienceAware: true,
    authenticateToken(token: string, audiences: readonly string[]): Promise<AuthnResponse | null> | AuthnResponse | null {
      // A token verified a moment ago skips parsing and the signature; time, audience and
      // lookup are checked every time, without a promise when the lookups answer at once.
      const digest = tokenDigest(token);
      const hit = verified.get(digest);
      const withClaims = (claims: Claims): Promise<AuthnResponse> | AuthnResponse =>
        claims.iss === o.names.legacyIssuer ? legacy(claims, token, audiences) : bound(claims, audiences);
      if (hit && hit.until > Date.now()) return withClaims(hit.claims);
      // Not ours unless it parses as a JWT from one of our issuers (upstream's hasCorrectIssuer).
      if (token.split('.').length !== 3) return null;
      let iss: unknown;
      try {
        iss = decodeJwt(token).iss;
      } catch {
        return null;
      }
      if (typeof iss !== 'string' || (!issuers.has(iss) && iss !== o.names.legacyIssuer)) return null;
      return verifySignature(token, digest).then(withClaims);
    },
  };
}
