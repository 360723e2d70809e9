// internal/admission/quota-usage owns what an object counts against a ResourceQuota, shared by
// the ResourceQuota admission plugin (what a write adds) and the resource-quota controller (what
// a namespace holds): object counts (`pods`, `services`, `configmaps`, `secrets`,
// `persistentvolumeclaims`, `replicationcontrollers`, `resourcequotas`, and `count/<resource>[.<group>]`
// for any resource), pod compute (`requests.*` / bare names and `limits.*`: the containers' sum
// or the largest init container, plus overhead; terminal pods count nothing), services'
// `services.nodeports` / `services.loadbalancers`, claims' `requests.storage` and the per-class
// `<class>.storageclass.storage.k8s.io/...`, and which objects a quota's scopes
// (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass) select.
// Quantities are exact (validation/quantity). Imports: validation/quantity, schema (types).

import type { ResourceInfo } from '../schema/catalog.js';
import { formatQuantity, parseQuantity, type Quantity } from '../validation/quantity.js';
import type { JsonObject } from './admission.js';

export type Usage = Map<string, Quantity>;

/** Core resources upstream counts under their plain names as well as `count/<resource>`. */
const PLAIN_COUNTS = new Set(['pods', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas']);
const ONE: Quantity = { nanos: 1_000_000_000n, format: 'DecimalSI' };
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
/** Resources a pod's compute usage is counted in besides its count. */
const POD_COMPUTE = /^(requests\.|limits\.)|^(cpu|memory|ephemeral-storage)$|^hugepages-/;

const add = (u: Usage, name: string, q: Quantity) => {
  const prev = u.get(name);
  u.set(name, prev ? { nanos: prev.nanos + q.nanos, format: prev.format } : q);
};

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise (the served group). */
export const countName = (r: Pick<ResourceInfo, 'group' | 'resource'>): string => (r.group === '' ? `count/${r.resource}` : `count/${r.resource}.${r.group}`);

/** The resource a quota resource name is counted from: the plain core names, or `count/…`; compute and storage names belong to pods and claims. */
export function sourceOf(name: string): { group: string; resource: string } | undefined {
  if (PLAIN_COUNTS.has(name)) return { group: '', resource: name };
  if (name.startsWith('count/')) {
    const rest = name.slice('count/'.length);
    const dot = rest.indexOf('.');
    return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
  }
  if (name.startsWith('services.')) return { group: '', resource: 'services' };
  if (name === 'requests.storage' || name.includes(STORAGE_CLASS_SUFFIX)) return { group: '', resource: 'persistentvolumeclaims' };
  if (POD_COMPUTE.test(name)) return { group: '', resource: 'pods' };
  return undefined;
}

type Container = { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } };
type PodSpec = { containers?: Container[]; initContainers?: Container[]; overhead?: Record<string, string>; activeDeadlineSeconds?: number; priorityClassName?: string };

function listOf(list: Record<string, string> | undefined): Usage {
  const u: Usage = new Map();
  for (const [k, v] of Object.entries(list ?? {})) {
    const q = parseQuantity(v);
    if (q) add(u, k, q);
  }
  return u;
}

/** Upstream's pod requests or limits: the containers' sum, at least each init container's, plus overhead. */
function podCompute(spec: PodSpec, which: 'requests' | 'limits'): Usage {
  const total: Usage = new Map();
  for (const c of spec.containers ?? []) for (const [k, q] of listOf(c.resources?.[which])) add(total, k, q);
  for (const c of spec.initContainers ?? []) {
    for (const [k, q] of listOf(c.resources?.[which])) {
      const have = total.get(k);
      if (!have || q.nanos > have.nanos) total.set(k, q);
    }
  }
  if (spec.overhead) for (const [k, q] of listOf(spec.overhead)) add(total, k, q);
  return total;
}

/** A pod that has finished counts nothing (upstream's QuotaV1Pod). */
export const podTerminal = (pod: JsonObject): boolean => {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
};

/** Everything `obj` of resource `r` counts. */
export function usageOf(r: Pick<ResourceInfo, 'group' | 'resource'>, obj: JsonObject): Usage {
  const u: Usage = new Map();
  const isCore = r.group === '';
  if (isCore && r.resource === 'pods' && podTerminal(obj)) return u;
  add(u, countName(r), ONE);
  if (isCore && PLAIN_COUNTS.has(r.resource)) add(u, r.resource, ONE);
  if (!isCore) return u;
  const spec = (obj.spec ?? {}) as JsonObject;
  if (r.resource === 'pods') {
    for (const [k, q] of podCompute(spec as PodSpec, 'requests')) {
      add(u, `requests.${k}`, q);
      // The bare names are requests, as upstream counts them.
      if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage' || k.startsWith('hugepages-')) add(u, k, q);
    }
    for (const [k, q] of podCompute(spec as PodSpec, 'limits')) add(u, `limits.${k}`, q);
  } else if (r.resource === 'services') {
    const ports = (spec.ports ?? []) as Array<{ nodePort?: number }>;
    if (spec.type === 'NodePort') add(u, 'services.nodeports', { nanos: BigInt(ports.length) * ONE.nanos, format: 'DecimalSI' });
    if (spec.type === 'LoadBalancer') {
      add(u, 'services.loadbalancers', ONE);
      const allocated = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof p.nodePort === 'number' && p.nodePort > 0).length : ports.length;
      add(u, 'services.nodeports', { nanos: BigInt(allocated) * ONE.nanos, format: 'DecimalSI' });
    }
  } else if (r.resource === 'persistentvolumeclaims') {
    const storage = parseQuantity(String(((spec.resources as JsonObject | undefined)?.requests as Record<string, string> | undefined)?.storage ?? ''));
    const cls = typeof spec.storageClassName === 'string' ? spec.storageClassName : '';
    if (storage) add(u, 'requests.storage', storage);
    if (cls) {
      add(u, `${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, ONE);
      if (storage) add(u, `${cls}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
  }
  return u;
}

export interface ScopeSelectorRequirement {
  scopeName?: string;
  operator?: string;
  values?: string[];
}

/** The quota's scopes, from `scopes` and `scopeSelector.matchExpressions`. */
export function quotaScopes(quota: JsonObject): ScopeSelectorRequirement[] {
  const spec = (quota.spec ?? {}) as { scopes?: string[]; scopeSelector?: { matchExpressions?: ScopeSelectorRequirement[] } };
  return [...(spec.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' })), ...(spec.scopeSelector?.matchExpressions ?? [])];
}

const bestEffort = (spec: PodSpec): boolean =>
  [...(spec.containers ?? []), ...(spec.initContainers ?? [])].every((c) => Object.keys(c.resources?.requests ?? {}).length === 0 && Object.keys(c.resources?.limits ?? {}).length === 0);

/** Whether a scoped quota selects this object: scopes select pods only; an unscoped quota selects everything. */
export function scopesMatch(scopes: readonly ScopeSelectorRequirement[], r: Pick<ResourceInfo, 'group' | 'resource'>, obj: JsonObject): boolean {
  if (scopes.length === 0) return true;
  if (r.group !== '' || r.resource !== 'pods') return false;
  const spec = (obj.spec ?? {}) as PodSpec;
  return scopes.every((s) => {
    switch (s.scopeName) {
      case 'Terminating':
        return typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
      case 'NotTerminating':
        return !(typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0);
      case 'BestEffort':
        return bestEffort(spec);
      case 'NotBestEffort':
        return !bestEffort(spec);
      case 'PriorityClass': {
        const name = spec.priorityClassName ?? '';
        const values = s.values ?? [];
        if (s.operator === 'In') return values.includes(name);
        if (s.operator === 'NotIn') return !values.includes(name);
        if (s.operator === 'DoesNotExist') return name === '';
        return name !== '';
      }
      default:
        return false;
    }
  });
}

/** Only the names in `names`. */
export function mask(u: Usage, names: Iterable<string>): Usage {
  const out: Usage = new Map();
  for (const n of names) {
    const q = u.get(n);
    if (q) out.set(n, q);
  }
  return out;
}

export const quantitiesOf = (list: Record<string, string> | undefined): Usage => listOf(list);

/** A ResourceList in canonical spelling. */
export function resourceList(u: Usage): Record<string, string> {
  return Object.fromEntries([...u.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, q]) => [k, formatQuantity(q)]));
}

/** Upstream's prettyPrint of a ResourceList: sorted `name=value` joined by commas. */
export const prettyPrint = (list: Record<string, string>): string =>
  Object.keys(list)
    .sort()
    .map((k) => `${k}=${list[k]}`)
    .join(',');
