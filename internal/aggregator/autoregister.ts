// internal/aggregator/autoregister owns the local APIServices: one per built-in group/version
// this server serves (`v1.` for the core group, `v1.apps`, …, group names of the naming), with
// no service, the priorities upstream's kube-apiserver gives them, and the label
// `kube-aggregator.<labelDomain>/automanaged: onstart`; and one per served version of a custom
// resource group (priorities 1000/100, label value `true`), as upstream's CRD registration.
// As upstream's autoregistration, `onstart` ones are made to match on start (created, or their
// spec put back) and those of versions no longer served removed, `true` ones also whenever the
// served custom resources change; an APIService without the label is never touched.
// Imports: apierrors, controllers (env), schema (catalog), aggregator/apiservices.

import { isAlreadyExists, isNotFound } from '../apierrors/status.js';
import type { ControllerEnv } from '../controllers/serviceaccount-controllers.js';
import type { Naming } from '../naming/naming.js';
import type { ApiCatalog } from '../schema/catalog.js';
import { stabilityOf } from '../schema/versions.js';
import type { ApiServices } from './apiservices.js';
import { LOCAL_AVAILABILITY, withAvailability } from './availability.js';

export const AUTOREGISTER_MANAGER = 'kube-apiserver-autoregistration';

/** Upstream kube-apiserver's group priorities by upstream group name (the version's by stability otherwise). */
const GROUP_PRIORITY: Record<string, number> = {
  '': 18000,
  'apiregistration.k8s.io': 18000,
  apps: 17800,
  'events.k8s.io': 17750,
  'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600,
  autoscaling: 17500,
  batch: 17400,
  'certificates.k8s.io': 17300,
  'networking.k8s.io': 17200,
  policy: 17100,
  'rbac.authorization.k8s.io': 17000,
  'storage.k8s.io': 16800,
  'apiextensions.k8s.io': 16700,
  'admissionregistration.k8s.io': 16700,
  'scheduling.k8s.io': 16600,
  'coordination.k8s.io': 16500,
  'node.k8s.io': 16300,
  'discovery.k8s.io': 16200,
  'resource.k8s.io': 16200,
  'flowcontrol.apiserver.k8s.io': 16100,
  'storagemigration.k8s.io': 800,
  'internal.apiserver.k8s.io': 30,
};

/** Version priorities upstream gives explicitly (the rest: GA 15, beta 9, alpha 1). */
const VERSION_PRIORITY: Record<string, number> = {
  '/v1': 1,
  'apiregistration.k8s.io/v1': 21,
  'autoscaling/v2': 30,
  'flowcontrol.apiserver.k8s.io/v1': 21,
  'admissionregistration.k8s.io/v1beta1': 12,
};

export function builtinPriority(upstreamGroup: string, version: string): { groupPriorityMinimum: number; versionPriority: number } {
  const stability = stabilityOf(version);
  return {
    groupPriorityMinimum: GROUP_PRIORITY[upstreamGroup] ?? 15000,
    versionPriority: VERSION_PRIORITY[`${upstreamGroup}/${version}`] ?? (stability === 'ga' ? 15 : stability === 'beta' ? 9 : 1),
  };
}

export const automanagedLabel = (naming: Naming): string => `${naming.labelPrefix('kube-aggregator')}automanaged`;

/** The local APIServices the catalog's built-in group/versions call for, by name. */
export function localApiServices(catalog: ApiCatalog, naming: Naming): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const g of catalog.groups()) {
    for (const v of g.versions) {
      const resources = catalog.resources(g.name, v);
      if (resources.length === 0) continue;
      const builtin = resources.find((r) => !r.custom);
      const name = `${v}.${g.name}`;
      out.set(name, {
        apiVersion: `${naming.group('apiregistration.k8s.io')}/v1`,
        kind: 'APIService',
        metadata: { name, labels: { [automanagedLabel(naming)]: builtin ? 'onstart' : 'true' } },
        // Upstream's CRD registration: low group priority, one fixed version priority (versions
        // then sort in Kubernetes version order).
        spec: { group: g.name, version: v, ...(builtin ? builtinPriority(builtin.upstreamGroup, v) : { groupPriorityMinimum: 1000, versionPriority: 100 }), service: null },
      });
    }
  }
  return out;
}

const sameSpec = (a: unknown, b: Record<string, unknown>): boolean => {
  const x = (a ?? {}) as Record<string, unknown>;
  return x.group === b.group && x.version === b.version && x.groupPriorityMinimum === b.groupPriorityMinimum && x.versionPriority === b.versionPriority && (x.service ?? null) === null;
};

/**
 * Creates, corrects and removes the automanaged local APIServices: all of them on start
 * (`onStart`), otherwise only the continuously managed ones (`true`: custom resource groups).
 * Throws on a failed write (the caller retries).
 */
export async function autoregister(env: ControllerEnv, apis: ApiServices, onStart: boolean): Promise<void> {
  const registry = env.registries.for(apis.resource);
  if (!registry) return;
  const ctx = { user: { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, manager: AUTOREGISTER_MANAGER, namespace: '', dryRun: false, warnings: [] as string[] };
  const label = automanagedLabel(env.naming);
  const managedBy = (o: Record<string, unknown>): string | undefined => (((o.metadata as Record<string, unknown> | undefined)?.labels ?? {}) as Record<string, string>)[label];
  const inScope = (value: string | undefined) => value === 'true' || (onStart && value === 'onstart');
  const wanted = new Map([...localApiServices(env.catalog, env.naming)].filter(([, want]) => inScope(managedBy(want))));
  // Concurrently: the store commits concurrent writes together, so the start-up adds a few
  // syncs rather than one per group/version. A new local APIService gets its Available (Local)
  // condition at once, as the availability controller would set it.
  const now = new Date();
  const results = await Promise.allSettled(
    [...wanted].map(async ([name, want]) => {
      const have = apis.byName(name);
      const spec = want.spec as Record<string, unknown>;
      try {
        if (!have) {
          const created = await registry.create(apis.resource, ctx, want);
          const withStatus = withAvailability(created, LOCAL_AVAILABILITY, now);
          if (withStatus) await registry.update(apis.resource, ctx, name, withStatus, 'status');
        } else if (managedBy(have.raw) !== undefined && (!sameSpec(have.raw.spec, spec) || managedBy(have.raw) !== managedBy(want))) {
          const meta = (have.raw.metadata ?? {}) as Record<string, unknown>;
          await registry.update(apis.resource, ctx, name, { ...have.raw, metadata: { ...meta, labels: { ...((meta.labels ?? {}) as object), [label]: managedBy(want) } }, spec });
        }
      } catch (e) {
        // Another replica (a previous leader) got there first: what it wrote is the same.
        if (!isAlreadyExists(e)) throw e;
      }
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  for (const api of apis.all()) {
    if (!inScope(managedBy(api.raw)) || wanted.has(api.name)) continue;
    try {
      await registry.delete(apis.resource, ctx, api.name, { dryRun: false });
      env.log.info('aggregator: removed the APIService of a version no longer served', { apiService: api.name });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
