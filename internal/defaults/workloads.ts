// internal/defaults/workloads owns upstream's defaults for the workload kinds: Deployment,
// ReplicaSet, StatefulSet, DaemonSet, ReplicationController, PodTemplate, Job and CronJob, plus
// the selector and labels the server generates for Jobs. Mutates in place; idempotent.
// Imports: naming (Naming type), validation (plain-json), pod-spec.

import type { Naming } from '../naming/naming.js';
import { arrayAt, isAbsent, isBlank, isObject, jsonEqual, objectAt, type JsonObject } from '../validation/plain-json.js';
import { defaultPodTemplateSpec, defaultPvcSpec } from './pod-spec.js';


const specOf = (obj: JsonObject): JsonObject | undefined => objectAt(obj, 'spec');

export function defaultDeployment(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (isAbsent(spec.replicas)) spec.replicas = 1;
  if (!isObject(spec.strategy)) spec.strategy = {};
  const strategy = spec.strategy as JsonObject;
  if (isBlank(strategy.type)) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    if (!isObject(strategy.rollingUpdate)) strategy.rollingUpdate = {};
    const ru = strategy.rollingUpdate as JsonObject;
    if (isAbsent(ru.maxUnavailable)) ru.maxUnavailable = '25%';
    if (isAbsent(ru.maxSurge)) ru.maxSurge = '25%';
  }
  if (isAbsent(spec.revisionHistoryLimit)) spec.revisionHistoryLimit = 10;
  if (isAbsent(spec.progressDeadlineSeconds)) spec.progressDeadlineSeconds = 600;
  defaultPodTemplateSpec(spec.template);
}

export function defaultReplicaSet(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (isAbsent(spec.replicas)) spec.replicas = 1;
  defaultPodTemplateSpec(spec.template);
}

export function defaultDaemonSet(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (!isObject(spec.updateStrategy)) spec.updateStrategy = {};
  const strategy = spec.updateStrategy as JsonObject;
  if (isBlank(strategy.type)) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    if (!isObject(strategy.rollingUpdate)) strategy.rollingUpdate = {};
    const ru = strategy.rollingUpdate as JsonObject;
    if (isAbsent(ru.maxUnavailable)) ru.maxUnavailable = 1;
    if (isAbsent(ru.maxSurge)) ru.maxSurge = 0;
  }
  if (isAbsent(spec.revisionHistoryLimit)) spec.revisionHistoryLimit = 10;
  defaultPodTemplateSpec(spec.template);
}

/**
 * StatefulSet. `rollingUpdate.maxUnavailable` is not defaulted: its feature gate
 * (MaxUnavailableStatefulSet) is off by default in the 1.35 line since 1.35.4.
 */
export function defaultStatefulSet(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (isBlank(spec.podManagementPolicy)) spec.podManagementPolicy = 'OrderedReady';
  if (!isObject(spec.updateStrategy)) spec.updateStrategy = {};
  const strategy = spec.updateStrategy as JsonObject;
  if (isBlank(strategy.type)) {
    strategy.type = 'RollingUpdate';
    if (!isObject(strategy.rollingUpdate)) strategy.rollingUpdate = {};
  }
  if (strategy.type === 'RollingUpdate' && isObject(strategy.rollingUpdate) && isAbsent(strategy.rollingUpdate.partition)) {
    strategy.rollingUpdate.partition = 0;
  }
  if (!isObject(spec.persistentVolumeClaimRetentionPolicy)) spec.persistentVolumeClaimRetentionPolicy = {};
  const retention = spec.persistentVolumeClaimRetentionPolicy as JsonObject;
  if (isBlank(retention.whenDeleted)) retention.whenDeleted = 'Retain';
  if (isBlank(retention.whenScaled)) retention.whenScaled = 'Retain';
  if (isAbsent(spec.replicas)) spec.replicas = 1;
  if (isAbsent(spec.revisionHistoryLimit)) spec.revisionHistoryLimit = 10;
  defaultPodTemplateSpec(spec.template);
  for (const claim of arrayAt(spec, 'volumeClaimTemplates') ?? []) {
    if (!isObject(claim)) continue;
    defaultPvcSpec(claim.spec);
    // Upstream runs the PersistentVolumeClaim object defaults on each template, status included.
    if (!isObject(claim.status)) claim.status = {};
    if (isBlank((claim.status as JsonObject).phase)) (claim.status as JsonObject).phase = 'Pending';
  }
}

