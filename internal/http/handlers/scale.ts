// internal/http/handlers/scale owns the scale sub-resource: the autoscaling/v1 Scale view of
// a workload (spec.replicas, status.replicas, the label selector as a string) and writing
// spec.replicas back (a negative spec.replicas is a 422 on the Scale, as upstream's ValidateScale).
// Imports: apierrors, naming, schema (types), selectors.

import { errors } from '../../apierrors/status.js';
import { fieldErrors } from '../../apierrors/field-errors.js';
import type { Naming } from '../../naming/naming.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { formatLabelSelectorMeta } from '../../selectors/index.js';
import type { JsonObject } from '../../storedobject/stored-object.js';
import { readPath, writePath } from './simple-path.js';

/** The schema of the autoscaling/v1 Scale every scale sub-resource speaks. */
export const SCALE_SCHEMA = 'io.k8s.api.autoscaling.v1.Scale';

export function scaleOf(r: ResourceInfo, obj: JsonObject, naming: Naming): JsonObject {
  void naming;
  const meta = (obj.metadata ?? {}) as JsonObject;
  const paths = r.custom?.scale;
  if (paths) {
    // A custom resource says where its replicas and selector live.
    const specReplicas = readPath(obj, paths.specReplicasPath);
    const statusReplicas = readPath(obj, paths.statusReplicasPath);
    const selector = paths.labelSelectorPath ? readPath(obj, paths.labelSelectorPath) : undefined;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion, creationTimestamp: meta.creationTimestamp },
      spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
      status: { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0, ...(typeof selector === 'string' && selector ? { selector } : {}) },
    };
  }
  const spec = (obj.spec ?? {}) as JsonObject;
  const status = (obj.status ?? {}) as JsonObject;
  // ReplicationControllers carry a plain map selector; the others a LabelSelector.
  const rawSelector = spec.selector;
  let selector = '';
  if (rawSelector && typeof rawSelector === 'object') {
    selector =
      'matchLabels' in (rawSelector as object) || 'matchExpressions' in (rawSelector as object)
        ? formatLabelSelectorMeta(rawSelector)
        : Object.entries(rawSelector as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',');
  }
  if (selector === '<none>') selector = '';
  return {
    kind: 'Scale',
    apiVersion: `${r.subresources.get('scale')?.group ?? 'autoscaling'}/v1`,
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0 },
    status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, ...(selector ? { selector } : {}) },
  };
}

/** Applies a Scale body's spec.replicas to the workload (returns the object to write). */
export function applyScale(r: ResourceInfo, obj: JsonObject, scale: JsonObject): JsonObject {
  const replicas = (scale.spec as JsonObject | undefined)?.replicas;
  // Upstream's ScaleREST validates the Scale (autoscaling ValidateScale) before touching the
  // workload, for built-in kinds and custom resources alike.
  if (typeof replicas === 'number' && replicas < 0) {
    const name = String(((obj.metadata ?? {}) as JsonObject).name ?? '');
    throw errors.invalid({ group: 'autoscaling', name: 'Scale' }, name, [fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  const next = structuredClone(obj);
  if (r.custom?.scale) writePath(next, r.custom.scale.specReplicasPath, replicas ?? 0);
  else next.spec = { ...((next.spec as JsonObject | undefined) ?? {}), replicas: replicas ?? 0 };
  const scaleMeta = (scale.metadata ?? {}) as JsonObject;
  if (typeof scaleMeta.resourceVersion === 'string') (next.metadata as JsonObject).resourceVersion = scaleMeta.resourceVersion;
  return next;
}
