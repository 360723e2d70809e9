// internal/admission/default-toleration-seconds owns upstream's `DefaultTolerationSeconds`
// admission plugin: a pod created (or updated) without a toleration of the not-ready or unreachable
// NoExecute taint (keys `node.<label domain>/not-ready` / `unreachable`) gets one for 300 s, so
// a pod is evicted from a failed node after five minutes. A toleration with an empty key or
// effect that covers the taint counts, as upstream. Imports: admission, naming.

import type { Naming } from '../naming/naming.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export const DEFAULT_TOLERATION_SECONDS_PLUGIN = 'DefaultTolerationSeconds';
/** Upstream's --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds defaults. */
export const DEFAULT_TOLERATION_SECONDS = 300;

export function defaultTolerationSeconds(naming: Naming, seconds = { notReady: DEFAULT_TOLERATION_SECONDS, unreachable: DEFAULT_TOLERATION_SECONDS }): AdmissionPlugin {
  const notReady = `${naming.labelPrefix('node')}not-ready`;
  const unreachable = `${naming.labelPrefix('node')}unreachable`;
  return {
    name: DEFAULT_TOLERATION_SECONDS_PLUGIN,
    // Updates too, as upstream: a client that sends back its manifest (kubectl replace) without
    // the tolerations added at create gets them again instead of a refusal for removing them.
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit(req: AdmissionRequest): void {
      if (req.resource.group !== '' || req.resource.resource !== 'pods' || req.subresource || !req.object) return;
      const spec = (req.object.spec ??= {}) as JsonObject;
      const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as JsonObject[]) : [];
      const covers = (key: string) => tolerations.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect));
      const added: JsonObject[] = [];
      if (!covers(notReady)) added.push({ key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds.notReady });
      if (!covers(unreachable)) added.push({ key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds.unreachable });
      if (added.length) spec.tolerations = [...tolerations, ...added];
    },
  };
}
