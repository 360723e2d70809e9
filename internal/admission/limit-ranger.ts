// internal/admission/limit-ranger owns upstream's `LimitRanger` admission plugin (1.32): the
// LimitRange objects of a namespace give a created pod's containers (and init containers) their
// default requests and limits (recorded in the `<domain>/limit-ranger` annotation), and refuse
// (403) a pod or PersistentVolumeClaim outside their min, max and maxLimitRequestRatio for the
// Container, Pod and PersistentVolumeClaim types, with upstream's words (several failures are
// listed in brackets, as upstream aggregates them). Pod updates are not checked (containers'
// resources are immutable there, as upstream reasons); PVC updates are (storage may grow).
// A LimitRange item's own defaulting (default from max, defaultRequest from default or min) is
// applied when reading it. Imports: admission, apierrors, naming, validation/quantity.

import { errors } from '../apierrors/status.js';
import type { Naming } from '../naming/naming.js';
import { formatQuantity, parseQuantity, roundUpQuantity, type Quantity } from '../validation/quantity.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export const LIMIT_RANGER_PLUGIN = 'LimitRanger';

type ResourceList = Record<string, string>;
export interface LimitRangeItem {
  type?: string;
  max?: ResourceList;
  min?: ResourceList;
  default?: ResourceList;
  defaultRequest?: ResourceList;
  maxLimitRequestRatio?: ResourceList;
}
type Resources = { requests?: ResourceList; limits?: ResourceList };
type Container = { name?: string; resources?: Resources };

/** The LimitRange objects of a namespace, as this replica's cache holds them. */
export type LimitRangeLookup = (namespace: string) => JsonObject[];

/** upstream's SetDefaults_LimitRangeItem for Container items: default ← max, defaultRequest ← default, then min. */
export function defaultedItem(item: LimitRangeItem): LimitRangeItem {
  if (item.type !== 'Container') return item;
  const def: ResourceList = { ...(item.max ?? {}), ...(item.default ?? {}) };
  const defaultRequest: ResourceList = { ...(item.min ?? {}), ...def, ...(item.defaultRequest ?? {}) };
  return { ...item, default: def, defaultRequest };
}

const items = (lr: JsonObject): LimitRangeItem[] => (((lr.spec as JsonObject | undefined)?.limits ?? []) as LimitRangeItem[]).map(defaultedItem);

/** Sums resource lists (pod requests and limits are their containers' sums). */
function sum(lists: ResourceList[]): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const list of lists) {
    for (const [k, v] of Object.entries(list)) {
      const q = parseQuantity(v);
      if (!q) continue;
      const prev = out.get(k);
      out.set(k, prev ? { nanos: prev.nanos + q.nanos, format: prev.format } : q);
    }
  }
  return out;
}

/** Upstream's pod-level value: the containers' sum, or the largest init container's when larger. */
function podTotal(containers: Container[], initContainers: Container[], which: 'requests' | 'limits'): Map<string, Quantity> {
  const total = sum(containers.map((c) => c.resources?.[which] ?? {}));
  for (const c of initContainers) {
    for (const [k, q] of sum([c.resources?.[which] ?? {}])) {
      const have = total.get(k);
      if (!have || q.nanos > have.nanos) total.set(k, q);
    }
  }
  return total;
}

const toMap = (list: ResourceList | undefined): Map<string, Quantity> => sum([list ?? {}]);
// Upstream compares milli-values, rounding up.
const milli = (q: Quantity): bigint => roundUpQuantity(q, -3).nanos;
const str = (q: Quantity): string => formatQuantity(q);

function minConstraint(type: string, name: string, enforced: Quantity, requests: Map<string, Quantity>, limits: Map<string, Quantity>): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!req) return `minimum ${name} usage per ${type} is ${str(enforced)}.  No request is specified`;
  if (milli(req) < milli(enforced)) return `minimum ${name} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
  if (lim && milli(lim) < milli(enforced)) return `minimum ${name} usage per ${type} is ${str(enforced)}, but limit is ${str(lim)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, requests: Map<string, Quantity>, limits: Map<string, Quantity>): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!lim) return `maximum ${name} usage per ${type} is ${str(enforced)}.  No limit is specified`;
  if (milli(lim) > milli(enforced)) return `maximum ${name} usage per ${type} is ${str(enforced)}, but limit is ${str(lim)}`;
  if (req && milli(req) > milli(enforced)) return `maximum ${name} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
  return undefined;
}

/** For PersistentVolumeClaims only the request is the user's: max is checked against it. */
function maxRequestConstraint(type: string, name: string, enforced: Quantity, requests: Map<string, Quantity>): string | undefined {
  const req = requests.get(name);
  if (!req) return `maximum ${name} usage per ${type} is ${str(enforced)}.  No request is specified`;
  if (milli(req) > milli(enforced)) return `maximum ${name} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, requests: Map<string, Quantity>, limits: Map<string, Quantity>): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!req || milli(req) === 0n) return `${name} max limit to request ratio per ${type} is ${str(enforced)}, but no request is specified or request is 0`;
  if (!lim || milli(lim) === 0n) return `${name} max limit to request ratio per ${type} is ${str(enforced)}, but no limit is specified or limit is 0`;
  const observed = Number(milli(lim)) / Number(milli(req));
  // ratio > enforced, exactly (all three in nano-units): lim/req > enforced ⇔ lim·10⁹ > enforced·req.
  if (milli(lim) * 1_000_000_000n > milli(enforced) * milli(req)) {
    return `${name} max limit to request ratio per ${type} is ${str(enforced)}, but provided ratio is ${observed.toFixed(6)}`;
  }
  return undefined;
}

