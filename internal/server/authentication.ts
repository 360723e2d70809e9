// internal/server/authentication owns building the authentication chain from the flags: the
// order (client certificate, then bearer tokens: static file, service-account tokens, bootstrap
// tokens, then the external token authenticators the server passes in: JWT issuers and the token
// webhook, all in one bearer-token union as upstream's), anonymous access, the service-account signing and verifying keys, issuers and API
// audiences, and the object lookups token authenticators need, read from this replica's watch
// cache (a store read only for an object the cache does not hold yet).
// Imports: auth, config, naming, registry, schema, watchcache, log.

import { Counter, type Registry } from 'prom-client';
import { AuthnError, failureMessage, type Authenticator } from '../auth/authenticator.js';
import { bootstrapTokenAuthenticator, secretData, type BootstrapSecret } from '../auth/bootstrap-token.js';
import { readSigningKey, readVerifyingKeys, verifyingKeyOf, type VerifyingKey } from '../auth/serviceaccount-keys.js';
import {
  serviceAccountNames, serviceAccountTokenAuthenticator, ServiceAccountTokenSigner, type LookedUpObject, type ObjectLookup,
} from '../auth/serviceaccount-token.js';
import { bearerTokenAuthenticator, type TokenAuthenticator } from '../auth/token-authenticator.js';
import { tokenFileAuthenticator } from '../auth/token-file.js';
import { x509Authenticator } from '../auth/x509-authenticator.js';
import type { ServerConfig } from '../config/flags.js';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import { objectKey, resourcePrefix } from '../registry/keys.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import type { ReadMode } from '../watchcache/storage.js';

export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const SYSTEM_NAMESPACE = 'kube-system';

/** The secret type of bootstrap tokens: `bootstrap.kubernetes.io/token` or the naming's. */
export const bootstrapSecretType = (naming: Naming): string => `${naming.labelPrefix('bootstrap')}token`;

export interface AuthenticationSetup {
  /** The chain: client certificate, then one bearer-token union of the cluster's token authenticators followed by `external` ones. */
  authenticators(external: readonly TokenAuthenticator[]): Authenticator[];
  anonymous: boolean;
  signer: ServiceAccountTokenSigner;
  issuers: string[];
  apiAudiences: string[];
  maxExpirationSeconds: number;
  extendExpiration: boolean;
}

interface Sources {
  config: ServerConfig;
  naming: Naming;
  /** The PKI's service-account key pair (defaults of the key flags). */
  saKeyFile: string;
  saPubFile: string;
  catalog: ApiCatalog;
  cache: WatchCache;
  storage: { get(key: string, mode: ReadMode): Promise<CacheEntry | undefined> };
  /** For the legacy-token last-used label; absent: not tracked. */
  registries?: RegistrySet;
  log: Logger;
  /** Where serviceaccount_stale_tokens_total is registered (absent: not counted). */
  registry?: Registry;
}

/** Reads core objects the way token lookups want them: cache first, parsed once per version. */
export class CachedObjects {
  private readonly parsed = new WeakMap<CacheEntry, Record<string, unknown>>();
  private readonly resources = new Map<string, { r: ResourceInfo; prefix: string }>();

  constructor(private readonly s: Pick<Sources, 'catalog' | 'cache' | 'storage'>) {}

  /** The core resource and its key prefix: the catalog's core kinds never change. */
  private resourceOf(resource: string): { r: ResourceInfo; prefix: string } {
    let known = this.resources.get(resource);
    if (!known) {
      const r = this.s.catalog.resource('', 'v1', resource)!;
      this.resources.set(resource, (known = { r, prefix: resourcePrefix(r) }));
    }
    return known;
  }

  /** `storeFallback` off: the cache only (bootstrap tokens, where any guess would cost a read). */
  async get(resource: CachedResource, namespace: string, name: string, storeFallback = true): Promise<Record<string, unknown> | undefined> {
    const cached = this.cached(resource, namespace, name);
    if (cached !== NOT_CACHED) return cached;
    return storeFallback ? this.stored(resource, namespace, name) : undefined;
  }

