// internal/defaults/pod-status owns the status upstream's pod strategy gives a pod on create:
// phase Pending, its QoS class, and the PodScheduled=False condition of a pod held back by
// scheduling gates. Mutates in place.
// Imports: validation (plain-json, quantity).

import { arrayAt, isObject, objectAt, type JsonObject } from '../validation/plain-json.js';
import { parseQuantity } from '../validation/quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'];

const nanos = (v: unknown): bigint | undefined => {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  return parseQuantity(v)?.nanos;
};

/** Upstream's QoS class: only cpu and memory count; zero quantities count as unset. */
export function podQOSClass(pod: unknown): QOSClass {
  const spec = objectAt(pod, 'spec');
  const containers = [...(arrayAt(spec, 'containers') ?? []), ...(arrayAt(spec, 'initContainers') ?? [])].filter(isObject);
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  for (const c of containers) {
    const resources = objectAt(c, 'resources');
    for (const [name, value] of Object.entries(objectAt(resources, 'requests') ?? {})) {
      const n = nanos(value);
      if (QOS_RESOURCES.includes(name) && n !== undefined && n !== 0n) requests.set(name, (requests.get(name) ?? 0n) + n);
    }
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(objectAt(resources, 'limits') ?? {})) {
      const n = nanos(value);
      if (QOS_RESOURCES.includes(name) && n !== undefined && n !== 0n) {
        seen.add(name);
        limits.set(name, (limits.get(name) ?? 0n) + n);
      }
    }
    if (!QOS_RESOURCES.every((r) => seen.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed && QOS_RESOURCES.every((r) => limits.has(r))) {
    const matches = [...requests].every(([name, value]) => limits.get(name) === value);
    if (matches && requests.size === limits.size) return 'Guaranteed';
  }
  return 'Burstable';
}

/** Replaces the status of a pod being created, as upstream's pod strategy does. */
export function preparePodForCreate(pod: JsonObject, now: () => Date = () => new Date()): void {
  const status: JsonObject = { phase: 'Pending', qosClass: podQOSClass(pod) };
  const gates = arrayAt(objectAt(pod, 'spec'), 'schedulingGates');
  if (gates && gates.length > 0) {
    status.conditions = [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
        lastProbeTime: null,
        lastTransitionTime: now().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    ];
  }
  pod.status = status;
}
