// internal/controllers/resource-quota-controller owns upstream's `resourcequota` controller
// (leader-only): every ResourceQuota's status.hard follows its spec.hard, and status.used is
// recomputed from the namespace's objects as the watch cache holds them (quota-usage counts
// them as the admission plugin does). It looks again when a quota's spec changes, when a
// counted object is deleted (or a pod finishes), and every resync period (upstream's
// --resource-quota-sync-period, 5 minutes), which is the reclaim of charges whose writes were
// never stored. Usage only grows at once: a lower figure is written only once the quota's
// status has stayed unchanged for a settle period, because the objects of writes admission
// has charged but not yet stored are not in the cache — lowering then would give their
// charge away and let the quota be exceeded. Imports: admission/quota-usage, registry keys,
// watchcache, reconciler, serviceaccount-controllers (CoreObjects).

import { mask, quotaScopes, resourceList, scopesMatch, sourceOf, usageOf, type Usage } from '../admission/quota-usage.js';
import { namespacePrefix, resourcePrefix } from '../registry/keys.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { parseQuantity } from '../validation/quantity.js';
import type { CacheEntry } from '../watchcache/types.js';
import { Reconciler } from './reconciler.js';
import { CoreObjects, type ControllerEnv } from './serviceaccount-controllers.js';

type Obj = Record<string, unknown>;
const metaOf = (o: Obj) => (o.metadata ?? {}) as { name?: string; namespace?: string; resourceVersion?: string };
const parse = (e: CacheEntry): Obj => JSON.parse(e.bytes.toString('utf8')) as Obj;

/** Core resources whose deletion gives usage back at once (others wait for the resync). */
const RECLAIMED = ['pods', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers'];

export interface ResourceQuotaControllerOptions {
  /** Full recomputation of every quota (ms); upstream's default is 5 minutes. */
  resyncMs?: number;
  /** How long a quota's status must stay unchanged before usage is lowered (ms). */
  settleMs?: number;
}

const sameList = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean => {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => (b ?? {})[k] === (a ?? {})[k]);
};