  /** get() from the cache alone, without a promise; NOT_CACHED when the cache lacks the key. */
  cached(resource: CachedResource, namespace: string, name: string): Record<string, unknown> | undefined | typeof NOT_CACHED {
    const { r, prefix } = this.resourceOf(resource);
    const entry = this.s.cache.resource(prefix).get(objectKey(r, namespace, name));
    return entry ? this.objectOf(entry) : NOT_CACHED;
  }

  /**
   * get() from the store, for a key the cache does not hold (yet): a token minted on another
   * replica a moment ago, or a deleted object. A consistent read settles it, as upstream's
   * getter falls back to a GET.
   */
  async stored(resource: CachedResource, namespace: string, name: string): Promise<Record<string, unknown> | undefined> {
    const entry = await this.s.storage.get(objectKey(this.resourceOf(resource).r, namespace, name), { kind: 'consistent' });
    return entry ? this.objectOf(entry) : undefined;
  }

  private objectOf(entry: CacheEntry): Record<string, unknown> | undefined {
    if (entry.corrupt) return undefined;
    let obj = this.parsed.get(entry);
    if (!obj) {
      obj = JSON.parse(entry.bytes.toString('utf8')) as Record<string, unknown>;
      this.parsed.set(entry, obj);
    }
    return obj;
  }
}

type CachedResource = 'serviceaccounts' | 'pods' | 'secrets' | 'nodes';
/** CachedObjects.cached's answer when the cache does not hold the key. */
export const NOT_CACHED: unique symbol = Symbol('not cached');

const metaOf = (obj: Record<string, unknown>): { uid?: string; deletionTimestamp?: string; labels?: Record<string, string> } =>
  (obj.metadata ?? {}) as { uid?: string; deletionTimestamp?: string; labels?: Record<string, string> };

