// internal/server owns assembling one API server replica from its configuration and running
// its lifecycle: PKI, store, catalog, registries, watch cache, admission, health checks, the
// HTTPS listener (HTTP/2 and HTTP/1.1 by ALPN), bootstrap objects, controllers, periodic
// compaction, and graceful shutdown (readyz fails first, requests drain, then exit).
// Imports: every internal module; nothing imports it but cmd/.

import { createSecureServer, type Http2SecureServer, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getRequestListener, RequestError } from '@hono/node-server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { errors, isConflict } from '../apierrors/status.js';
import { errorResponse } from '../http/respond.js';
import { AdmissionChain } from '../admission/admission.js';
import { EndpointServiceResolver } from '../webhook/client-config.js';
import { lockDataDir } from './data-dir-lock.js';
import { withEndStreamOnData } from './h2-end-stream.js';
import { WebhookConverter } from '../registry/webhook-conversion.js';
import { buildPlugins, enabledPluginNames } from '../admission/plugins.js';
import { refuseCreateIn, type NamespaceState } from '../admission/namespace-lifecycle.js';
import { WebhookDispatcher } from '../admission/webhook/dispatcher.js';
import { admissionConverter } from '../admission/version-conversion.js';
import { createNodeAuthorizer } from '../authz/node/node-authorizer.js';
import { serviceAllocator } from '../admission/service-ips.js';
import { priorityClassesIn } from './bootstrap-apf.js';
import { podsIn, storageClassesIn } from './admission-reads.js';
import { loadAdmissionConfiguration } from '../admission/admission-config.js';
import { DEFAULT_POD_SECURITY_CONFIG, parsePodSecurityConfiguration } from '../admission/pod-security/policy.js';
import { validatingAdmissionPolicy } from '../admission/policy/validating-policy.js';
import { mutatingAdmissionPolicy } from '../admission/policy/mutating-policy.js';
import { validatingPolicyStatusController } from '../admission/policy/status-controller.js';
import { buildExternalAuthenticators } from '../auth/external-authenticators.js';
import { authorize as unionAuthorize, type Authorizer } from '../authz/authorizer.js';
import { createAbacAuthorizer, loadAbacPolicyFile } from '../authz/abac.js';
import { parseAuthorizationConfig, type ConfiguredAuthorizer } from '../authz/authorization-config.js';
import { AUTHORIZATION_ROLE, AuthorizationConfigController } from '../authz/authorization-config-controller.js';
import { anonymousAllowedWith, AuthorizationDecisionMetrics, AuthorizerChain, buildChain, configuredFromFlags, type AuthorizerFactories } from '../authz/chain.js';
import type { Naming } from '../naming/naming.js';
import { clusterRoleAggregationController } from '../authz/rbac/aggregation-controller.js';
import { createRbacAuthorizer } from '../authz/rbac/authorizer.js';
import { rbacEscalationPlugin } from '../authz/rbac/escalation.js';
import { createWebhookAuthorizer } from '../authz/webhook/webhook-authorizer.js';
import { FlagError, type ServerConfig } from '../config/flags.js';
import { enablementFrom } from '../config/runtime-config.js';
import { withGatedResources } from '../config/feature-gates.js';
import { NamespaceController } from '../controllers/namespace-controller.js';
import { CrdController } from '../controllers/crd-controller.js';
import { CatchUp } from '../registry/catch-up.js';
import { namespaceFinalizer } from '../defaults/core-kinds.js';
import { Aggregator } from '../aggregator/aggregator.js';
import { acceptUpgrades } from '../aggregator/upgrade.js';
import { HealthChecks } from '../health/health.js';
import { bodyReaders, cborSerializer, ProtobufSerializer } from '../http/serializers.js';
import { buildHandlerChain } from '../http/chain.js';
import type { HttpDeps, VersionInfo } from '../http/deps.js';
import { createLogger, type Logger } from '../log/logger.js';
import { ServerMetrics } from '../metrics/metrics.js';
import { registerWatchDeliveryMetrics } from '../metrics/watch-delivery.js';
import { showHiddenMetrics } from '../metrics/stability.js';
import { createAuditor } from '../audit/auditor.js';
import { createNaming } from '../naming/naming.js';
import { OpenApiDocuments } from '../openapi/openapi.js';
import { ensurePki, writeAdminKubeconfig } from '../pki/pki.js';
import { namespacePrefix, objectKey, REGISTRY_ROOT, resourcePrefix } from '../registry/keys.js';
import type { ObjectRules } from '../registry/object-rules.js';
import { builtinRules } from '../registry/builtin-rules.js';
import { translateStoreError } from '../registry/generic-registry.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { StorageList } from '../watchcache/storage.js';
import { BoundedMap } from '../memo/bounded-map.js';
import { decodedEntry } from '../watchcache/entry-object.js';
import { ManagedFieldsTracker } from '../registry/managed-fields.js';
import { RegistrySet, resourceSpecs } from '../registry/registry-set.js';
import { ApiCatalog, unknownRuntimeConfigKeys, type ResourceInfo } from '../schema/catalog.js';
import { builtinSchemas } from '../schema/openapi-index.js';
import { stabilityOf } from '../schema/versions.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { LocalReplicator } from '../store/replicator.js';
import type { EtcdRevisionStore } from '../store/etcd-store.js';
import type { RevisionStore, TxnResult } from '../store/types.js';
import type { EtcdLeadership } from '../cluster/etcd-leadership.js';
import type { ClusterReplica } from '../cluster/replica.js';
import { ReloadableFiles } from '../config/reloadable-files.js';
import { Cacher } from '../watchcache/cacher.js';
import { WatchCache } from '../watchcache/watch-cache.js';
import { ROUND_STAT_BOUNDS, roundStats } from '../watchcache/delivery-rounds.js';
import { bootstrapDigest, bootstrapNamespaces, bootstrapRbacPolicy, SYSTEM_NAMESPACES } from './bootstrap.js';
import { LeaderBootstrap } from '../cluster/leader-bootstrap.js';
import { bootstrapSecretType, buildAuthentication } from './authentication.js';
import { controllerEnabled, type ControllerName } from '../controllers/selection.js';
import { namespaceObjectsController, rootCaConfigMapName, tokensController } from '../controllers/serviceaccount-controllers.js';
import { resourceQuotaController } from '../controllers/resource-quota-controller.js';
import { bootstrapSigner, clusterInfoKubeconfig, tokenCleaner } from '../controllers/bootstrap-controllers.js';
import { ensureTokenTracking, legacyTokenCleaner } from '../controllers/legacy-token-cleaner.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { migrateSeparateEvents } from './migrate-events.js';
import { csrSigner } from '../controllers/csr-signer.js';
import { disruptionController } from '../controllers/disruption-controller.js';
import { nodeTaintController } from '../controllers/node-taints.js';
import { pvcProtectionController, pvProtectionController } from '../controllers/storage-protection.js';
import { bootstrapPriorityClasses, reconcileFlowControl } from './bootstrap-apf.js';
import { advertisedIp, EndpointLease, ensureKubernetesService, kubernetesEndpointsController } from '../controllers/kubernetes-endpoints.js';
import { serviceClaimsRepair } from '../controllers/service-claims-repair.js';
import { servingCipherPreference } from './tls-ciphers.js';

