// internal/defaults/defaults owns the single entry the registry calls to default an object of a
// built-in kind (issue 6 §5): the schema-derived fills first (what Go's serialization shows),
// then the kind's own defaulting, from a table keyed by upstream group and kind so that adding a
// kind is one line. Also what upstream's strategies do before validating: on create (namespace
// finalizer and phase, job selector, pod status) and on update (system metadata and allocated
// service addresses carried over). Mutates in place; idempotent.
// Imports: naming, schema (ResourceInfo type), validation (schema-compile, plain-json), the
// defaults modules.

import { createNaming, type Naming } from '../naming/naming.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { isBlank, isObject, type JsonObject } from '../validation/plain-json.js';
import { builtinCompiler } from '../validation/schema-compile.js';
import {
  defaultEndpoints,
  defaultLimitRange,
  defaultNamespace,
  defaultNode,
  defaultPersistentVolume,
  defaultPersistentVolumeClaim,
  defaultSecret,
  defaultService,
  prepareNamespaceForCreate,
} from './core-kinds.js';
import {
  defaultCSIDriver,
  defaultCustomResourceDefinition,
  defaultEndpointSlice,
  defaultHorizontalPodAutoscaler,
  defaultNetworkPolicy,
  defaultPriorityClass,
  defaultRoleBinding,
  defaultStorageClass,
  defaultValidatingAdmissionPolicy,
  defaultWebhookConfiguration,
} from './group-kinds.js';
import { defaultPod } from './pod-spec.js';
import { preparePodForCreate } from './pod-status.js';
import { fillFromSchema } from './schema-fill.js';
import {
  defaultCronJob,
  defaultDaemonSet,
  defaultDeployment,
  defaultJob,
  defaultPodTemplate,
  defaultReplicaSet,
  defaultReplicationController,
  defaultStatefulSet,
  generateJobSelector,
  prepareJobForCreate,
} from './workloads.js';

export interface DefaultingContext {
  readonly naming: Naming;
  /** The served version (autoscaling v1 and v2 default differently). */
  readonly version: string;
  /**
   * The first defaulting of a create, before the creator's managedFields are recorded: what
   * the kind's create preparation generates (a Job's selector) is left to it, so that it
   * belongs to no manager, as upstream records it.
   */
  readonly creating?: boolean;
}

type KindDefaulter = (obj: JsonObject, ctx: DefaultingContext) => void;

/** Kind defaulters by `<upstream group>/<kind>`. */
const KIND_DEFAULTERS: Record<string, KindDefaulter> = {
  '/Pod': (o) => defaultPod(o),
  '/PodTemplate': (o) => defaultPodTemplate(o),
  '/ReplicationController': (o) => defaultReplicationController(o),
  '/Service': (o) => defaultService(o),
  '/Namespace': (o, c) => defaultNamespace(o, c.naming),
  '/Secret': (o) => defaultSecret(o),
  '/PersistentVolume': (o) => defaultPersistentVolume(o),
  '/PersistentVolumeClaim': (o) => defaultPersistentVolumeClaim(o),
  '/Endpoints': (o) => defaultEndpoints(o),
  '/Node': (o) => defaultNode(o),
  '/LimitRange': (o) => defaultLimitRange(o),
  'apps/Deployment': (o) => defaultDeployment(o),
  'apps/ReplicaSet': (o) => defaultReplicaSet(o),
  'apps/StatefulSet': (o) => defaultStatefulSet(o),
  'apps/DaemonSet': (o) => defaultDaemonSet(o),
  'batch/Job': (o, c) => {
    // Selector generation first, so the job's own labels default from the full template labels
    // as upstream's read-back shows them (on a create, prepareForCreate generates and
    // propagates them after the creator's fields are recorded).
    if (!c.creating) generateJobSelector(o, c.naming);
    defaultJob(o);
  },
  'batch/CronJob': (o) => defaultCronJob(o),
  'autoscaling/HorizontalPodAutoscaler': (o, c) => defaultHorizontalPodAutoscaler(o, c.version),
  'rbac.authorization.k8s.io/RoleBinding': (o, c) => defaultRoleBinding(o, c.naming),
  'rbac.authorization.k8s.io/ClusterRoleBinding': (o, c) => defaultRoleBinding(o, c.naming),
  'networking.k8s.io/NetworkPolicy': (o) => defaultNetworkPolicy(o),
  'storage.k8s.io/StorageClass': (o) => defaultStorageClass(o),
  'storage.k8s.io/CSIDriver': (o) => defaultCSIDriver(o),
  'scheduling.k8s.io/PriorityClass': (o) => defaultPriorityClass(o),
  'discovery.k8s.io/EndpointSlice': (o) => defaultEndpointSlice(o),
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': (o) => defaultWebhookConfiguration(o, false),
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': (o) => defaultWebhookConfiguration(o, true),
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': (o) => defaultValidatingAdmissionPolicy(o),
  'apiextensions.k8s.io/CustomResourceDefinition': (o) => defaultCustomResourceDefinition(o),
};