export function resourceQuotaController(env: ControllerEnv, opts: ResourceQuotaControllerOptions = {}): Reconciler {
  const objects = new CoreObjects(env, 'resourcequota-controller');
  const resyncMs = opts.resyncMs ?? 5 * 60_000;
  const settleMs = opts.settleMs ?? 1000;
  const quotas = objects.resource('resourcequotas');
  // The status resourceVersion each quota had when a lower usage was first computed.
  const lowering = new Map<string, string>();

  /** The stored resource a quota name counts (a served group's resource, any version). */
  const resourceFor = (group: string, resource: string): ResourceInfo | undefined => {
    for (const r of env.catalog.all()) if (r.group === group && r.resource === resource && r.namespaced) return r;
    return undefined;
  };

  function computeUsed(namespace: string, quota: Obj, hard: Record<string, string>): Usage {
    const scopes = quotaScopes(quota);
    const bySource = new Map<string, { r: ResourceInfo; names: string[] }>();
    for (const n of Object.keys(hard)) {
      const s = sourceOf(n);
      const r = s && resourceFor(s.group, s.resource);
      if (!r) continue;
      const entry = bySource.get(`${r.group}/${r.resource}`) ?? { r, names: [] };
      entry.names.push(n);
      bySource.set(`${r.group}/${r.resource}`, entry);
    }
    const used: Usage = new Map();
    for (const n of Object.keys(hard)) used.set(n, { nanos: 0n, format: 'DecimalSI' });
    for (const { r, names } of bySource.values()) {
      const entries = env.cache.resource(resourcePrefix(r)).list({ keyPrefix: namespacePrefix(r, namespace) }).entries;
      for (const e of entries) {
        if (e.corrupt) continue;
        const obj = parse(e);
        if (!scopesMatch(scopes, r, obj)) continue;
        for (const [k, q] of mask(usageOf(r, obj), names)) {
          const prev = used.get(k)!;
          used.set(k, { nanos: prev.nanos + q.nanos, format: q.format });
        }
      }
    }
    return used;
  }

  async function reconcileQuota(namespace: string, name: string): Promise<number | void> {
    const key = `${namespace}/${name}`;
    const quota = objects.get('resourcequotas', namespace, name);
    if (!quota) {
      lowering.delete(key);
      return;
    }
    const hard = ((quota.spec as Obj | undefined)?.hard ?? {}) as Record<string, string>;
    const status = (quota.status ?? {}) as { hard?: Record<string, string>; used?: Record<string, string> };
    const computed = resourceList(computeUsed(namespace, quota, hard));
    const current = status.used ?? {};
    const rv = metaOf(quota).resourceVersion ?? '';
    const lowers = Object.keys(computed).some((k) => current[k] !== undefined && computed[k] !== current[k] && lowerThan(computed[k]!, current[k]!));
    let used = computed;
    let again: number | undefined;
    if (lowers) {
      if (lowering.get(key) !== rv) {
        // Not settled: keep what is charged now, look again after the settle period.
        lowering.set(key, rv);
        used = Object.fromEntries(Object.entries(computed).map(([k, v]) => [k, current[k] !== undefined && lowerThan(v, current[k]!) ? current[k]! : v]));
        again = settleMs;
      } else lowering.delete(key);
    } else lowering.delete(key);
    if (!sameList(status.hard, hard) || !sameList(current, used)) {
      await objects.update('resourcequotas', namespace, { ...quota, status: { hard: { ...hard }, used } }, 'status');
    }
    return again ?? resyncMs;
  }

  const nsKey = (e: CacheEntry) => [`${e.namespace}/*`];
  const reconciler: Reconciler = new Reconciler(
    {
      name: 'resourcequota-controller',
      sources: [
        {
          prefix: resourcePrefix(quotas),
          keys: (t, e) => {
            if (t === 'DELETED') return [];
            if (t === 'ADDED') return [`${e.namespace}/${e.name}`];
            // Admission's charges change status.used only: not a reason to recount.
            const q = parse(e);
            const hard = ((q.spec as Obj | undefined)?.hard ?? {}) as Record<string, string>;
            return sameList((q.status as { hard?: Record<string, string> } | undefined)?.hard, hard) ? [] : [`${e.namespace}/${e.name}`];
          },
        },
        ...RECLAIMED.map((resource) => ({
          prefix: resourcePrefix(objects.resource(resource)),
          keys: (t: string, e: CacheEntry) => {
            if (t === 'DELETED') return nsKey(e);
            // Searched in the bytes: every pod update passes here, and decoding each to a
            // string for a regular expression cost more than the search.
            if (resource === 'pods' && t === 'MODIFIED' && (e.bytes.includes(SUCCEEDED) || e.bytes.includes(FAILED))) return nsKey(e);
            return [];
          },
        })),
      ],
      async reconcile(key) {
        const [namespace, name] = key.split('/') as [string, string];
        if (name !== '*') return reconcileQuota(namespace, name);
        // Each quota as its own key, so that its settle and resync delays are kept.
        for (const q of objects.list('resourcequotas', namespace)) reconciler.enqueue(`${namespace}/${metaOf(q).name ?? ''}`);
      },
    },
    env.cache,
    env.log,
  );
  return reconciler;
}

/** A terminated pod's phase as the stored JSON spells it (the serializer writes no spaces). */
const SUCCEEDED = Buffer.from('"phase":"Succeeded"');
const FAILED = Buffer.from('"phase":"Failed"');

function lowerThan(a: string, b: string): boolean {
  const qa = quantityNanos(a);
  const qb = quantityNanos(b);
  return qa !== undefined && qb !== undefined && qa < qb;
}

const quantityNanos = (s: string): bigint | undefined => parseQuantity(s)?.nanos;