export function buildAuthentication(s: Sources): AuthenticationSetup {
  const { config, naming, log } = s;
  const objects = new CachedObjects(s);
  const issuers = config.serviceAccountIssuers.length > 0 ? [...config.serviceAccountIssuers] : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  const apiAudiences = config.apiAudiences.length > 0 ? [...config.apiAudiences] : [issuers[0]!];
  const signingKey = readSigningKey(config.serviceAccountSigningKeyFile ?? s.saKeyFile);
  const keyFiles = config.serviceAccountKeyFiles.length > 0 ? config.serviceAccountKeyFiles : [s.saPubFile];
  const keys: VerifyingKey[] = [verifyingKeyOf(signingKey), ...keyFiles.flatMap((f) => readVerifyingKeys(f))];
  const names = serviceAccountNames(naming);
  const signer = new ServiceAccountTokenSigner(signingKey, issuers[0]!, names);

  const kinds = { ServiceAccount: 'serviceaccounts', Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as const;
  // Per parsed object (one per stored version, so a change is a new object): what token
  // lookups read of it.
  const lookedUp = new WeakMap<Record<string, unknown>, LookedUpObject>();
  // A failed read (no leader) is not a revoked token; the request fails as unauthenticated all
  // the same, since nothing proves the token valid.
  const lookupFailed = (kind: string, e: unknown) => new AuthnError(`looking up the ${kind} failed: ${failureMessage(e)}`);
  const lookup: ObjectLookup = {
    // From the cache without a promise when it holds the key (every request with a token
    // verified a moment ago asks for its service account); from the store otherwise.
    get(kind, namespace, name): Promise<LookedUpObject | undefined> | LookedUpObject | undefined {
      let cached: ReturnType<CachedObjects['cached']>;
      try {
        cached = objects.cached(kinds[kind], namespace, name);
      } catch (e) {
        throw lookupFailed(kind, e);
      }
      if (cached !== NOT_CACHED) return lookedUpOf(kind, cached);
      return objects.stored(kinds[kind], namespace, name).then(
        (obj) => lookedUpOf(kind, obj),
        (e: unknown) => {
          throw lookupFailed(kind, e);
        },
      );
    },
  };
  function lookedUpOf(kind: keyof typeof kinds, obj: Record<string, unknown> | undefined): LookedUpObject | undefined {
    if (!obj) return undefined;
    let found = lookedUp.get(obj);
    if (!found) {
      const meta = metaOf(obj);
      found = {
        uid: meta.uid ?? '',
        deleting: Boolean(meta.deletionTimestamp),
        labels: meta.labels ?? {},
        ...(kind === 'Secret' ? { data: (obj.data ?? {}) as Record<string, string> } : {}),
      };
      lookedUp.set(obj, found);
    }
    return found;
  }

  // Upstream's legacy-token tracking: a secret-based token that authenticates marks its secret
  // with the day (UTC) it was last used, written at most once a day per secret, off the
  // request's path (a failed write is only logged).
  const lastUsedLabel = `${naming.labelDomain}/legacy-token-last-used`;
  const marking = new Set<string>();
  if (s.registries) {
    const registries = s.registries;
    lookup.legacyTokenUsed = (namespace, secretName) => {
      const today = new Date().toISOString().slice(0, 10);
      const key = `${namespace}/${secretName}`;
      if (marking.has(key)) return;
      void objects.get('secrets', namespace, secretName, false).then(async (obj) => {
        if (!obj || metaOf(obj).labels?.[lastUsedLabel] === today) return;
        marking.add(key);
        const r = s.catalog.resource('', 'v1', 'secrets')!;
        const ctx = { user: { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, manager: 'kube-apiserver', namespace, dryRun: false, warnings: [] as string[] };
        await registries.for(r)!.patch(r, ctx, secretName, '', {
          build: (cur) => {
            const meta = (cur.metadata ?? {}) as Record<string, unknown>;
            return { ...cur, metadata: { ...meta, labels: { ...((meta.labels as Record<string, string> | undefined) ?? {}), [lastUsedLabel]: today } } };
          },
        });
      }).catch((e: unknown) => log.warn('marking a legacy token as used failed', { secret: key, error: e instanceof Error ? e.message : String(e) }))
        .finally(() => marking.delete(key));
    };
  }

  const tokens: TokenAuthenticator[] = [];
  if (config.tokenAuthFile) tokens.push(tokenFileAuthenticator(config.tokenAuthFile, (m) => log.warn(m)));
  const stale = s.registry ? new Counter({ name: 'serviceaccount_stale_tokens_total', help: 'Cumulative stale projected service account tokens used', registers: [s.registry] }) : undefined;
  tokens.push(serviceAccountTokenAuthenticator({ issuers, keys, apiAudiences, names, lookup: config.serviceAccountLookup ? lookup : undefined, ...(stale ? { onStaleToken: () => stale.inc() } : {}) }));
  if (config.enableBootstrapTokenAuth) {
    const secretType = bootstrapSecretType(naming);
    tokens.push(
      bootstrapTokenAuthenticator({
        secretType,
        async getSecret(name): Promise<BootstrapSecret | undefined> {
          // The cache only, as upstream's lister: a guessed token must not cost a store read.
          const obj = await objects.get('secrets', SYSTEM_NAMESPACE, name, false);
          if (!obj) return undefined;
          return { type: String(obj.type ?? ''), data: secretData(obj), deleting: Boolean(metaOf(obj).deletionTimestamp) };
        },
      }),
    );
  }
  return {
    authenticators: (external) => [x509Authenticator, bearerTokenAuthenticator([...tokens, ...external], apiAudiences)],
    anonymous: config.anonymousAuth,
    signer,
    issuers,
    apiAudiences,
    maxExpirationSeconds: Math.floor(config.serviceAccountMaxTokenExpirationMs / 1000),
    extendExpiration: config.serviceAccountExtendTokenExpiration,
  };
}