const defaultNaming = createNaming('cluster');

/**
 * Applies upstream's defaults to `obj` (a built-in kind in JSON form, any verb: create, update,
 * patch, apply, dry-run) in place and returns it. Schema-derived fills run first: non-pointer
 * structs as `{}` (`resources: {}`, `status: {}`), non-omitempty zero scalars, `+default` markers,
 * nulls removed, quantities canonical; then the kind's defaults. Idempotent. Objects of the wrong
 * shape are left for validation to report. `naming` decides label domains and group names written
 * by defaults (namespace label, job labels, RBAC apiGroup); the spec's `cluster` naming when absent.
 */
export function applyDefaults<T>(resource: ResourceInfo, obj: T, naming: Naming = defaultNaming, options: { creating?: boolean } = {}): T {
  if (!isObject(obj)) return obj;
  const root = resource.schemaName ? builtinCompiler(naming).named(resource.schemaName) : undefined;
  if (root) fillFromSchema(obj, root);
  KIND_DEFAULTERS[`${resource.upstreamGroup}/${resource.kind}`]?.(obj, { naming, version: resource.version, creating: options.creating === true });
  return obj;
}

function carryServicePorts(spec: JsonObject, oldSpec: JsonObject): void {
  if (isBlank(spec.clusterIP) && !isBlank(oldSpec.clusterIP)) spec.clusterIP = oldSpec.clusterIP;
  if ((!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) && Array.isArray(oldSpec.clusterIPs)) {
    spec.clusterIPs = [...oldSpec.clusterIPs];
  }
  // An unset node port keeps the one allocated to the same port/protocol before.
  const oldPorts = Array.isArray(oldSpec.ports) ? oldSpec.ports.filter(isObject) : [];
  for (const port of Array.isArray(spec.ports) ? spec.ports.filter(isObject) : []) {
    if (port.nodePort) continue;
    const match = oldPorts.find((o) => o.port === port.port && (o.protocol ?? 'TCP') === (port.protocol ?? 'TCP'));
    if (match?.nodePort) port.nodePort = match.nodePort;
  }
  if (!spec.healthCheckNodePort && oldSpec.healthCheckNodePort) spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
}

/**
 * What upstream's BeforeUpdate and strategies do to an update before validating it, for the
 * registry to call on update (after defaulting): system metadata the client cannot change is
 * carried over from `old` (deletionTimestamp, deletionGracePeriodSeconds, generation,
 * creationTimestamp; uid when the client sent none); a Namespace keeps its spec.finalizers
 * (changed only through `finalize`); a Service keeps allocated cluster IPs and node ports the
 * client left unset. Generation increments and status/spec splitting stay the registry's.
 */
export function prepareForUpdate<T>(resource: ResourceInfo, obj: T, old: unknown): T {
  if (!isObject(obj) || !isObject(old)) return obj;
  const o: JsonObject = obj;
  const meta: JsonObject = isObject(o.metadata) ? o.metadata : (o.metadata = {});
  const oldMeta: JsonObject = isObject(old.metadata) ? old.metadata : {};
  for (const key of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
    if (oldMeta[key] === undefined) delete meta[key];
    else meta[key] = oldMeta[key];
  }
  if (oldMeta.creationTimestamp) meta.creationTimestamp = oldMeta.creationTimestamp;
  if (!meta.uid && oldMeta.uid) meta.uid = oldMeta.uid;
  switch (`${resource.upstreamGroup}/${resource.kind}`) {
    case '/Namespace': {
      const spec: JsonObject = isObject(o.spec) ? o.spec : (o.spec = {});
      const oldFinalizers = isObject(old.spec) ? old.spec.finalizers : undefined;
      if (oldFinalizers === undefined) delete spec.finalizers;
      else spec.finalizers = oldFinalizers;
      break;
    }
    case '/Service':
      // Moving to ExternalName releases the allocations instead.
      if (isObject(o.spec) && isObject(old.spec) && o.spec.type !== 'ExternalName') carryServicePorts(o.spec, old.spec);
      break;
  }
  return obj;
}

/**
 * The create-only preparation of upstream's strategies that shows in responses, for the registry
 * to call on create (after name, uid and creationTimestamp are set, before validation):
 * Namespace status Active and the namespace finalizer; Job selector and template labels from the
 * uid; Pod status (phase Pending, QoS class, scheduling-gated condition).
 */
export function prepareForCreate<T>(resource: ResourceInfo, obj: T, naming: Naming = defaultNaming): T {
  if (!isObject(obj)) return obj;
  switch (`${resource.upstreamGroup}/${resource.kind}`) {
    case '/Namespace':
      prepareNamespaceForCreate(obj, naming);
      break;
    case 'batch/Job':
      prepareJobForCreate(obj, naming);
      break;
    case '/Pod':
      preparePodForCreate(obj);
      break;
  }
  return obj;
}
