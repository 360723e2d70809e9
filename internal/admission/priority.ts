// internal/admission/priority owns upstream's `Priority` admission plugin: a pod's
// priorityClassName resolves to spec.priority and spec.preemptionPolicy at create (the global
// default class — the lowest-valued one if several claim it — when the pod names none, else
// priority 0 and PreemptLowerPriority); an unknown class, or a priority or preemption policy
// in the pod that differs from the class's, is refused (403) with upstream's words. An update
// keeps what create resolved. A PriorityClass may not become the global default while another
// one is. Classes are read from the watch cache. Imports: admission, apierrors.

import { errors } from '../apierrors/status.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export interface PriorityClassInfo {
  name: string;
  value: number;
  globalDefault: boolean;
  preemptionPolicy: string | undefined;
}

export const PRIORITY_PLUGIN = 'Priority';
const DEFAULT_PREEMPTION_POLICY = 'PreemptLowerPriority';

const isPod = (req: AdmissionRequest) => req.resource.group === '' && req.resource.resource === 'pods' && !req.subresource;
const isPriorityClass = (req: AdmissionRequest) => req.resource.upstreamGroup === 'scheduling.k8s.io' && req.resource.resource === 'priorityclasses' && !req.subresource;

/** The global default class: among several, the lowest value wins, as upstream. */
export function defaultClass(classes: readonly PriorityClassInfo[]): PriorityClassInfo | undefined {
  let best: PriorityClassInfo | undefined;
  for (const c of classes) if (c.globalDefault && (!best || c.value < best.value)) best = c;
  return best;
}

export function priorityPlugin(classes: () => PriorityClassInfo[]): AdmissionPlugin {
  const forbid = (req: AdmissionRequest, message: string) =>
    errors.forbidden({ group: req.resource.group, name: req.resource.resource }, req.name || undefined, message);
  return {
    name: PRIORITY_PLUGIN,
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit(req: AdmissionRequest): void {
      if (!isPod(req) || !req.object) return;
      const spec = (req.object.spec ??= {}) as JsonObject;
      if (req.operation === 'UPDATE') {
        // Set at create: an update that leaves them out keeps them.
        const old = (req.oldObject?.spec ?? {}) as JsonObject;
        if (spec.priority === undefined && old.priority !== undefined) spec.priority = old.priority;
        if (spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
        return;
      }
      const all = classes();
      let priority: number;
      let policy: string | undefined;
      const name = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
      if (name === '') {
        const d = defaultClass(all);
        if (d) {
          spec.priorityClassName = d.name;
          priority = d.value;
          policy = d.preemptionPolicy ?? DEFAULT_PREEMPTION_POLICY;
        } else {
          priority = 0;
          policy = DEFAULT_PREEMPTION_POLICY;
        }
      } else {
        const pc = all.find((c) => c.name === name);
        if (!pc) throw forbid(req, `no PriorityClass with name ${name} was found`);
        priority = pc.value;
        policy = pc.preemptionPolicy ?? DEFAULT_PREEMPTION_POLICY;
      }
      if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
        throw forbid(req, `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
      }
      spec.priority = priority;
      if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
        throw forbid(req, `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
      }
      spec.preemptionPolicy = policy;
    },
    validate(req: AdmissionRequest): void {
      if (!isPriorityClass(req) || !req.object || req.object.globalDefault !== true) return;
      const other = classes().find((c) => c.globalDefault && c.name !== req.name);
      if (other) throw forbid(req, `PriorityClass ${other.name} is already marked as default. Only one default can exist`);
    },
  };
}