/** How long after start a health check that has not passed yet is starting rather than failing (the log). */
const QUIET_START_MS = 10_000;

export const SERVER_VERSION: VersionInfo = {
  major: '1',
  minor: '35',
  // Since 1.33 kube-apiserver also reports the emulated version (the binary's unless
  // --emulated-version says otherwise) and the minimum compatibility version (one minor back).
  emulationMajor: '1',
  emulationMinor: '35',
  minCompatibilityMajor: '1',
  minCompatibilityMinor: '34',
  gitVersion: 'v1.35.0',
  gitCommit: 'clusterd',
  gitTreeState: 'clean',
  buildDate: '2026-11-22T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

/** The store a server runs on: LevelDB (alone or under Raft) or an external etcd. */
export type ServerStore = RevisionStore & { compact(revision: number): Promise<TxnResult> };

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  readonly kubeconfigPath: string | undefined;
  readonly store: ServerStore;
  readonly cache: WatchCache;
  readonly health: HealthChecks;
  /** Set when this process is a replica of a multi-replica cluster. */
  readonly cluster: ClusterReplica | undefined;
  /** The served resources and their registries (the write path the server's own writers use). */
  readonly catalog: ApiCatalog;
  readonly registries: RegistrySet;
  /** Graceful stop: readyz fails, requests drain (after shutdownDelayMs), then everything closes. */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** Validation and defaulting rules (the full set is wired by default). */
  rules?: ObjectRules;
  /** How long get/list wait for a too-new resource version before 504 (tests shorten it). */
  tooLargeWaitMs?: number;
  /** Outputs a watcher may queue before it is closed as too slow (tests shrink it). */
  watcherCapacity?: number;
  /** Default watch bookmark interval (tests shorten it). */
  bookmarkIntervalMs?: number;
  /** How often the leader repairs the Service address claims (tests shorten it; default 3 minutes). */
  claimsRepairIntervalMs?: number;
}

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  // Refused before anything starts: only the previous minor release is a meaningful value.
  const metricsVersion = { major: Number(SERVER_VERSION.major), minor: Number(SERVER_VERSION.minor) };
  showHiddenMetrics(config.showHiddenMetricsForVersion, metricsVersion);
  const naming = createNaming(config.naming);
  // A usage error, refused before anything opens.
  const unknownKeys = unknownRuntimeConfigKeys(naming, config.runtimeConfig.map((e) => e.key));
  if (unknownKeys.length > 0) {
    throw new FlagError(`invalid value for --runtime-config: this server has no API ${unknownKeys.map((k) => `"${k === '/v1' ? 'v1' : k}"`).join(', ')} (under --naming=${config.naming}; \`kubectl api-versions\` lists what it serves)`);
  }
  // Upstream's ApplyAuthorization: anonymous requests and AlwaysAllow do not go together.
  if (!config.authorizationConfig && config.anonymousAuth && !anonymousAllowedWith(config.authorization.modes, config.anonymousAuth)) {
    log.warn('anonymous authentication is not allowed with the AlwaysAllow authorizer: --anonymous-auth reset to false; use another authorizer');
    config = { ...config, anonymousAuth: false };
  }
  // Read (ABAC: once, as upstream) before anything opens, so a bad policy stops the start.
  const abacPolicies = config.authorization.policyFile && !config.authorizationConfig ? loadAbacPolicyFile(config.authorization.policyFile, naming) : undefined;
  // The plugins' configurations, read once at start: a bad file stops the start here.
  const admissionConfigs = loadAdmissionConfiguration(config.admissionControlConfigFile, naming);
  const podSecurityConfig = admissionConfigs.has('PodSecurity') ? parsePodSecurityConfiguration(naming, admissionConfigs.get('PodSecurity')) : DEFAULT_POD_SECURITY_CONFIG;
  mkdirSync(config.dataDir, { recursive: true });
  // Before anything in the directory is opened or written.
  const dataDirLock = await lockDataDir(config.dataDir);
  // First, so a bad policy file stops the start before anything is opened.
  const audit = await createAuditor(config.audit, naming, log);
  // The configuration every replica must load identically: the structured files (reloaded on
  // change) and the access-control files read once at start, all in the hash the replicas
  // compare, so a replica started with another token file or ABAC policy is reported too.
  const configFiles = new ReloadableFiles(
    new Map(
      [
        ['authentication', config.authenticationConfig],
        ['authorization', config.authorizationConfig],
        ['authorization-policy', config.authorization.policyFile],
        ['authorization-webhook', config.authorization.webhook.configFile],
        ['token-auth', config.tokenAuthFile],
        ['authentication-webhook', config.tokenWebhook.configFile],
        ['admission-control', config.admissionControlConfigFile],
      ].filter((e): e is [string, string] => e[1] !== undefined),
    ),
  );
  const authorizationConfigGroup = naming.group('apiserver.config.k8s.io');
  // Validated before anything opens: an invalid file stops the start (reloads keep the old chain instead).
  const authorizationFile = configFiles.loaded.contents.get(AUTHORIZATION_ROLE);
  if (authorizationFile) parseAuthorizationConfig(authorizationFile.toString('utf8'), { group: authorizationConfigGroup });
  configFiles.watch();
  const clustered = config.initialCluster.length > 0 || config.join !== undefined;
  // The replica and the Raft library are loaded only for a cluster: a single server never runs them.
  const cluster = clustered ? await (await import('../cluster/replica.js')).ClusterReplica.open({ config, log, files: configFiles }) : undefined;
  // Certificates are made (first start only) while the store opens and the cache primes; a
  // cluster replica uses the cluster PKI it was given (or received when joining).
  const pkiReady = cluster ? Promise.resolve(cluster.pki) : ensurePki(config.dataDir, config.bindAddress);
  pkiReady.catch(() => {});

  const catalog = new ApiCatalog(naming, withGatedResources(enablementFrom(config.runtimeConfig, stabilityOf), config.featureGates, (g) => naming.upstreamGroup(g) ?? g));
  // Made before the store opens: a single server's store hands it each value its open reads.
  const cache = new WatchCache(undefined, {
    root: REGISTRY_ROOT,
    specFor: resourceSpecs(catalog),
    ...(options.watcherCapacity ? { watcherCapacity: options.watcherCapacity } : {}),
  });
  let store: ServerStore;
  let etcdLeadership: EtcdLeadership | undefined;
  let etcdStore: EtcdRevisionStore | undefined;
  if (config.storage === 'etcd') {
    // Nothing of the store is local: the data directory keeps certificates and the kubeconfig.
    // Loaded only here: the etcd client and gRPC cost about 0.4 s and 28 MB at every start.
    const [{ EtcdRevisionStore }, { EtcdLeadership }] = await Promise.all([import('../store/etcd-store.js'), import('../cluster/etcd-leadership.js')]);
    etcdStore = await EtcdRevisionStore.open({
      servers: config.etcd.servers,
      prefix: config.etcd.prefix,
      tls: {
        ...(config.etcd.caFile ? { ca: readFileSync(config.etcd.caFile) } : {}),
        ...(config.etcd.certFile ? { cert: readFileSync(config.etcd.certFile) } : {}),
        ...(config.etcd.keyFile ? { key: readFileSync(config.etcd.keyFile) } : {}),
      },
    });
    store = etcdStore;
    etcdLeadership = new EtcdLeadership(etcdStore.client, `${config.etcd.prefix}#leader`, config.name, log);
  } else {
    const levelStore = await LevelRevisionStore.open({
      storage: config.storage,
      path: join(config.dataDir, 'store'),
      naming: config.naming,
      // A replica's Raft log is durable before anything is applied: a lost tail of applied
      // state is applied again from it at start.
      // A replica applies its log after the open: its cache loads from a range once caught up.
      ...(cluster ? { replicator: cluster.replicator, sync: false } : { replicator: localReplicator(cache), latest: cache.preload() }),
    });
    if (cluster) await cluster.run(levelStore);
    store = levelStore;
  }
  // Servers sharing a store (Raft replicas, servers on one etcd) race at start-up writes and
  // elect one of them for leader-only work.
  const shared = cluster !== undefined || etcdLeadership !== undefined;
  const elector = cluster?.replicator ?? etcdLeadership;
  cache.attach(store);
  // A replica's writes carry what this cache derives from their objects, so that the other
  // replicas build their cache entries without parsing each object again.
  cluster?.replicator.describeWith((key, obj) => cache.attributeBytes(key, obj));
  // Records keep them beside the values too: a restart loads the cache without parsing objects.
  if (store instanceof LevelRevisionStore) store.describeWith((key, obj) => cache.attributeBytes(key, obj));
  const storage = new Cacher(store, cache, {
    tooLargeWaitMs: options.tooLargeWaitMs ?? 3000,
    listSnapshotTtlMs: config.featureGates.enabled('ListFromCacheSnapshot') ? 75_000 : 0,
  });
  const health = new HealthChecks(
    config.livezGracePeriodMs,
    Date.now,
    (endpoint, check, reason) =>
      reason === undefined ? log.info('health check passes again', { endpoint, check }) : log.warn('health check failed', { endpoint, check, reason }),
    // A start that has not finished in this long is worth a warning (a replica waiting for peers
    // says why); probes before it, as launchers and kubelets make at once, are not.
    Math.max(QUIET_START_MS, config.livezGracePeriodMs),
  );
  const namespaces = catalog.resource('', 'v1', 'namespaces')!;
  const namespaceTerminating = new WeakMap<object, boolean>();
  const servicesPrefix = resourcePrefix(catalog.resource('', 'v1', 'services')!);
  const serviceAddresses = new WeakMap<object, { ips: string[]; ports: number[] }>();
  const readEntry = async (resource: 'pods' | 'nodes' | 'services' | 'endpoints' | 'serviceaccounts', ns: string, name: string): Promise<CacheEntry | undefined> => {
    const key = objectKey(catalog.resource('', 'v1', resource)!, ns, name);
    let entry: CacheEntry | undefined;
    try {
      entry = (await storage.get(key, { kind: 'any' })) ?? (await storage.get(key, { kind: 'consistent' }));
    } catch (e) {
      throw translateStoreError(e);
    }
    return entry && !entry.corrupt ? entry : undefined;
  };
  const readObject = async (resource: 'pods' | 'nodes' | 'services' | 'endpoints' | 'serviceaccounts', ns: string, name: string): Promise<Record<string, unknown> | undefined> => {
    const entry = await readEntry(resource, ns, name);
    return entry ? (JSON.parse(entry.bytes.toString('utf8')) as Record<string, unknown>) : undefined;
  };
  // Every pod create reads its ServiceAccount twice (both admission phases) and only reads it:
  // the shared decoded form spares a parse of the same bytes each time (2% of a create).
  const readServiceAccount = async (ns: string, name: string): Promise<Readonly<Record<string, unknown>> | undefined> => {
    const entry = await readEntry('serviceaccounts', ns, name);
    return entry ? decodedEntry(entry) : undefined;
  };
  // Where admission webhooks, conversion webhooks and APIServices with a service reference are
  // called: one of the Service's endpoints, as this replica's cache holds them.
  const serviceResolver = new EndpointServiceResolver((resource, ns, name) => readObject(resource, ns, name));
  // RBAC answers from the watch cache (ready once the cache is primed); the escalation check
  // asks the whole chain for escalate/bind, which is assembled below.
  const rbac = createRbacAuthorizer({ cache, naming, log });
  // Replicas that share their objects with other API servers (a Raft cluster, or several servers
  // over one etcd) catch up with them before answering 404 for a resource or 403 (registry/catch-up).
  const catchUp = cluster || etcdStore ? new CatchUp(() => storage.waitUntilFresh({ kind: 'consistent' })) : undefined;
  if (catchUp) catchUp.register(() => rbac.index.sync());
  // The authorizer chain in force (assembled below, swapped whole on a configuration reload).
  const authorizers = new AuthorizerChain([]);
  // Storage behaviour upstream runs in its registries, not as admission plugins: always on,
  // after the mutating plugins and webhooks and before the validating ones (buildPlugins).
  const storageSteps = [
    serviceAllocator(() => {
      const clusterIPs = new Set<string>();
      const nodePorts = new Set<number>();
      for (const entry of cache.resource(servicesPrefix).list().entries) {
        let held = serviceAddresses.get(entry);
        if (!held) {
          const spec = ((JSON.parse(entry.bytes.toString('utf8')) as { spec?: Record<string, unknown> }).spec ?? {}) as { clusterIPs?: string[]; clusterIP?: string; ports?: Array<{ nodePort?: number }> };
          held = { ips: spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []), ports: (spec.ports ?? []).map((p) => p.nodePort).filter((p): p is number => typeof p === 'number') };
          serviceAddresses.set(entry, held);
        }
        for (const ip of held.ips) clusterIPs.add(ip);
        for (const port of held.ports) nodePorts.add(port);
      }
      return { clusterIPs, nodePorts };
    }),
    rbacEscalationPlugin({ index: rbac.index, authorize: (a) => unionAuthorize(authorizers.current(), a) }),
  ];
  // As upstream's plugins: this replica's cache first (no quorum round trip per create), and a
  // consistent read only for a namespace the cache does not hold yet. A failed read (no
  // leader) is that failure, never "namespace not found".
  const namespaceEntry = async (name: string): Promise<CacheEntry | undefined> => {
    const key = objectKey(namespaces, '', name);
    let entry: CacheEntry | undefined;
    try {
      entry = (await storage.get(key, { kind: 'any' })) ?? (await storage.get(key, { kind: 'consistent' }));
    } catch (e) {
      throw translateStoreError(e);
    }
    return entry && !entry.corrupt ? entry : undefined;
  };
  const namespaceState = (entry: CacheEntry | undefined): NamespaceState => {
    if (!entry) return { exists: false, terminating: false };
    // Every namespaced create asks: read each namespace version once, not per request.
    let terminating = namespaceTerminating.get(entry);
    if (terminating === undefined) {
      const obj = JSON.parse(entry.bytes.toString('utf8')) as { metadata?: { deletionTimestamp?: string }; status?: { phase?: string } };
      terminating = Boolean(obj.metadata?.deletionTimestamp) || obj.status?.phase === 'Terminating';
      namespaceTerminating.set(entry, terminating);
    }
    return { exists: true, terminating };
  };
  const webhookConfigurations = (resource: string): readonly CacheEntry[] => {
    const r = catalog.resource(naming.group('admissionregistration.k8s.io'), 'v1', resource);
    return r ? cache.resource(resourcePrefix(r)).list().entries : [];
  };
  // Custom resources' conversion webhooks: called by the registries, and by admission for an
  // Equivalent match of another version of a webhook-converted resource.
  const conversionWebhooks = new WebhookConverter(serviceResolver, naming);
  const convertForAdmission = admissionConverter(conversionWebhooks);
  // Served resources sharing stored objects, for webhooks matching Equivalent resources.
  let equivalentResources: Map<string, ResourceInfo[]> | undefined;
  catalog.onChange(() => {
    equivalentResources = undefined;
  });
  const webhooks = new WebhookDispatcher({
    naming,
    configurations: (mutating) => webhookConfigurations(mutating ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'),
    equivalents: (r) => {
      if (!equivalentResources) {
        equivalentResources = new Map();
        for (const x of catalog.all()) {
          const list = equivalentResources.get(x.storageResource) ?? [];
          list.push(x);
          equivalentResources.set(x.storageResource, list);
        }
      }
      return equivalentResources.get(r.storageResource) ?? [];
    },
    namespaceLabels: async (name) => {
      const entry = await namespaceEntry(name);
      return entry ? { ...entry.labels } : undefined;
    },
    resolver: serviceResolver,
    authorize: (a) => unionAuthorize(authorizers.current(), a),
    applyDefaults: (r, obj) => rules.applyDefaults(r, obj),
    convert: convertForAdmission,
    log,
  });
  // A namespace's objects of one core resource as the cache holds them (LimitRanges and
  // ResourceQuotas, asked on every namespaced write): each stored version parsed once.
  const parsedEntries = new WeakMap<CacheEntry, Record<string, unknown>>();
  // Quotas looked up live when the cache has none in a namespace (resource-quota's listLive):
  // an empty answer is remembered per namespace for 30 s, as upstream's plugin remembers its live
  // lookups, so a namespace without quotas costs one consistent read per replica and 30 s.
  const noQuotasUntil = new BoundedMap<string, number>(4096);
  const liveQuotas = async (ns: string): Promise<Array<Record<string, unknown>>> => {
    if ((noQuotasUntil.get(ns) ?? 0) > Date.now()) return [];
    let listed: StorageList;
    try {
      listed = await storage.list(namespacePrefix(resourceQuotas, ns), { mode: { kind: 'consistent' }, limit: 0 });
    } catch (e) {
      throw translateStoreError(e);
    }
    const quotas = listed.entries.filter((e) => !e.corrupt).map((e) => JSON.parse(e.bytes.toString('utf8')) as Record<string, unknown>);
    if (quotas.length === 0) noQuotasUntil.set(ns, Date.now() + 30_000);
    return quotas;
  };
  const cachedInNamespace = (resource: 'limitranges' | 'resourcequotas', ns: string): Array<Record<string, unknown>> => {
    const r = catalog.resource('', 'v1', resource)!;
    return cache.resource(resourcePrefix(r)).list({ keyPrefix: namespacePrefix(r, ns) }).entries.filter((e) => !e.corrupt).map((e) => {
      let obj = parsedEntries.get(e);
      if (!obj) parsedEntries.set(e, (obj = JSON.parse(e.bytes.toString('utf8')) as Record<string, unknown>));
      return obj;
    });
  };
  const resourceQuotas = catalog.resource('', 'v1', 'resourcequotas')!;
  const quotaWriter = { user: { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, manager: 'kube-apiserver' };
  // Its metrics are served once the registry exists (below).
  const validatingPolicies = validatingAdmissionPolicy({ cache, catalog, naming, authorize: (a) => unionAuthorize(authorizers.current(), a), convert: convertForAdmission });
  const mutatingPolicies = config.featureGates.enabled('MutatingAdmissionPolicy')
    ? mutatingAdmissionPolicy({ cache, catalog, naming, authorize: (a) => unionAuthorize(authorizers.current(), a), applyDefaults: (r, obj) => rules.applyDefaults(r, obj), convert: convertForAdmission })
    : undefined;
  const admission = new AdmissionChain(
    buildPlugins(
      enabledPluginNames(config.enableAdmissionPlugins, config.disableAdmissionPlugins),
      {
        log,
        naming,
        namespaceLookup: async (name) => namespaceState(await namespaceEntry(name)),
        immortalNamespaces: SYSTEM_NAMESPACES.filter((n) => n !== 'kube-node-lease'),
        // NodeRestriction reads pods and nodes as the cache has them, and consistently when
        // the cache does not hold them yet.
        nodeRestriction: { naming, getPod: (ns, name) => readObject('pods', ns, name), getNode: (name) => readObject('nodes', '', name) },
        priorityClasses: () => priorityClassesIn(cache, catalog, naming),
        defaultTolerationSeconds: { notReady: config.defaultNotReadyTolerationSeconds, unreachable: config.defaultUnreachableTolerationSeconds },
        webhooks,
        validatingPolicies,
        serviceAccounts: { getServiceAccount: readServiceAccount, rootCaConfigMap: rootCaConfigMapName(naming) },
        limitRanges: (ns) => cachedInNamespace('limitranges', ns),
        quotas: {
          list: (ns) => cachedInNamespace('resourcequotas', ns),
          ...(catchUp ? { listLive: liveQuotas } : {}),
          get: async (ns, name) => {
            const entry = await storage.get(objectKey(resourceQuotas, ns, name), { kind: 'consistent' }).catch((e: unknown) => {
              throw translateStoreError(e);
            });
            return entry && !entry.corrupt ? (JSON.parse(entry.bytes.toString('utf8')) as Record<string, unknown>) : undefined;
          },
          // The quota's resourceVersion is the precondition: a replicated compare-and-swap.
          updateStatus: async (ns, quota): Promise<Record<string, unknown> | undefined> => {
            const name = String((quota.metadata as { name?: string }).name);
            try {
              return (await registries.for(resourceQuotas)!.update(resourceQuotas, { ...quotaWriter, namespace: ns, dryRun: false, warnings: [] }, name, quota, 'status')).object;
            } catch (e) {
              if (isConflict(e)) return undefined;
              throw e;
            }
          },
        },
        podSecurity: {
          config: podSecurityConfig,
          namespaceLabels: async (name) => (await namespaceEntry(name))?.labels,
          podsIn: (namespace) => podsIn(cache, catalog, namespace),
        },
        storageClasses: () => storageClassesIn(cache, catalog, naming),
        authorize: (a) => unionAuthorize(authorizers.current(), a),
        ...(mutatingPolicies ? { mutatingPolicies } : {}),
      },
      config.enableAdmissionPlugins,
      storageSteps,
    ),
  );
  const rules = options.rules ?? builtinRules(naming);
  const registries = new RegistrySet(catalog, {
    store,
    storage,
    fields: new ManagedFieldsTracker(() => rules, naming),
    admission,
    rules,
    now: () => new Date(),
    unsafeDeletionEnabled: config.featureGates.enabled('AllowUnsafeMalformedObjectDeletion'),
    // NamespaceLifecycle's refusal holds against the namespace as committed, not as this
    // replica's cache last showed it (a deletion acknowledged through another replica).
    ...(enabledPluginNames(config.enableAdmissionPlugins, config.disableAdmissionPlugins).includes('NamespaceLifecycle')
      ? {
          namespaceGuard: {
            check: async (ns: string, r: ResourceInfo, name: string) => {
              let entry: CacheEntry | undefined;
              try {
                entry = await storage.get(objectKey(namespaces, '', ns), { kind: 'consistent' });
              } catch (e) {
                throw translateStoreError(e);
              }
              refuseCreateIn(namespaceState(entry && !entry.corrupt ? entry : undefined), ns, r, name);
            },
          },
        }
      : {}),
    strategyGates: { nodeDeclaredFeatures: config.featureGates.enabled('NodeDeclaredFeatures') },
    conversionWebhooks,
    garbageCollection: controllerEnabled('garbage-collector-controller', config.controllers),
  });

  health.add(['livez', 'readyz', 'healthz'], {
    name: 'store',
    check: () => {
      store.assertWritable();
    },
  });
  health.add(['readyz'], {
    name: 'watch-cache',
    check: () => {
      if (!cache.ready) throw new Error('watch cache not synced');
    },
  });
  // In a cluster these wait for a leader, which must not make /livez fail.
  const bootstrapDone = health.addStartupHook('bootstrap-namespaces', { livez: !cluster });
  const rbacBootstrapDone = health.addStartupHook('rbac/bootstrap-roles', { livez: !cluster });
  const controllerStarted = health.addStartupHook('start-namespace-controller', { livez: !cluster });
  cluster?.addHealthChecks(health);
  if (etcdStore) {
    // Upstream's etcd readyz check: etcd answers, and this server's watch of it is delivering.
    health.add(['readyz', 'healthz'], {
      name: 'etcd',
      check: async () => {
        if (!etcdStore.watching) throw new Error(`etcd watch is not established: ${etcdStore.watchError ?? 'connecting'}`);
        await etcdStore.consistentRevision();
      },
    });
  }

  // Events written through events.k8s.io by earlier versions sat under a prefix of their own;
  // both APIs now share the core event store. (A cluster's data never had that prefix.)
  if (!shared) await migrateSeparateEvents(store, log);
  await cache.start();
  // Nothing else uses a single server's store until it serves. (A replica's store is being
  // written by its Raft log meanwhile.) The start's garbage (every value's Buffer the load
  // handed over) is not collected here: cmd/clusterd runs one low-memory collection once the
  // server is ready and idle, which frees it as well, after readiness instead of before.
  if (store instanceof LevelRevisionStore && !cluster) await store.releaseReadMappings();

  const protobuf = new ProtobufSerializer(naming);
  const cborEnabled = config.featureGates.enabled('CBORServingAndStorage');
  // `/registry/<group>/<resource>/` → `<resource>.<group>` as upstream labels it.
  const resourceOfPrefix = (prefix: string): string => {
    if (!prefix.startsWith(REGISTRY_ROOT)) return prefix;
    const [group, resource] = prefix.slice(REGISTRY_ROOT.length, -1).split('/');
    return group === 'core' || resource === undefined ? resource ?? group! : `${resource}.${naming.group(group!)}`;
  };
  const metrics = new ServerMetrics({
    version: metricsVersion,
    showHiddenMetricsForVersion: config.showHiddenMetricsForVersion,
    storedObjects: () => cache.stats().map((st) => ({ resource: resourceOfPrefix(st.prefix), objects: st.objects })),
    resourceOfPrefix,
    warn: (message, fields) => log.warn(message, fields),
  });
  if (store instanceof LevelRevisionStore) store.observeRequests((operation, key, seconds) => metrics.storeRequest(operation, key, seconds));
  if (cluster) cluster.registerMetrics(metrics.registry);
  audit?.registerMetrics(metrics.registry);
  webhooks.registerMetrics(metrics.registry);
  registerWatchDeliveryMetrics(metrics.registry, ROUND_STAT_BOUNDS, roundStats);
  validatingPolicies.evaluator.registerMetrics(metrics.registry);
  mutatingPolicies?.evaluator.registerMetrics(metrics.registry);
  const pki = await pkiReady;
  const authn = buildAuthentication({ config, naming, saKeyFile: pki.saKey, saPubFile: pki.saPub, catalog, cache, storage, registries, log, registry: metrics.registry });
  // Built when a chain first names Node (it follows the watch cache from then on), then shared.
  let nodeAuthorizer: ReturnType<typeof createNodeAuthorizer> | undefined;
  // The authorizer chain: system:masters, the cluster's join endpoints, then the configured
  // authorizers (the file's, reloaded whole, or the flags'), each counted per decision.
  const decisionMetrics = new AuthorizationDecisionMetrics(metrics.registry);
  const factories: AuthorizerFactories = {
    rbac: () => rbac,
    node: () => (nodeAuthorizer ??= createNodeAuthorizer({ cache, naming, log })),
    webhook: (cfg, name) => createWebhookAuthorizer(cfg, { registry: metrics.registry, log, name, naming }),
    ...(abacPolicies ? { abac: () => createAbacAuthorizer(abacPolicies) } : {}),
  };
  const buildAuthorizers = (configured: readonly ConfiguredAuthorizer[]): Authorizer[] =>
    buildChain(configured, { factories, metrics: decisionMetrics, builtins: cluster ? [cluster.authorizer] : [], ...(catchUp ? { catchUp } : {}) });
  const authorizationController = config.authorizationConfig
    ? new AuthorizationConfigController({ files: configFiles, group: authorizationConfigGroup, build: buildAuthorizers, chain: authorizers, log, registry: metrics.registry, apiserverId: `clusterd-${config.name}` })
    : undefined;
  if (!authorizationController) authorizers.swap(buildAuthorizers(configuredFromFlags({ ...config.authorization, configFile: undefined, setFlags: config.setFlags })));
  const external = buildExternalAuthenticators(config, { naming, files: configFiles, log, registry: metrics.registry, serviceAccountIssuers: authn.issuers, apiAudiences: authn.apiAudiences });
  const aggregator = new Aggregator({ env: { registries, catalog, cache, naming, log }, resolver: serviceResolver, proxyClient: config.proxyClient });
  const deps: HttpDeps = {
    metrics,
    ...(audit ? { audit } : {}),
    naming,
    catalog,
    registries,
    features: config.featureGates,
    // Upstream's order: request header, x509, then one bearer-token union: the cluster's own
    // tokens, JWT issuers, webhook.
    authenticators: [...(external.requestHeader ? [external.requestHeader] : []), ...authn.authenticators([external.jwt, ...(external.webhook ? [external.webhook] : [])])],
    anonymousAuth: (path) => external.controller.anonymousAllowed(path, authn.anonymous),
    serviceAccountTokens: { signer: authn.signer, apiAudiences: authn.apiAudiences, maxExpirationSeconds: authn.maxExpirationSeconds, extendExpiration: authn.extendExpiration },
    authorizers,
    health,
    discovery: aggregator.discovery,
    openapi: aggregator.openapi(new OpenApiDocuments(catalog, builtinSchemas, naming, SERVER_VERSION.gitVersion)),
    aggregator,
    version: SERVER_VERSION,
    decoders: bodyReaders(protobuf, cborEnabled),
    serializers: { protobuf, cbor: cborEnabled ? cborSerializer() : undefined },
    log,
    minWatchTimeoutSeconds: 1800,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    inFlight: { reads: config.maxRequestsInflight, mutating: config.maxMutatingRequestsInflight },
    now: () => new Date(),
    ...(catchUp ? { catchUp } : {}),
    ...(cluster ? { extraRoutes: (method: string, path: string, query: URLSearchParams, body: () => Promise<string>) => cluster.handle(method, path, query, body) } : {}),
  };
  const app = buildHandlerChain(deps);

  const tlsCert = readFileSync(config.tlsCertFile ?? pki.serverCert);
  const tlsKey = readFileSync(config.tlsPrivateKeyFile ?? pki.serverKey);
  const clientCa = readFileSync(config.clientCaFile ?? pki.caCert);
  const requestListener = withHttp10Host(
    withEndStreamOnData(getRequestListener(app.fetch, {
      // The adapter calls this when it cannot build the request (a backslash in the path, an
      // invalid or missing Host header) or app.fetch fails outright. Returning nothing left the
      // request unanswered until the client gave up; it gets a Status like every other error.
      errorHandler: (err) => {
        if (err instanceof RequestError) {
          log.debug('malformed request', { error: err.message });
          return errorResponse(undefined, errors.badRequest(`malformed request: ${err.message}`));
        }
        log.error('response failed', { error: err instanceof Error ? err : String(err) });
        return errorResponse(undefined, errors.internal(err instanceof Error ? err.message : String(err)));
      },
    })),
    config.bindAddress,
  );
  const server: Http2SecureServer = createSecureServer(
    {
      cert: tlsCert,
      key: tlsKey,
      ca: clientCa,
      requestCert: true,
      rejectUnauthorized: false,
      ...servingCipherPreference,
      allowHTTP1: true,
      // node:http2 refuses a stream with more than 128 header fields (pseudo-headers included);
      // upstream's Go server bounds only the bytes. 2000 is node:http's HTTP/1.1 count, and the
      // 64 KiB header list limit bounds an HTTP/2 stream before that anyway.
      maxHeaderListPairs: 2000,
    },
    requestListener,
  );
  // HTTP/1.1 upgrade requests (SPDY, WebSocket) go through the same chain, with the socket kept
  // for the aggregator to join to an extension API server.
  acceptUpgrades(server, requestListener);
  // HTTP/1.1 requests may carry up to 1 MiB of headers, as upstream's Go server allows (its
  // default MaxHeaderBytes), so a long selector gets a 400 naming the problem instead of Node's
  // bare 431 at 16 KiB. node:http2 reads this property for its HTTP/1.1 fallback but takes no
  // option for it. (Over HTTP/2 a stream with more than 64 KiB of headers is still refused:
  // a larger settings.maxHeaderListSize did not change that in a standalone test.)
  (server as Http2SecureServer & { maxHeaderSize?: number }).maxHeaderSize = 1 << 20;
  const sockets = new Set<Socket>();
  const sessions = new Set<Http2Session>();
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('session', (s: Http2Session) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('tlsClientError', (err) => log.debug('TLS handshake failed', { error: err.message }));

  await metrics.prime();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.securePort, config.bindAddress, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.securePort;
  const host = config.bindAddress === '0.0.0.0' || config.bindAddress === '::' ? '127.0.0.1' : config.bindAddress;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = writeAdminKubeconfig(config.dataDir, pki, url);
  log.warn('serving', { url, port, dataDir: config.dataDir, storage: config.storage, naming: config.naming, revision: store.currentRevision() });

  // Leader-only work (controllers' writes, compaction scheduling) runs where leadership is and
  // moves with it; a single replica always leads.
  const isLeader = (): boolean => !elector || elector.isLeader();
  const namespaceController = new NamespaceController(registries, catalog, cache, log, namespaceFinalizer(naming));
  const crdController = new CrdController(registries, catalog, cache, naming, log, 500, isLeader);
  catchUp?.register(() => crdController.sync());
  // The leader-only controllers --controllers selects (the CRD controller is the API server's own).
  const caPem = readFileSync(pki.caCert, 'utf8');
  const controllerEnv = { registries, catalog, cache, naming, log };
  const enabled = (name: ControllerName) => controllerEnabled(name, config.controllers);
  const secretType = bootstrapSecretType(naming);
  const leaderControllers: Array<{ start(): void; stop(): void }> = [
    // The aggregator's local APIServices and availability checks are the API server's own.
    aggregator.leaderController,
    ...(enabled('namespace-controller') ? [namespaceController] : []),
    ...(enabled('serviceaccount-controller') || enabled('root-ca-certificate-publisher-controller')
      ? [namespaceObjectsController(controllerEnv, { defaultServiceAccount: enabled('serviceaccount-controller'), caPem: enabled('root-ca-certificate-publisher-controller') ? caPem : undefined })]
      : []),
    ...(enabled('serviceaccount-token-controller') ? [tokensController(controllerEnv, authn.signer, caPem)] : []),
    ...(enabled('token-cleaner-controller') ? [tokenCleaner(controllerEnv, secretType)] : []),
    ...(enabled('bootstrap-signer-controller') ? [bootstrapSigner(controllerEnv, secretType, () => clusterInfoKubeconfig(url, caPem))] : []),
    ...(enabled('clusterrole-aggregation-controller') ? [clusterRoleAggregationController(controllerEnv)] : []),
    ...(enabled('legacy-serviceaccount-token-cleaner-controller') ? [legacyTokenCleaner(controllerEnv, { cleanUpPeriodMs: config.legacyServiceAccountTokenCleanUpPeriodMs })] : []),
    ...(enabled('garbage-collector-controller') ? [new GarbageCollector(registries, catalog, cache, log)] : []),
    ...(enabled('disruption-controller') ? [disruptionController(controllerEnv)] : []),
    ...(enabled('resourcequota-controller') ? [resourceQuotaController(controllerEnv)] : []),
    ...(enabled('node-lifecycle-controller') ? [nodeTaintController(controllerEnv)] : []),
    ...(enabled('persistentvolumeclaim-protection-controller') ? [pvcProtectionController(controllerEnv)] : []),
    ...(enabled('persistentvolume-protection-controller') ? [pvProtectionController(controllerEnv)] : []),
    ...(enabled('certificatesigningrequest-signing-controller') ? [
          // The certificate library is loaded when the first request is signed, not at start.
          csrSigner(controllerEnv, async () => (await import('../pki/certificates.js')).loadCertificateAuthority(caPem, readFileSync(pki.caKey, 'utf8'))),
        ] : []),
    // The API server's own (not selectable): the kubernetes Endpoints from the replicas' leases.
    kubernetesEndpointsController(controllerEnv),
    // The API server's own too, as upstream's ClusterIP and NodePort repair loops: the Service
    // address claims follow the Services (backfilled, leaks released, conflicts reported).
    serviceClaimsRepair(controllerEnv, store, options.claimsRepairIntervalMs),
    ...(enabled('validatingadmissionpolicy-status-controller') ? [validatingPolicyStatusController(controllerEnv, builtinSchemas)] : []),
  ];
  // Every replica holds a lease for its advertised address (upstream's lease endpoint reconciler).
  const endpointLease = new EndpointLease(controllerEnv, config.name, async () => {
    const ip = await advertisedIp(config.advertiseAddress ?? config.bindAddress);
    return ip ? { ip, port } : undefined;
  });
  let unsubscribeLeadership: (() => void) | undefined;
  // The start-up writes. A cluster runs them on its leader alone, again whenever leadership
  // moves (cluster/leader-bootstrap); the others' hooks complete when the leader recorded them.
  const bootstrapObjects = async (): Promise<void> => {
    await bootstrapWithRetry(() => bootstrapNamespaces(registries, catalog, log), 'creating system namespaces', log, shared);
    bootstrapDone();
    // Roles and bindings in kube-system/kube-public need those namespaces first.
    await bootstrapWithRetry(() => bootstrapRbacPolicy(registries, catalog, naming, log), 'reconciling the bootstrap RBAC policy', log, shared);
    rbacBootstrapDone();
    await bootstrapWithRetry(() => ensureKubernetesService(controllerEnv, port), 'creating the kubernetes service', log, shared);
    await bootstrapWithRetry(() => bootstrapPriorityClasses(controllerEnv), 'creating the system priority classes', log, shared);
    await bootstrapWithRetry(async () => void (await reconcileFlowControl(controllerEnv, log)), 'reconciling the default flow control objects', log, shared);
    // The day secret-based tokens began to be marked when used (the legacy token cleaner's clock).
    await bootstrapWithRetry(() => ensureTokenTracking(controllerEnv, new Date()), 'recording legacy token tracking', log, shared);
  };
  const leaderBootstrap = cluster
    ? new LeaderBootstrap({ store, elector: cluster.replicator, name: config.name, digest: bootstrapDigest(naming), reconcile: () => bootstrapObjects(), log })
    : undefined;
  const startControllers = async (): Promise<void> => {
    if (leaderBootstrap) await leaderBootstrap.start();
    else await bootstrapObjects();
    bootstrapDone();
    rbacBootstrapDone();
    endpointLease.start();
    await crdController.start();
    // After the definitions are served: their groups' APIServices are kept, not removed. In a
    // cluster the leader registers them, on every leadership it gains (below).
    const registerLocal = (): Promise<void> => bootstrapWithRetry(() => (!cluster || isLeader() ? aggregator.registerLocal() : Promise.resolve()), 'registering local APIServices', log, shared);
    if (!cluster) await registerLocal();
    aggregator.start();
    if (!elector) for (const c of leaderControllers) c.start();
    else {
      let running = false;
      etcdLeadership?.start();
      unsubscribeLeadership = elector.onLeadership((leader) => {
        if (leader && !running) {
          log.warn('this replica leads: starting leader-only controllers', { name: config.name });
          for (const c of leaderControllers) c.start();
          crdController.resync();
          if (cluster) void registerLocal().then(() => log.info('local APIServices registered by the leader'));
          running = true;
        } else if (!leader && running) {
          log.warn('this replica no longer leads: stopping leader-only controllers', { name: config.name });
          for (const c of leaderControllers) c.stop();
          running = false;
        }
      });
    }
    controllerStarted();
  };
  if (cluster) {
    // What the member list publishes: followers ask the leader there, joins are forwarded there.
    const advertised = config.advertiseAddress;
    cluster.startBackground(advertised ? `https://${advertised.includes(':') ? `[${advertised}]` : advertised}:${port}` : url);
    // The API is served (and /livez is healthy) while the replica waits for its quorum.
    void cluster
      .waitForLeader()
      .then(startControllers)
      .catch((e: unknown) => log.error('starting controllers failed', { error: e instanceof Error ? e : String(e) }));
  } else {
    await startControllers();
  }

  let compactTimer: NodeJS.Timeout | undefined;
  const compactionIntervalMs = config.storage === 'etcd' ? config.etcd.compactionIntervalMs : config.compactionIntervalMs;
  if (compactionIntervalMs > 0) {
    // Compact to the revision seen one interval ago: history stays readable for at least one
    // interval. Compaction is a replicated command; only the leader schedules it.
    let previous = store.currentRevision();
    compactTimer = setInterval(() => {
      const target = previous;
      previous = store.currentRevision();
      if (isLeader() && target > store.compactedRevision()) {
        store.compact(target).catch((e: unknown) => log.error('compaction failed', { error: e instanceof Error ? e : String(e) }));
      }
    }, compactionIntervalMs);
    compactTimer.unref();
  }

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      log.warn('shutting down', { delayMs: config.shutdownDelayMs });
      health.beginShutdown();
      // As upstream's pre-shutdown hook: this replica's address leaves the kubernetes endpoints
      // while it drains, not after its lease's TTL.
      await endpointLease.release().catch(() => {});
      // A leader hands over first (etcd does on a graceful stop): the others keep a leader, and
      // this replica's own writes during the drain are forwarded to it.
      await cluster?.handOffLeadership();
      if (config.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
      clearInterval(compactTimer);
      unsubscribeLeadership?.();
      leaderBootstrap?.stop();
      configFiles.stop();
      authorizationController?.stop();
      // Controllers first: a leader's would otherwise write into a store that is closing.
      for (const c of leaderControllers) c.stop();
      crdController.stop();
      await cluster?.close();
      await etcdLeadership?.close();
      aggregator.stop();
      rbac.stop();
      const closed = new Promise<void>((r) => server.close(() => r()));
      // Long-running watches end now; in-flight requests get a moment to finish.
      nodeAuthorizer?.stop();
      cache.stop();
      metrics.close();
      for (const s of sessions) s.close();
      const deadline = setTimeout(() => {
        for (const s of sockets) s.destroy();
        for (const s of sessions) s.destroy();
      }, 5000);
      await closed;
      clearTimeout(deadline);
      // Watches ended above, so their last events are queued: written out before exit.
      await audit?.close();
      await store.close();
      await dataDirLock.release();
      log.warn('stopped');
    })();
    return stopping;
  };

  return { port, url, kubeconfigPath, store, cache, health, cluster, catalog, registries, shutdown };
}

