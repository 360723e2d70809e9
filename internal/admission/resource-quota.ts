// internal/admission/resource-quota owns upstream's `ResourceQuota` admission plugin (1.32): a
// create (and an update that grows usage, as a claim's storage) is charged against every
// ResourceQuota of its namespace whose computed status.hard names what it uses and whose scopes
// select it, by a compare-and-swap of the quota's status (its resourceVersion is the
// precondition; a conflict reads the quota again and decides again), so concurrent writes
// through any replica never take a quota past its hard limits: every replica's CAS goes
// through the replicated store. Refusals are upstream's 403s (`exceeded quota: …`, `failed
// quota: …: must specify …`). A write charged but not stored (dry runs are only checked, never
// charged; later failures and lost races) gives its charge back through `release`; the
// resource-quota controller recomputes usage from the objects, which reclaims deletes and
// anything else left behind. Imports: admission, apierrors, quota-usage.

import { errors } from '../apierrors/status.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';
import { mask, prettyPrint, quantitiesOf, quotaScopes, resourceList, scopesMatch, sourceOf, usageOf, type Usage } from './quota-usage.js';

export const RESOURCE_QUOTA_PLUGIN = 'ResourceQuota';
/** CAS attempts per quota before the write is refused as a conflict (upstream retries similarly). */
const MAX_ATTEMPTS = 50;
/** Charges of writes whose outcome is not known yet are forgotten after this long (a stored write is never released). */
const CHARGE_TTL_MS = 120_000;

export interface QuotaStore {
  /** The namespace's ResourceQuotas as this replica's cache holds them. */
  list(namespace: string): JsonObject[];
  /**
   * On a replica that shares its objects with others: the namespace's quotas read consistently,
   * asked when the cache holds none (a quota just created through another replica may not
   * have reached it), as upstream's plugin looks quotas up live when its lister has none.
   */
  listLive?(namespace: string): Promise<JsonObject[]>;
  /** One quota read consistently (after a lost CAS); undefined when it is gone. */
  get(namespace: string, name: string): Promise<JsonObject | undefined>;
  /** Writes status with metadata.resourceVersion as precondition: the stored quota, or undefined when someone wrote first. */
  updateStatus(namespace: string, quota: JsonObject): Promise<JsonObject | undefined>;
}

/** upstream's validationSet: quota on these makes every container state them. */
const REQUIRED_BY_CONTAINER = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

type Container = { name?: string; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } };

/** upstream's podEvaluator.Constraints: "must specify <res> for: <containers>; …". */
function missingContainerResources(pod: JsonObject, required: Set<string>): string | undefined {
  const needed = REQUIRED_BY_CONTAINER.filter((r) => required.has(r));
  if (needed.length === 0) return undefined;
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  const missing = new Map<string, Set<string>>();
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const has = new Set<string>();
    for (const k of Object.keys(c.resources?.requests ?? {})) has.add(k).add(`requests.${k}`);
    for (const k of Object.keys(c.resources?.limits ?? {})) has.add(`limits.${k}`);
    for (const r of needed) {
      if (!has.has(r)) missing.set(r, (missing.get(r) ?? new Set()).add(c.name ?? ''));
    }
  }
  if (missing.size === 0) return undefined;
  return `must specify ${[...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ')}`;
}

const metaOf = (o: JsonObject) => (o.metadata ?? {}) as { name?: string; uid?: string; resourceVersion?: string };
const statusOf = (q: JsonObject) => (q.status ?? {}) as { hard?: Record<string, string>; used?: Record<string, string> };

/** What a write adds: all of a create's usage, only the growth of an update's. */
function requestedUsage(req: AdmissionRequest): Usage {
  const now = usageOf(req.resource, req.object!);
  if (req.operation === 'CREATE' || !req.oldObject) return now;
  const before = usageOf(req.resource, req.oldObject);
  const grown: Usage = new Map();
  for (const [k, q] of now) {
    const d = q.nanos - (before.get(k)?.nanos ?? 0n);
    if (d > 0n) grown.set(k, { nanos: d, format: q.format });
  }
  return grown;
}

interface Charge {
  quota: string;
  usage: Usage;
}

