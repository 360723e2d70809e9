// internal/controllers/node-taints owns the NoSchedule tainting pass of upstream's node
// lifecycle controller (leader-only): a Node's conditions decide its condition taints, as
// upstream maps them: Ready False → `node.<label domain>/not-ready`, Ready Unknown →
// `unreachable`, MemoryPressure / DiskPressure / PIDPressure True → `memory-pressure` /
// `disk-pressure` / `pid-pressure`, NetworkUnavailable True → `network-unavailable`, all with
// effect NoSchedule; the ones the conditions no longer call for are removed, others are kept.
// A node that has never reported a Ready condition keeps what it has (the not-ready taint
// TaintNodesByCondition gave it at create). Imports: controllers (objects, reconciler), naming.

import type { Naming } from '../naming/naming.js';
import { Reconciler } from './reconciler.js';
import { Objects, type Obj, type ResourceRef } from './objects.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';

const NODES: ResourceRef = ['', 'v1', 'nodes'];

type Taint = { key?: string; effect?: string; value?: string };

/** The condition taints a node's conditions call for, and every key this pass manages. */
export function conditionTaints(naming: Naming, node: Obj): { wanted: string[]; managed: string[] } | undefined {
  const p = naming.labelPrefix('node');
  const map: Record<string, Record<string, string>> = {
    Ready: { False: `${p}not-ready`, Unknown: `${p}unreachable` },
    MemoryPressure: { True: `${p}memory-pressure` },
    DiskPressure: { True: `${p}disk-pressure` },
    PIDPressure: { True: `${p}pid-pressure` },
    NetworkUnavailable: { True: `${p}network-unavailable` },
  };
  const conditions = (((node.status as Obj | undefined)?.conditions ?? []) as Array<{ type?: string; status?: string }>).filter((c) => c.type && c.type in map);
  if (!conditions.some((c) => c.type === 'Ready')) return undefined;
  const wanted = conditions.map((c) => map[c.type!]![c.status ?? '']).filter((k): k is string => k !== undefined);
  return { wanted, managed: Object.values(map).flatMap((m) => Object.values(m)) };
}

export function nodeTaintController(env: ControllerEnv): Reconciler {
  const objects = new Objects(env, 'node-lifecycle-controller');
  return new Reconciler(
    {
      name: 'node-lifecycle-controller',
      sources: [{ prefix: objects.prefix(NODES), keys: (t, e) => (t === 'DELETED' ? [] : [e.name]) }],
      async reconcile(name) {
        const node = objects.get(NODES, '', name);
        if (!node) return;
        const plan = conditionTaints(env.naming, node);
        if (!plan) return;
        const spec = (node.spec ?? {}) as Obj;
        const taints = (Array.isArray(spec.taints) ? spec.taints : []) as Taint[];
        const managed = new Set(plan.managed);
        const isCondition = (t: Taint) => t.effect === 'NoSchedule' && managed.has(t.key ?? '');
        const kept = taints.filter((t) => !isCondition(t) || plan.wanted.includes(t.key!));
        const missing = plan.wanted.filter((k) => !kept.some((t) => isCondition(t) && t.key === k));
        if (kept.length === taints.length && missing.length === 0) return;
        const added = missing.map((key) => ({ key, effect: 'NoSchedule' }));
        await objects.update(NODES, '', { ...node, spec: { ...spec, taints: [...kept, ...added] } });
      },
    },
    env.cache,
    env.log,
  );
}