/**
 * Runs a start-up write (system namespaces, bootstrap RBAC policy). A cluster replica may start
 * before its quorum can write or while another replica writes the same objects: it retries
 * until the work is done.
 */
async function bootstrapWithRetry(run: () => Promise<void>, what: string, log: Logger, retry: boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await run();
      return;
    } catch (e) {
      if (!retry) throw e;
      if (attempt % 10 === 1) log.warn(`${what} failed; retrying`, { error: e instanceof Error ? e.message : String(e) });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * HTTP/1.0 does not require a Host header (load balancer health checks often send none), and
 * Go's server answers such requests; the node adapter refuses to build a URL without one, so
 * the server's own address stands in for it.
 */
function withHttp10Host(
  listener: (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => unknown,
  bindAddress: string,
): (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => unknown {
  const host = bindAddress === '0.0.0.0' || bindAddress === '::' ? 'localhost' : bindAddress.includes(':') ? `[${bindAddress}]` : bindAddress;
  return (req, res) => {
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0 && req.headers.host === undefined) req.headers.host = host;
    return listener(req, res);
  };
}

/**
 * Stream events one local write batch may set off: its commands are acknowledged together and
 * their events reach every watcher in the delivery round after it, so an event's delay after
 * its acknowledgement grows with the batch times the watchers. Measured (2026-12-01, quick
 * `--only watch`: 1,000 watchers of one namespace, a closed-loop writer, one run each), delivery
 * p99 from the acknowledgement against the most commands per batch: 512 (the loaded server took
 * 64): 521 ms; 32: 333; 16: 209; 8: 124-131; 4: 83; 2: 55. The writer's rate: 186, 214, 203,
 * 172-175, 144 and 110 writes/s, as fewer events per stream write cost more each. At 8 per
 * 1,000 watchers the writer kept about its rate; a server without watchers keeps whole batches
 * (smaller ones cost its creates 2-4 % more CPU). Since a wide fan-out holds acknowledgements
 * back until its round has been sent (delivery-rounds: afterDueRound), the bound is what keeps
 * that wait short: p99 from the acknowledgement 7-10 ms at 8 per 1,000 watchers, 10-13 at 16,
 * 19-30 at 32, 53-71 at 512, with the same CPU per delivered event.
 */
const STREAM_EVENTS_PER_BATCH = 8_000;

/** A single server's replicator, its batches bounded by the watchers open (STREAM_EVENTS_PER_BATCH). */
function localReplicator(cache: WatchCache): LocalReplicator {
  const replicator = new LocalReplicator();
  replicator.limitBatches(() => STREAM_EVENTS_PER_BATCH / Math.max(1, cache.watcherCount()));
  return replicator;
}
