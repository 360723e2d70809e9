// internal/validation/kinds/index owns the table from kind to its validator and the single
// dispatching entry `validateKind`. Adding a kind is one line in KIND_VALIDATORS.
// Imports: apierrors (FieldError), naming, schema (ResourceInfo type), the kinds modules, admission/policy/validation (ValidatingAdmissionPolicy and its binding).

import type { FieldError } from '../../apierrors/field-errors.js';
import { createNaming, type Naming } from '../../naming/naming.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { isObject } from '../plain-json.js';
import { validateMutatingWebhookConfiguration, validateValidatingWebhookConfiguration } from './admission-webhooks.js';
import { validateCronJob, validateJob } from './batch.js';
import type { KindValidator } from './common.js';
import { validateCertificateSigningRequest } from './certificates.js';
import { validateConfigMap, validateSecret } from './config.js';
import {
  validateCoreEvent,
  validateEventsV1Event,
  validateLease,
  validateNamespace,
  validateNode,
  validatePersistentVolumeClaim,
  validateServiceAccount,
} from './core-misc.js';
import { validateCustomResourceDefinition } from './crd.js';
import { validateAPIService } from '../../aggregator/apiservice-validation.js';
import { validatePod, validatePodTemplate } from './pod.js';
import { validateHorizontalPodAutoscaler, validatePodDisruptionBudget } from './policy-autoscaling.js';
import { validateClusterRole, validateClusterRoleBinding, validateRole, validateRoleBinding } from './rbac.js';
import { validateService } from './service.js';
import { validateMutatingAdmissionPolicy, validateMutatingAdmissionPolicyBinding, validateValidatingAdmissionPolicy, validateValidatingAdmissionPolicyBinding } from '../../admission/policy/validation.js';
import { validateDaemonSet, validateDeployment, validateReplicaSet, validateReplicationController, validateStatefulSet } from './workloads.js';

/** Validators by `<upstream group>/<kind>`. */
const KIND_VALIDATORS: Record<string, KindValidator> = {
  '/Pod': validatePod,
  '/PodTemplate': validatePodTemplate,
  '/ReplicationController': validateReplicationController,
  '/Service': validateService,
  '/ConfigMap': validateConfigMap,
  '/Secret': validateSecret,
  '/Namespace': validateNamespace,
  '/Node': validateNode,
  '/PersistentVolumeClaim': validatePersistentVolumeClaim,
  '/ServiceAccount': validateServiceAccount,
  '/Event': validateCoreEvent,
  'events.k8s.io/Event': validateEventsV1Event,
  'coordination.k8s.io/Lease': validateLease,
  'apps/Deployment': validateDeployment,
  'apps/ReplicaSet': validateReplicaSet,
  'apps/StatefulSet': validateStatefulSet,
  'apps/DaemonSet': validateDaemonSet,
  'batch/Job': validateJob,
  'batch/CronJob': validateCronJob,
  'policy/PodDisruptionBudget': validatePodDisruptionBudget,
  'autoscaling/HorizontalPodAutoscaler': validateHorizontalPodAutoscaler,
  'rbac.authorization.k8s.io/Role': validateRole,
  'rbac.authorization.k8s.io/ClusterRole': validateClusterRole,
  'rbac.authorization.k8s.io/RoleBinding': validateRoleBinding,
  'rbac.authorization.k8s.io/ClusterRoleBinding': validateClusterRoleBinding,
  'apiextensions.k8s.io/CustomResourceDefinition': validateCustomResourceDefinition,
  'certificates.k8s.io/CertificateSigningRequest': validateCertificateSigningRequest,
  'apiregistration.k8s.io/APIService': validateAPIService,
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': validateMutatingWebhookConfiguration,
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': validateValidatingWebhookConfiguration,
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': (o) => validateValidatingAdmissionPolicy(o),
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': (o) => validateValidatingAdmissionPolicyBinding(o),
  'admissionregistration.k8s.io/MutatingAdmissionPolicy': (o) => validateMutatingAdmissionPolicy(o),
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding': (o) => validateMutatingAdmissionPolicyBinding(o),
};

const defaultNaming = createNaming('cluster');

/**
 * Fields a kind's schema lists as required that upstream requires of new objects only, by
 * `<upstream group>/<kind>`: its Go validation, not the schema, decides, and an update may lack
 * them. events.k8s.io/v1 requires eventTime on create, but serves core Events (one store) that
 * never had one, and upstream lets those be updated through it.
 */
const REQUIRED_ON_CREATE_ONLY: Record<string, readonly string[]> = {
  'events.k8s.io/Event': ['eventTime'],
};

/** Whether a schema's Required error at `field` does not apply to an update of this kind. */
export const requiredOnCreateOnly = (resource: Pick<ResourceInfo, 'upstreamGroup' | 'kind'>, field: string): boolean =>
  REQUIRED_ON_CREATE_ONLY[`${resource.upstreamGroup}/${resource.kind}`]?.includes(field) ?? false;

/** Whether the kind has rules beyond metadata and schema. */
export const hasKindValidator = (resource: Pick<ResourceInfo, 'upstreamGroup' | 'kind'>): boolean =>
  `${resource.upstreamGroup}/${resource.kind}` in KIND_VALIDATORS;

/**
 * The kind-specific rules of a built-in kind: create when `old` is absent, update otherwise.
 * Expects defaults applied (upstream validates defaulted objects). Pure: neither object is
 * mutated. `naming` spells the RBAC group, label domains and well-known Secret types; the
 * spec's `cluster` naming when absent. Kinds without rules yield [].
 */
export function validateKind(resource: ResourceInfo, obj: unknown, old?: unknown, naming: Naming = defaultNaming): FieldError[] {
  const validator = KIND_VALIDATORS[`${resource.upstreamGroup}/${resource.kind}`];
  if (!validator || !isObject(obj)) return [];
  return validator(obj, isObject(old) ? old : undefined, { resource, naming });
}