export function defaultReplicationController(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  const templateLabels = objectAt(objectAt(spec.template, 'metadata'), 'labels');
  if (templateLabels) {
    if (!isObject(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...templateLabels };
    const meta = objectAt(obj, 'metadata');
    if (meta && (!isObject(meta.labels) || Object.keys(meta.labels).length === 0)) meta.labels = { ...templateLabels };
  }
  if (isAbsent(spec.replicas)) spec.replicas = 1;
  defaultPodTemplateSpec(spec.template);
}

export function defaultPodTemplate(obj: JsonObject): void {
  defaultPodTemplateSpec(obj.template);
}

/** Job spec defaults shared by Job objects (not by CronJob job templates, as upstream). */
export function defaultJob(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (isAbsent(spec.completions) && isAbsent(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (isAbsent(spec.parallelism)) spec.parallelism = 1;
  if (isAbsent(spec.backoffLimit)) spec.backoffLimit = isAbsent(spec.backoffLimitPerIndex) ? 6 : 2147483647;
  const templateLabels = objectAt(objectAt(spec.template, 'metadata'), 'labels');
  const meta = objectAt(obj, 'metadata');
  if (templateLabels && meta && (!isObject(meta.labels) || Object.keys(meta.labels).length === 0)) meta.labels = { ...templateLabels };
  if (isBlank(spec.completionMode)) spec.completionMode = 'NonIndexed';
  if (isAbsent(spec.suspend)) spec.suspend = false;
  const failurePolicy = objectAt(spec, 'podFailurePolicy');
  for (const rule of arrayAt(failurePolicy, 'rules') ?? []) {
    for (const pattern of arrayAt(rule, 'onPodConditions') ?? []) {
      if (isObject(pattern) && isBlank(pattern.status)) pattern.status = 'True';
    }
  }
  if (isBlank(spec.podReplacementPolicy)) spec.podReplacementPolicy = failurePolicy ? 'Failed' : 'TerminatingOrFailed';
  if (isAbsent(spec.manualSelector)) spec.manualSelector = false;
  defaultPodTemplateSpec(spec.template);
}

export function defaultCronJob(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (isBlank(spec.concurrencyPolicy)) spec.concurrencyPolicy = 'Allow';
  if (isAbsent(spec.suspend)) spec.suspend = false;
  if (isAbsent(spec.successfulJobsHistoryLimit)) spec.successfulJobsHistoryLimit = 3;
  if (isAbsent(spec.failedJobsHistoryLimit)) spec.failedJobsHistoryLimit = 1;
  defaultPodTemplateSpec(objectAt(objectAt(spec, 'jobTemplate'), 'spec')?.template);
}

/** The label keys the server puts on Jobs and their pods, in the given naming. */
export function jobLabelKeys(naming: Naming): { controllerUid: string; jobName: string } {
  const prefix = naming.labelPrefix('batch');
  return { controllerUid: `${prefix}controller-uid`, jobName: `${prefix}job-name` };
}

/**
 * A new Job's create preparation: its generated selector and template labels (below). A job
 * whose own labels were defaulted from its template's (they are empty or equal to them) gets the
 * generated labels too: upstream's defaulting makes the two one map, so its create preparation
 * adds to both, and a read-back defaults empty job labels from the template's.
 */
export function prepareJobForCreate(job: JsonObject, naming: Naming): void {
  const meta = objectAt(job, 'metadata');
  const jobLabels = objectAt(meta, 'labels');
  const templateLabels = objectAt(objectAt(objectAt(specOf(job), 'template'), 'metadata'), 'labels');
  const followsTemplate = !jobLabels || Object.keys(jobLabels).length === 0 || (templateLabels !== undefined && jsonEqual(jobLabels, templateLabels));
  generateJobSelector(job, naming);
  const generated = objectAt(objectAt(objectAt(specOf(job), 'template'), 'metadata'), 'labels');
  if (meta && followsTemplate && generated && Object.keys(generated).length > 0) meta.labels = { ...generated };
}

/**
 * Generates a Job's selector and pod-template labels from its uid, as upstream's job strategy
 * does right before validating a create (unless `spec.manualSelector` is true): template labels
 * controller-uid and job-name in the prefixed and the legacy unprefixed spelling, and the
 * selector's controller-uid match label. Needs `metadata.uid` and `metadata.name` (no-op without
 * the uid), so the registry calls it after assigning both; applyDefaults calls it too when they
 * are already set. Idempotent.
 */
export function generateJobSelector(job: JsonObject, naming: Naming): void {
  const spec = specOf(job);
  const meta = objectAt(job, 'metadata');
  const uid = typeof meta?.uid === 'string' ? meta.uid : '';
  const name = typeof meta?.name === 'string' ? meta.name : '';
  if (!spec || !uid || spec.manualSelector === true) return;
  const keys = jobLabelKeys(naming);
  if (!isObject(spec.template)) spec.template = {};
  const template = spec.template as JsonObject;
  if (!isObject(template.metadata)) template.metadata = {};
  const tmeta = template.metadata as JsonObject;
  const labels: JsonObject = isObject(tmeta.labels) ? tmeta.labels : (tmeta.labels = {});
  // Labels the user already set are kept: a conflicting value fails validation instead.
  for (const key of ['job-name', keys.jobName]) if (labels[key] === undefined) labels[key] = name;
  for (const key of ['controller-uid', keys.controllerUid]) if (labels[key] === undefined) labels[key] = uid;
  if (!isObject(spec.selector)) spec.selector = {};
  const selector = spec.selector as JsonObject;
  if (!isObject(selector.matchLabels)) selector.matchLabels = {};
  const matchLabels = selector.matchLabels as JsonObject;
  if (matchLabels[keys.controllerUid] === undefined) matchLabels[keys.controllerUid] = uid;
}
