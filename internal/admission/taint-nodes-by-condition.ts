// internal/admission/taint-nodes-by-condition owns upstream's `TaintNodesByCondition` admission
// plugin: a Node is created with the `node.<label domain>/not-ready:NoSchedule` taint (unless a
// taint of that key and effect is there already), so nothing is scheduled to it before its
// Ready condition says so; controllers/node-taints takes the taint off when the node is Ready.
// Imports: admission, naming.

import type { Naming } from '../naming/naming.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export function taintNodesByCondition(naming: Naming): AdmissionPlugin {
  const key = `${naming.labelPrefix('node')}not-ready`;
  return {
    name: 'TaintNodesByCondition',
    handles: (op) => op === 'CREATE',
    admit(req: AdmissionRequest): void {
      if (req.resource.upstreamGroup !== '' || req.resource.resource !== 'nodes' || req.subresource || !req.object) return;
      const spec = (req.object.spec ??= {}) as JsonObject;
      const taints = Array.isArray(spec.taints) ? (spec.taints as JsonObject[]) : [];
      if (taints.some((t) => t.key === key && t.effect === 'NoSchedule')) return;
      spec.taints = [...taints, { key, effect: 'NoSchedule' }];
    },
  };
}
