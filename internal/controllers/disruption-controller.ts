// internal/controllers/disruption-controller owns PodDisruptionBudget status (upstream's
// `disruption` controller, leader-only), reduced to what this server has: no workload
// controllers exist, so the expected count of every budget is the number of pods its selector
// matches, and `minAvailable` / `maxUnavailable` (integers, or percentages of that count
// rounded up, as upstream rounds) give desiredHealthy. currentHealthy counts the matching pods
// that are Ready and not terminating, less those an eviction recorded in disruptedPods and not
// yet gone (an entry is dropped when its pod is gone, terminating, or two minutes old, as
// upstream's DeletionTimeout). disruptionsAllowed = max(0, currentHealthy - desiredHealthy),
// with the DisruptionAllowed condition (SufficientPods / InsufficientPods) and
// observedGeneration. An empty or absent selector matches nothing, as upstream.
// Imports: controllers (objects, reconciler), selectors.

import { labelSelectorFromMeta } from '../selectors/label-selector.js';
import { Reconciler } from './reconciler.js';
import { metaOf, Objects, type Obj, type ResourceRef } from './objects.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';

const PDBS: ResourceRef = ['policy', 'v1', 'poddisruptionbudgets'];
const PODS: ResourceRef = ['', 'v1', 'pods'];
/** Upstream's DeletionTimeout: an eviction not seen through within this is forgotten. */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

function ready(pod: Obj): boolean {
  const conditions = ((pod.status as Obj | undefined)?.conditions ?? []) as Array<{ type?: string; status?: string }>;
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** An int-or-percent of `total`, percentages rounded up (upstream's GetScaledValueFromIntOrPercent with roundUp). */
export function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) throw new Error(`invalid value for IntOrString: invalid value "${value}"`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

export interface BudgetStatus {
  observedGeneration: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions: Obj[];
}

/** The status a budget should have over `pods` (all pods of its namespace); pure. Also when to look again. */
export function computeStatus(pdb: Obj, pods: readonly Obj[], now: Date): { status: BudgetStatus; recheckMs: number | undefined } {
  const spec = (pdb.spec ?? {}) as { selector?: unknown; minAvailable?: number | string; maxUnavailable?: number | string };
  const old = (pdb.status ?? {}) as { disruptedPods?: Record<string, string>; conditions?: Obj[] };
  const sel = labelSelectorFromMeta(spec.selector, 'spec.selector');
  const matching = sel.ok && !sel.selector.isEmpty() ? pods.filter((p) => sel.selector.matches(metaOf(p).labels ?? {})) : [];
  const byName = new Map(matching.map((p) => [metaOf(p).name ?? '', p]));
  const t = now.getTime();
  const disrupted: Record<string, string> = {};
  let recheckMs: number | undefined;
  for (const [name, when] of Object.entries(old.disruptedPods ?? {})) {
    const pod = byName.get(name);
    if (!pod || metaOf(pod).deletionTimestamp) continue;
    const expires = Date.parse(when) + DISRUPTED_POD_TIMEOUT_MS;
    if (!(expires > t)) continue;
    disrupted[name] = when;
    recheckMs = Math.min(recheckMs ?? Infinity, expires - t);
  }
  const expectedPods = matching.length;
  let desiredHealthy = 0;
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) desiredHealthy = Math.max(0, expectedPods - scaled(spec.maxUnavailable, expectedPods));
  else if (spec.minAvailable !== undefined && spec.minAvailable !== null) desiredHealthy = scaled(spec.minAvailable, expectedPods);
  const currentHealthy = matching.filter((p) => !metaOf(p).deletionTimestamp && ready(p) && !(metaOf(p).name! in disrupted)).length;
  const disruptionsAllowed = Math.max(0, currentHealthy - desiredHealthy);
  const observedGeneration = metaOf(pdb).generation ?? 0;
  const oldCondition = (old.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
  const status = disruptionsAllowed > 0 ? 'True' : 'False';
  const reason = disruptionsAllowed > 0 ? 'SufficientPods' : 'InsufficientPods';
  const condition = {
    type: 'DisruptionAllowed',
    status,
    observedGeneration,
    lastTransitionTime: oldCondition?.status === status && oldCondition.lastTransitionTime ? oldCondition.lastTransitionTime : rfc3339(now),
    reason,
    message: '',
  };
  return {
    status: {
      observedGeneration,
      ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
      disruptionsAllowed,
      currentHealthy,
      desiredHealthy,
      expectedPods,
      conditions: [...(old.conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed'), condition],
    },
    recheckMs,
  };
}

/** Key-order-blind equality of JSON values. */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).filter((k) => (a as Obj)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as Obj)[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => same((a as Obj)[k], (b as Obj)[k]));
  }
  return a === b;
}

export function disruptionController(env: ControllerEnv, now: () => Date = () => new Date()): Reconciler {
  const objects = new Objects(env, 'disruption-controller');
  return new Reconciler(
    {
      name: 'disruption-controller',
      // One key per namespace: a pod's change can concern any budget of its namespace.
      sources: [
        { prefix: objects.prefix(PDBS), keys: (t, e) => (t === 'DELETED' ? [] : [e.namespace]) },
        { prefix: objects.prefix(PODS), keys: (_t, e) => [e.namespace] },
      ],
      async reconcile(namespace) {
        const budgets = objects.list(PDBS, namespace);
        if (budgets.length === 0) return;
        const pods = objects.list(PODS, namespace);
        let again: number | undefined;
        for (const pdb of budgets) {
          if (metaOf(pdb).deletionTimestamp) continue;
          const { status, recheckMs } = computeStatus(pdb, pods, now());
          if (recheckMs !== undefined) again = Math.min(again ?? Infinity, recheckMs + 10);
          const old = (pdb.status ?? {}) as Obj;
          const { conditions: oldConditions, ...oldRest } = old;
          const { conditions, ...rest } = status;
          const strip = (cs: unknown) => ((cs ?? []) as Obj[]).map(({ lastTransitionTime: _l, ...c }) => c);
          if (same(oldRest, rest) && same(strip(oldConditions), strip(conditions))) continue;
          await objects.update(PDBS, namespace, { ...pdb, status }, 'status');
        }
        return again;
      },
    },
    env.cache,
    env.log,
  );
}