/** Min, max and ratio of one item against observed requests and limits. */
function checkItem(item: LimitRangeItem, type: string, requests: Map<string, Quantity>, limits: Map<string, Quantity>): string[] {
  const out: string[] = [];
  for (const [k, q] of toMap(item.min)) {
    const e = minConstraint(type, k, q, requests, limits);
    if (e) out.push(e);
  }
  for (const [k, q] of toMap(item.max)) {
    const e = maxConstraint(type, k, q, requests, limits);
    if (e) out.push(e);
  }
  for (const [k, q] of toMap(item.maxLimitRequestRatio)) {
    const e = ratioConstraint(type, k, q, requests, limits);
    if (e) out.push(e);
  }
  return out;
}

/** Adds the item's defaults a container lacks; returns what was set, in upstream's annotation wording. */
function mergeDefaults(c: Container, item: LimitRangeItem, prefix: string): string[] {
  const resources = (c.resources ??= {});
  const setLimits: string[] = [];
  const setRequests: string[] = [];
  for (const [k, v] of Object.entries(item.default ?? {})) {
    if ((resources.limits ??= {})[k] === undefined) {
      resources.limits[k] = v;
      setLimits.push(k);
    }
  }
  for (const [k, v] of Object.entries(item.defaultRequest ?? {})) {
    if ((resources.requests ??= {})[k] === undefined) {
      resources.requests[k] = v;
      setRequests.push(k);
    }
  }
  if (resources.limits && Object.keys(resources.limits).length === 0) delete resources.limits;
  if (resources.requests && Object.keys(resources.requests).length === 0) delete resources.requests;
  const notes: string[] = [];
  if (setRequests.length) notes.push(`${setRequests.sort().join(', ')} request for ${prefix} ${c.name ?? ''}`);
  if (setLimits.length) notes.push(`${setLimits.sort().join(', ')} limit for ${prefix} ${c.name ?? ''}`);
  return notes;
}

/** Upstream's utilerrors aggregate: one message as it is, several in brackets. */
const aggregate = (msgs: string[]): string => (msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`);

export function limitRanger(naming: Naming, lookup: LimitRangeLookup): AdmissionPlugin {
  const annotation = naming.label('limit-ranger');
  const kindOf = (req: AdmissionRequest): 'pod' | 'pvc' | undefined => {
    if (req.resource.group !== '' || req.subresource !== '' || !req.object) return undefined;
    if (req.resource.resource === 'pods') return req.operation === 'CREATE' ? 'pod' : undefined;
    return req.resource.resource === 'persistentvolumeclaims' ? 'pvc' : undefined;
  };
  const forbid = (req: AdmissionRequest, msgs: string[]) => errors.forbidden({ group: '', name: req.resource.resource }, req.name || undefined, aggregate(msgs));
  return {
    name: LIMIT_RANGER_PLUGIN,
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit(req) {
      if (kindOf(req) !== 'pod') return;
      const containerItems = lookup(req.namespace).flatMap(items).filter((i) => i.type === 'Container');
      if (containerItems.length === 0) return;
      const obj = req.object!;
      const spec = (obj.spec ??= {}) as { containers?: Container[]; initContainers?: Container[] };
      const notes: string[] = [];
      for (const item of containerItems) {
        for (const c of spec.containers ?? []) notes.push(...mergeDefaults(c, item, 'container'));
        for (const c of spec.initContainers ?? []) notes.push(...mergeDefaults(c, item, 'init container'));
      }
      if (notes.length === 0) return;
      const meta = (obj.metadata ??= {}) as JsonObject;
      meta.annotations = { ...((meta.annotations as Record<string, string> | undefined) ?? {}), [annotation]: `LimitRanger plugin set: ${notes.join('; ')}` };
    },
    validate(req) {
      const kind = kindOf(req);
      if (!kind) return;
      const all = lookup(req.namespace).flatMap(items);
      const msgs: string[] = [];
      if (kind === 'pvc') {
        const requests = toMap((((req.object!.spec as JsonObject | undefined)?.resources ?? {}) as Resources).requests);
        for (const item of all.filter((i) => i.type === 'PersistentVolumeClaim')) {
          for (const [k, q] of toMap(item.min)) {
            const e = minConstraint('PersistentVolumeClaim', k, q, requests, new Map());
            if (e) msgs.push(e);
          }
          for (const [k, q] of toMap(item.max)) {
            const e = maxRequestConstraint('PersistentVolumeClaim', k, q, requests);
            if (e) msgs.push(e);
          }
        }
      } else {
        const spec = (req.object!.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
        const containers = spec.containers ?? [];
        const inits = spec.initContainers ?? [];
        for (const item of all) {
          if (item.type === 'Container') {
            for (const c of [...containers, ...inits]) msgs.push(...checkItem(item, 'Container', toMap(c.resources?.requests), toMap(c.resources?.limits)));
          } else if (item.type === 'Pod') {
            msgs.push(...checkItem(item, 'Pod', podTotal(containers, inits, 'requests'), podTotal(containers, inits, 'limits')));
          }
        }
      }
      if (msgs.length > 0) throw forbid(req, msgs);
    },
  };
}
