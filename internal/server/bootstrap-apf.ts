// internal/server/bootstrap-apf owns the API objects upstream's post-start hooks put into every
// cluster besides namespaces and RBAC: the two system PriorityClasses (created when missing,
// never changed, as upstream's scheduling hook) and the default API Priority and Fairness
// configuration (upstream 1.32's mandatory and suggested FlowSchemas and
// PriorityLevelConfigurations) reconciled as upstream's APF bootstrap reconciler does:
//   - missing objects are created, with `apf.<label domain>/autoupdate-spec: "true"`;
//   - mandatory objects are brought back to their spec always;
//   - suggested objects are brought back only when they say autoupdate-spec "true", or carry no
//     such annotation and were never changed (generation 1); "false" leaves them alone.
// The spec here is what upstream's defaults give; a stored object "matches" when every field
// wanted has that value (fields the server defaults beyond it do not count as a difference).
// Group names inside the rules and the annotation follow the naming.
// Also the PriorityClasses as the Priority admission plugin reads them from the watch cache.
// Imports: controllers/objects, admission/priority (types), registry keys, schema, watchcache, naming, log, async/bounded.

import { settleBounded, STARTUP_WRITES_IN_FLIGHT } from '../async/bounded.js';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import { metaOf, Objects, type Obj, type ResourceRef } from '../controllers/objects.js';
import type { ControllerEnv } from '../controllers/serviceaccount-controllers.js';
import type { PriorityClassInfo } from '../admission/priority.js';
import { parsedEntries } from './admission-reads.js';
import type { ApiCatalog } from '../schema/catalog.js';
import type { WatchCache } from '../watchcache/watch-cache.js';

const PRIORITY_CLASSES: ResourceRef = ['scheduling.k8s.io', 'v1', 'priorityclasses'];
const FLOW_SCHEMAS: ResourceRef = ['flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas'];
const PRIORITY_LEVELS: ResourceRef = ['flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations'];

export const SYSTEM_PRIORITY_CLASSES = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
] as const;

export const autoUpdateAnnotation = (naming: Naming): string => `apf.${naming.labelDomain}/autoupdate-spec`;

export async function bootstrapPriorityClasses(env: ControllerEnv): Promise<void> {
  const objects = new Objects(env, 'kube-apiserver', 'system:apiserver');
  const apiVersion = `${env.naming.group('scheduling.k8s.io')}/v1`;
  await settleBounded(SYSTEM_PRIORITY_CLASSES, STARTUP_WRITES_IN_FLIGHT, async (pc) => {
    if (objects.get(PRIORITY_CLASSES, '', pc.name)) return;
    if (await objects.create(PRIORITY_CLASSES, '', { apiVersion, kind: 'PriorityClass', metadata: { name: pc.name }, value: pc.value, description: pc.description })) {
      env.log.info('created priority class', { name: pc.name });
    }
  });
}

// --- upstream 1.32's default APF configuration -------------------------------------------------

type Subject = Obj;
const group = (name: string): Subject => ({ kind: 'Group', group: { name } });
const user = (name: string): Subject => ({ kind: 'User', user: { name } });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace, name } });
const AUTHENTICATED = [group('system:authenticated'), group('system:unauthenticated')];

const limited = (shares: number, lendable: number, queuing?: { queues: number; handSize: number; queueLengthLimit: number }): Obj => ({
  type: 'Limited',
  limited: {
    nominalConcurrencyShares: shares,
    lendablePercent: lendable,
    limitResponse: queuing ? { type: 'Queue', queuing } : { type: 'Reject' },
  },
});

interface Bootstrap {
  name: string;
  mandatory: boolean;
  spec: Obj;
}

export function defaultPriorityLevels(): Bootstrap[] {
  const q = (queues: number, handSize: number) => ({ queues, handSize, queueLengthLimit: 50 });
  return [
    { name: 'exempt', mandatory: true, spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } } },
    { name: 'catch-all', mandatory: true, spec: limited(5, 0) },
    { name: 'system', mandatory: false, spec: limited(30, 33, q(64, 6)) },
    { name: 'node-high', mandatory: false, spec: limited(40, 25, q(64, 6)) },
    { name: 'leader-election', mandatory: false, spec: limited(10, 0, q(16, 4)) },
    { name: 'workload-high', mandatory: false, spec: limited(40, 50, q(128, 6)) },
    { name: 'workload-low', mandatory: false, spec: limited(100, 90, q(128, 6)) },
    { name: 'global-default', mandatory: false, spec: limited(20, 50, q(128, 6)) },
  ];
}

