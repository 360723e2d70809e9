// internal/http/handlers/eviction owns POST pods/<name>/eviction (a policy/v1 or v1beta1
// Eviction): deleting a pod only as its PodDisruptionBudget allows, as upstream's eviction REST:
//   - a pod that is Pending, Succeeded, Failed or already terminating is deleted without a
//     budget; so is a pod no budget selects;
//   - more than one budget selecting the pod is a 500, as upstream does not support it;
//   - a budget its controller has not caught up with (observedGeneration behind), or with no
//     disruptions allowed, refuses with 429 "Cannot evict pod as it would violate the pod's
//     disruption budget." and a DisruptionBudget cause; a pod that is not ready is deleted
//     without using the budget when the budget's unhealthyPodEvictionPolicy is AlwaysAllow, or
//     (IfHealthyBudget, the default) when the budget is already satisfied;
//   - else disruptionsAllowed goes down by one and the pod is recorded in disruptedPods (the
//     status write is conditional: a conflict is read again), then the pod is deleted with the
//     Eviction's DeleteOptions. A dry run checks everything and writes nothing.
// The answer is 201 with a Success Status. Imports: apierrors, http, registry, selectors.

import type { Context } from 'hono';
import { errors, StatusError } from '../../apierrors/status.js';
import { readDeleteOptions } from '../../registry/delete-options.js';
import { labelSelectorFromMeta } from '../../selectors/label-selector.js';
import { decodeObjectBody } from '../body.js';
import { requestBody, type Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { successStatus } from '../respond.js';
import { chooseRepresentation, META_SCHEMA, writeObject } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';

type Obj = Record<string, unknown>;

export const EVICTION_BLOCKED_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
/** Upstream's cap on disruptedPods entries not yet confirmed by the disruption controller. */
const MAX_DISRUPTED_PODS = 2000;

const meta = (o: Obj | undefined) => (o?.metadata ?? {}) as { name?: string; namespace?: string; uid?: string; resourceVersion?: string; deletionTimestamp?: string; labels?: Record<string, string>; generation?: number };

function tooManyRequests(cause: string): StatusError {
  const e = errors.tooManyRequests(EVICTION_BLOCKED_MESSAGE, 0);
  // Upstream's retryAfterSeconds is 0 here, which its JSON leaves out and which sets no Retry-After.
  e.status.details = { causes: [{ reason: 'DisruptionBudget', message: cause }] };
  return e;
}

export function podReady(pod: Obj): boolean {
  const conditions = ((pod.status as Obj | undefined)?.conditions ?? []) as Array<{ type?: string; status?: string }>;
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Upstream's checks on a budget before it lets a pod go; returns the budget with its status updated. */
export function takeDisruption(pdb: Obj, podName: string, now: Date): Obj {
  const m = meta(pdb);
  const status = (pdb.status ?? {}) as { observedGeneration?: number; disruptionsAllowed?: number; currentHealthy?: number; desiredHealthy?: number; disruptedPods?: Record<string, string>; conditions?: Obj[] };
  if ((status.observedGeneration ?? 0) < (m.generation ?? 0)) throw tooManyRequests(`The disruption budget ${m.name} is still being processed by the server.`);
  const allowed = status.disruptionsAllowed ?? 0;
  if (allowed < 0) throw errors.forbidden({ group: 'policy', name: 'poddisruptionbudgets' }, m.name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
    throw errors.forbidden({ group: 'policy', name: 'poddisruptionbudgets' }, m.name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (allowed === 0) throw tooManyRequests(`The disruption budget ${m.name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`);
  const next = { ...status, disruptionsAllowed: allowed - 1, disruptedPods: { ...(status.disruptedPods ?? {}), [podName]: now.toISOString().replace(/\.\d{3}Z$/, 'Z') } };
  if (next.disruptionsAllowed === 0) {
    const conditions = (status.conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed');
    const old = (status.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
    const changed = old?.status !== 'False';
    conditions.push({
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'InsufficientPods',
      message: '',
      observedGeneration: status.observedGeneration ?? 0,
      lastTransitionTime: changed || !old?.lastTransitionTime ? now.toISOString().replace(/\.\d{3}Z$/, 'Z') : old.lastTransitionTime,
    });
    next.conditions = conditions;
  }
  return { ...pdb, status: next };
}

export async function handleEviction(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const bytes = await requestBody(c);
  const { value } = decodeObjectBody(bytes, c.req.header('content-type'), deps.decoders, 'io.k8s.api.policy.v1.Eviction');
  const eviction = value;
  const policy = deps.naming.group('policy');
  if (eviction.kind !== undefined && eviction.kind !== 'Eviction') {
    throw errors.badRequest(`the object provided is ${String(eviction.kind)} in ${String(eviction.apiVersion)}, but this endpoint expects Eviction in ${policy}/v1`);
  }
  if (eviction.apiVersion !== undefined && eviction.apiVersion !== `${policy}/v1` && eviction.apiVersion !== `${policy}/v1beta1`) {
    throw errors.badRequest(`the object provided is Eviction in ${String(eviction.apiVersion)}, but this endpoint expects Eviction in ${policy}/v1 or ${policy}/v1beta1`);
  }
  const podName = rr.info.name;
  const em = meta(eviction);
  if (em.name !== undefined && em.name !== '' && em.name !== podName) throw errors.badRequest('name in URL does not match name in Eviction object');
  if (em.namespace !== undefined && em.namespace !== '' && em.namespace !== rr.namespace) throw errors.badRequest('namespace in URL does not match namespace in Eviction object');
  const options = readDeleteOptions((eviction.deleteOptions ?? undefined) as Obj | undefined, new URLSearchParams([...rr.query.entries()].filter(([k]) => k === 'dryRun')));
  const ctx = { ...rr.ctx, namespace: rr.namespace, dryRun: rr.ctx.dryRun || options.dryRun };
  await rr.registry.admitSubresourceCreate(rr.resource, 'eviction', ctx, podName, { ...eviction, metadata: { ...em, name: podName, namespace: rr.namespace } });

  const pod = await rr.registry.get(rr.resource, rr.namespace, podName, { kind: 'consistent' });
  const done = () => writeObject(c, deps, rep, rr.resource, successStatus({}), 201, `${META_SCHEMA}Status`);
  const deletePod = async (extraPreconditions?: { resourceVersion?: string }) => {
    await rr.registry.delete(rr.resource, ctx, podName, { ...options, dryRun: ctx.dryRun, ...(extraPreconditions ? { preconditions: { ...(options.preconditions ?? {}), ...extraPreconditions } } : {}) });
    return done();
  };
  const phase = ((pod.status as Obj | undefined)?.phase as string | undefined) ?? '';
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || meta(pod).deletionTimestamp) return deletePod();

  const pdbs = deps.catalog.resource(policy, 'v1', 'poddisruptionbudgets')!;
  const pdbRegistry = deps.registries.for(pdbs)!;
  const listed = await pdbRegistry.list({ mode: { kind: 'consistent' }, namespace: rr.namespace, filter: undefined, hasSelector: false, limit: 0 });
  const labels = meta(pod).labels ?? {};
  const matching = listed.entries
    .filter((e) => !e.corrupt)
    .map((e) => JSON.parse(e.bytes.toString('utf8')) as Obj)
    .filter((pdb) => {
      const sel = labelSelectorFromMeta((pdb.spec as Obj | undefined)?.selector, 'spec.selector');
      return sel.ok && !sel.selector.isEmpty() ? sel.selector.matches(labels) : false;
    });
  if (matching.length === 0) return deletePod();
  if (matching.length > 1) throw errors.internal('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  const pdb = matching[0]!;
  const spec = (pdb.spec ?? {}) as { unhealthyPodEvictionPolicy?: string };
  const status = (pdb.status ?? {}) as { currentHealthy?: number; desiredHealthy?: number };
  if (!podReady(pod)) {
    // An unready pod does not count towards the budget: it may go when the policy says so.
    const policyName = spec.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
    if (policyName === 'AlwaysAllow' || ((status.currentHealthy ?? 0) >= (status.desiredHealthy ?? 0) && (status.desiredHealthy ?? 0) > 0)) {
      return deletePod({ resourceVersion: meta(pod).resourceVersion });
    }
  }
  if (ctx.dryRun) {
    takeDisruption(pdb, podName, deps.now());
    return deletePod();
  }
  const pdbName = meta(pdb).name!;
  await pdbRegistry.patch(pdbs, ctx, pdbName, 'status', { build: (current) => takeDisruption(current, podName, deps.now()) });
  return deletePod();
}