export function resourceQuotaPlugin(store: QuotaStore, now: () => number = Date.now): AdmissionPlugin {
  // Charges of writes not yet known to be stored, by object identity, for `release`.
  const pending = new Map<string, { at: number; charges: Charge[] }>();
  const keyOf = (req: AdmissionRequest, obj: JsonObject) => `${req.operation}/${req.resource.group}/${req.resource.resource}/${req.namespace}/${req.name}/${metaOf(obj).uid ?? ''}`;
  const forbid = (req: AdmissionRequest, message: string) => errors.forbidden({ group: req.resource.group, name: req.resource.resource }, req.name || undefined, message);

  // The newest version of each quota this replica has written or read, and a queue per quota:
  // this replica's charges of one quota go one at a time from the version it wrote last, so
  // they do not lose CAS races to each other (only to other replicas' charges).
  const latest = new Map<string, JsonObject>();
  const queues = new Map<string, Promise<unknown>>();
  const newer = (a: JsonObject, b: JsonObject | undefined): JsonObject => {
    if (!b) return a;
    const rv = (o: JsonObject) => BigInt(/^\d+$/.test(metaOf(o).resourceVersion ?? '') ? metaOf(o).resourceVersion! : '0');
    return rv(b) > rv(a) && metaOf(b).uid === metaOf(a).uid ? b : a;
  };
  function queued<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (queues.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    queues.set(key, tail);
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return run;
  }

  /** Adds `delta` (negative to give back) to one quota's status.used by CAS; returns an error message when the limit refuses it. */
  function apply(req: AdmissionRequest, quota: JsonObject, requested: Usage, sign: 1n | -1n, checkOnly: boolean): Promise<string | undefined> {
    const key = `${req.namespace}/${metaOf(quota).name ?? ''}`;
    return queued(key, () => casUsed(req, newer(quota, latest.get(key)), requested, sign, checkOnly, (q) => (q ? latest.set(key, q) : latest.delete(key))));
  }

  async function casUsed(req: AdmissionRequest, quota: JsonObject, requested: Usage, sign: 1n | -1n, checkOnly: boolean, seen: (q: JsonObject | undefined) => void): Promise<string | undefined> {
    let q: JsonObject | undefined = quota;
    // A refusal is decided on a quota read consistently, never on a cache that may lag behind a reclaim.
    let fresh = false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS && q; attempt++) {
      const status = statusOf(q);
      const hard = quantitiesOf(status.hard);
      const used = quantitiesOf(status.used);
      const next = new Map(used);
      const exceeded: string[] = [];
      for (const [k, d] of requested) {
        const have = used.get(k)?.nanos ?? 0n;
        let sum = have + sign * d.nanos;
        if (sum < 0n) sum = 0n;
        // As upstream's Quantity.Add: a zero takes the added quantity's format (0 + 4Gi is 4Gi).
        next.set(k, { nanos: sum, format: have === 0n ? d.format : used.get(k)!.format });
        const limit = hard.get(k);
        if (sign > 0n && limit && sum > limit.nanos) exceeded.push(k);
      }
      if (exceeded.length > 0 && !fresh) {
        q = await store.get(req.namespace, metaOf(q).name ?? '');
        seen(q);
        fresh = true;
        continue;
      }
      if (exceeded.length > 0) {
        const usedList = resourceList(mask(used, exceeded));
        for (const k of exceeded) usedList[k] ??= '0';
        return `exceeded quota: ${metaOf(q).name ?? ''}, requested: ${prettyPrint(resourceList(mask(requested, exceeded)))}, used: ${prettyPrint(usedList)}, limited: ${prettyPrint(resourceList(mask(hard, exceeded)))}`;
      }
      if (checkOnly) return undefined;
      const written = { ...q, status: { ...status, used: { ...(status.used ?? {}), ...resourceList(mask(next, requested.keys())) } } };
      const stored = await store.updateStatus(req.namespace, written);
      if (stored) {
        seen(stored);
        return undefined;
      }
      q = await store.get(req.namespace, metaOf(q).name ?? '');
      seen(q);
      fresh = true;
    }
    if (!q) return undefined;
    throw errors.conflict({ group: '', name: 'resourcequotas' }, metaOf(quota).name ?? '', 'the quota was updated too often concurrently; please apply your changes again');
  }

  async function giveBack(req: AdmissionRequest, charges: Charge[]): Promise<void> {
    for (const c of charges) {
      const q = await store.get(req.namespace, c.quota).catch(() => undefined);
      if (q) await apply(req, q, c.usage, -1n, false).catch(() => undefined);
    }
  }

  return {
    name: RESOURCE_QUOTA_PLUGIN,
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async validate(req) {
      if (!req.resource.namespaced || req.subresource !== '' || !req.object || !req.namespace) return;
      // An earlier write of the same object (an update) was stored: only this one's charge may be released.
      pending.delete(keyOf(req, req.object));
      // Pods' compute is immutable after create (resize is its own sub-resource).
      if (req.operation === 'UPDATE' && req.resource.group === '' && req.resource.resource === 'pods') return;
      const requested = requestedUsage(req);
      if (requested.size === 0) return;
      let quotas = store.list(req.namespace);
      if (quotas.length === 0 && store.listLive) quotas = await store.listLive(req.namespace);
      if (quotas.length === 0) return;
      const selected: Array<{ quota: JsonObject; usage: Usage }> = [];
      for (const quota of quotas) {
        const hardNames = Object.keys(statusOf(quota).hard ?? {});
        // Upstream counts only what the quota's computed status.hard names (none before the controller has run).
        const matching = hardNames.filter((n) => {
          const s = sourceOf(n);
          return s !== undefined && s.group === req.resource.group && s.resource === req.resource.resource;
        });
        if (matching.length === 0 || !scopesMatch(quotaScopes(quota), req.resource, req.object)) continue;
        if (req.operation === 'CREATE' && req.resource.group === '' && req.resource.resource === 'pods') {
          const missing = missingContainerResources(req.object, new Set(matching));
          if (missing) throw forbid(req, `failed quota: ${metaOf(quota).name ?? ''}: ${missing}`);
        }
        const usage = mask(requested, matching);
        if (usage.size > 0) selected.push({ quota, usage });
      }
      if (selected.length === 0) return;
      const charged: Charge[] = [];
      for (const { quota, usage } of selected) {
        let refusal: string | undefined;
        try {
          refusal = await apply(req, quota, usage, 1n, req.dryRun);
        } catch (e) {
          await giveBack(req, charged);
          throw e;
        }
        if (refusal) {
          await giveBack(req, charged);
          throw forbid(req, refusal);
        }
        if (!req.dryRun) charged.push({ quota: metaOf(quota).name ?? '', usage });
      }
      if (charged.length === 0) return;
      const t = now();
      for (const [k, v] of pending) if (t - v.at > CHARGE_TTL_MS) pending.delete(k);
      pending.set(keyOf(req, req.object), { at: t, charges: charged });
    },
    release(req) {
      if (!req.object) return;
      const key = keyOf(req, req.object);
      const entry = pending.get(key);
      if (!entry) return;
      pending.delete(key);
      void giveBack(req, entry.charges);
    },
  };
}