export function defaultFlowSchemas(naming: Naming): Bootstrap[] {
  const all = (verbs = ['*']) => ({
    resourceRules: [{ verbs, apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
    nonResourceRules: [{ verbs, nonResourceURLs: ['*'] }],
  });
  const leases = { verbs: ['get', 'create', 'update'], apiGroups: [naming.group('coordination.k8s.io')], resources: ['leases'], namespaces: ['*'] };
  const fs = (name: string, mandatory: boolean, level: string, precedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, rules: Obj[]): Bootstrap => ({
    name,
    mandatory,
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence: precedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules,
    },
  });
  return [
    fs('exempt', true, 'exempt', 1, undefined, [{ subjects: [group('system:masters')], ...all() }]),
    fs('probes', false, 'exempt', 2, undefined, [{ subjects: AUTHENTICATED, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] }]),
    fs('system-leader-election', false, 'leader-election', 100, 'ByUser', [
      { subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler'), serviceAccount('kube-system', '*')], resourceRules: [leases] },
    ]),
    fs('endpoint-controller', false, 'workload-high', 150, 'ByUser', [
      {
        subjects: [user('system:kube-controller-manager'), serviceAccount('kube-system', 'endpoint-controller')],
        resourceRules: [{ verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] }],
      },
    ]),
    fs('workload-leader-election', false, 'leader-election', 200, 'ByUser', [{ subjects: [serviceAccount('*', '*')], resourceRules: [leases] }]),
    fs('system-node-high', false, 'node-high', 400, 'ByUser', [
      {
        subjects: [group('system:nodes')],
        resourceRules: [
          { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true },
          { verbs: ['*'], apiGroups: [naming.group('coordination.k8s.io')], resources: ['leases'], namespaces: ['*'] },
        ],
      },
    ]),
    fs('system-nodes', false, 'system', 500, 'ByUser', [{ subjects: [group('system:nodes')], ...all() }]),
    fs('kube-controller-manager', false, 'workload-high', 800, 'ByNamespace', [{ subjects: [user('system:kube-controller-manager')], ...all() }]),
    fs('kube-scheduler', false, 'workload-high', 800, 'ByNamespace', [{ subjects: [user('system:kube-scheduler')], ...all() }]),
    fs('kube-system-service-accounts', false, 'workload-high', 900, 'ByNamespace', [{ subjects: [serviceAccount('kube-system', '*')], ...all() }]),
    fs('service-accounts', false, 'workload-low', 9000, 'ByUser', [{ subjects: [serviceAccount('*', '*')], ...all() }]),
    fs('global-default', false, 'global-default', 9900, 'ByUser', [{ subjects: AUTHENTICATED, ...all() }]),
    fs('catch-all', true, 'catch-all', 10000, 'ByUser', [{ subjects: AUTHENTICATED, ...all() }]),
  ];
}

/** Whether every field of `want` has the same value in `have` (extra, defaulted fields in `have` do not count). */
export function covers(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => covers(have[i], w));
  if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object' || Array.isArray(have)) return false;
    return Object.entries(want as Obj).every(([k, v]) => covers((have as Obj)[k], v));
  }
  return have === want;
}

/** Upstream's rule for an existing object: whether its spec is brought back to the default. */
export function shouldAutoUpdate(obj: Obj, mandatory: boolean, annotation: string): boolean {
  if (mandatory) return true;
  const value = metaOf(obj).annotations?.[annotation];
  if (value === 'true') return true;
  if (value !== undefined) return false;
  return (metaOf(obj).generation ?? 1) === 1;
}

/**
 * As upstream since 1.29: the `exempt` level's nominalConcurrencyShares and lendablePercent
 * are the administrator's to set; the rest of the mandatory spec is put back.
 */
export function keptByAdministrator(kind: string, name: string, current: unknown, wanted: Obj): Obj {
  if (kind !== 'PriorityLevelConfiguration' || name !== 'exempt') return wanted;
  const exempt = ((current as Obj | undefined)?.exempt ?? {}) as Obj;
  const kept = Object.fromEntries(['nominalConcurrencyShares', 'lendablePercent'].filter((k) => typeof exempt[k] === 'number').map((k) => [k, exempt[k]]));
  return { ...wanted, exempt: { ...(wanted.exempt as Obj), ...kept } };
}

export async function reconcileFlowControl(env: ControllerEnv, log: Logger): Promise<{ created: number; updated: number }> {
  const objects = new Objects(env, 'api-priority-and-fairness-config-producer-v1', 'system:apiserver');
  const annotation = autoUpdateAnnotation(env.naming);
  const apiVersion = `${env.naming.group('flowcontrol.apiserver.k8s.io')}/v1`;
  let created = 0;
  let updated = 0;
  // The objects of one kind are independent: written a few at a time. The levels go first, as
  // the flow schemas name them.
  const reconcile = (ref: ResourceRef, kind: string, wanted: Bootstrap[]) =>
    settleBounded(wanted, STARTUP_WRITES_IN_FLIGHT, async (b) => {
      const current = objects.get(ref, '', b.name);
      if (!current) {
        if (await objects.create(ref, '', { apiVersion, kind, metadata: { name: b.name, annotations: { [annotation]: 'true' } }, spec: b.spec })) created++;
        return;
      }
      if (!shouldAutoUpdate(current, b.mandatory, annotation)) return;
      const m = metaOf(current);
      const spec = keptByAdministrator(kind, b.name, current.spec, b.spec);
      if (covers(current.spec, spec) && m.annotations?.[annotation] === 'true') return;
      await objects.update(ref, '', { ...current, metadata: { ...m, annotations: { ...(m.annotations ?? {}), [annotation]: 'true' } }, spec });
      updated++;
    });
  await reconcile(PRIORITY_LEVELS, 'PriorityLevelConfiguration', defaultPriorityLevels());
  await reconcile(FLOW_SCHEMAS, 'FlowSchema', defaultFlowSchemas(env.naming));
  if (created || updated) log.info('API priority and fairness defaults reconciled', { created, updated });
  return { created, updated };
}

const classCache = new WeakMap<object, PriorityClassInfo>();

/** The stored PriorityClasses as the Priority admission plugin needs them (each version parsed once). */
export function priorityClassesIn(cache: WatchCache, catalog: ApiCatalog, naming: Naming): PriorityClassInfo[] {
  return parsedEntries(cache, catalog.resource(naming.group('scheduling.k8s.io'), 'v1', 'priorityclasses'), classCache, (json, e) => {
    const o = json as { metadata?: { name?: string }; value?: number; globalDefault?: boolean; preemptionPolicy?: string };
    return { name: o.metadata?.name ?? e.name, value: o.value ?? 0, globalDefault: o.globalDefault === true, preemptionPolicy: o.preemptionPolicy };
  });
}
