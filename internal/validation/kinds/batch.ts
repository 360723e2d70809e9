// internal/validation/kinds/batch owns the batch/v1 rules: Job (counts, completion mode, restart
// policy OnFailure|Never, selector required and matching, the generated selector's labels, the
// immutable fields) and CronJob (name length, schedule syntax, time zone, concurrency policy,
// history limits, the job template).
// Imports: apierrors (FieldError), naming (via context), validation helpers, kinds/common,
// kinds/pod, kinds/cron.

import { fieldErrors, type FieldError } from '../../apierrors/field-errors.js';
import { validateAnnotations, validateLabels } from '../object-meta.js';
import { isObject, jsonEqual, type JsonObject } from '../plain-json.js';
import { has, immutable, isEmptySelector, nonNegative, obj, selectorMatches, str, validateLabelSelector, type KindContext, type KindValidator } from './common.js';
import { cronScheduleError, isValidTimeZone } from './cron.js';
import { validatePodTemplateSpec } from './pod.js';

const JOB_RESTART_POLICIES = ['OnFailure', 'Never'];

/** Rules of a JobSpec at `path`; `isJob` adds those that only apply to Job objects. */
function validateJobSpec(spec: JsonObject, path: string, isJob: boolean): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes']) {
    errs.push(...nonNegative(spec[key], `${path}.${key}`));
  }
  const mode = str(spec, 'completionMode');
  if (mode && mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(fieldErrors.notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed' && !has(spec, 'completions')) errs.push(fieldErrors.required(`${path}.completions`, 'when completion mode is Indexed'));
  if (mode !== 'Indexed' && has(spec, 'backoffLimitPerIndex')) {
    errs.push(fieldErrors.forbidden(`${path}.backoffLimitPerIndex`, 'requires indexed completion mode'));
  }
  const replacement = str(spec, 'podReplacementPolicy');
  if (replacement && replacement !== 'TerminatingOrFailed' && replacement !== 'Failed') {
    errs.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, replacement, ['TerminatingOrFailed', 'Failed']));
  }
  const selector = spec.selector;
  const templateLabels = obj(obj(obj(spec, 'template'), 'metadata'), 'labels') ?? {};
  if (isObject(selector)) {
    errs.push(...validateLabelSelector(selector, `${path}.selector`));
    if (!selectorMatches(selector, templateLabels)) {
      errs.push(fieldErrors.invalid(`${path}.template.metadata.labels`, templateLabels, '`selector` does not match template `labels`'));
    }
  } else if (isJob) {
    errs.push(fieldErrors.required(`${path}.selector`, ''));
  }
  errs.push(...validatePodTemplateSpec(spec.template, `${path}.template`));
  const restart = str(obj(spec.template, 'spec'), 'restartPolicy');
  if (restart === 'Always') errs.push(fieldErrors.notSupported(`${path}.template.spec.restartPolicy`, restart, JOB_RESTART_POLICIES));
  if (isObject(spec.podFailurePolicy) && restart && restart !== 'Never') {
    errs.push(fieldErrors.invalid(`${path}.template.spec.restartPolicy`, restart, 'only "Never" is supported when podFailurePolicy is specified'));
  }
  return errs;
}

/** With a generated selector (manualSelector not true) the labels must carry the job's uid. */
function validateGeneratedSelector(job: JsonObject, ctx: KindContext): FieldError[] {
  const spec = obj(job, 'spec');
  const uid = str(obj(job, 'metadata'), 'uid');
  if (!spec || !uid || spec.manualSelector === true) return [];
  const errs: FieldError[] = [];
  const prefix = ctx.naming.labelPrefix('batch');
  const labels = obj(obj(obj(spec, 'template'), 'metadata'), 'labels') ?? {};
  for (const key of [`${prefix}controller-uid`, 'controller-uid']) {
    if (labels[key] !== undefined && labels[key] !== uid) {
      errs.push(fieldErrors.invalid('spec.template.metadata.labels', labels, `\`selector\` not auto-generated: ${key} must be ${uid}`));
    }
  }
  const selector = obj(spec, 'selector');
  if (selector && obj(selector, 'matchLabels')?.[`${prefix}controller-uid`] !== uid) {
    errs.push(fieldErrors.invalid('spec.selector', selector, '`selector` not auto-generated'));
  }
  return errs;
}

export const validateJob: KindValidator = (job, old, ctx) => {
  const spec = obj(job, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs = validateJobSpec(spec, 'spec', true);
  const oldSpec = obj(old, 'spec');
  if (!old) errs.push(...validateGeneratedSelector(job, ctx));
  if (oldSpec) {
    errs.push(...immutable(spec.selector, oldSpec.selector, 'spec.selector'));
    errs.push(...immutable(spec.completionMode, oldSpec.completionMode, 'spec.completionMode'));
    const elastic = spec.completionMode === 'Indexed' && spec.completions === spec.parallelism;
    if (!elastic) errs.push(...immutable(spec.completions, oldSpec.completions, 'spec.completions'));
    // Upstream lets suspended jobs that never started change their template (scheduling directives).
    if (oldSpec.suspend !== true && !jsonEqual(spec.template, oldSpec.template)) {
      errs.push(fieldErrors.invalid('spec.template', spec.template, 'field is immutable'));
    }
  }
  return errs;
};

/** CronJob names leave room for the 11-character suffix of the jobs they create. */
const CRONJOB_NAME_MAX = 52;

export const validateCronJob: KindValidator = (cj) => {
  const errs: FieldError[] = [];
  const name = str(obj(cj, 'metadata'), 'name');
  if (name.length > CRONJOB_NAME_MAX) errs.push(fieldErrors.invalid('metadata.name', name, `must be no more than ${CRONJOB_NAME_MAX} characters`));
  const spec = obj(cj, 'spec');
  if (!spec) return [...errs, fieldErrors.required('spec', '')];
  const schedule = str(spec, 'schedule');
  if (!schedule) {
    errs.push(fieldErrors.required('spec.schedule', ''));
  } else if (schedule.includes('TZ')) {
    errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  } else {
    const err = cronScheduleError(schedule);
    if (err) errs.push(fieldErrors.invalid('spec.schedule', schedule, err));
  }
  if (typeof spec.timeZone === 'string' && !isValidTimeZone(spec.timeZone)) {
    errs.push(fieldErrors.invalid('spec.timeZone', spec.timeZone, `unknown time zone ${spec.timeZone}`));
  }
  const policy = str(spec, 'concurrencyPolicy');
  if (!policy) errs.push(fieldErrors.required('spec.concurrencyPolicy', ''));
  else if (!['Allow', 'Forbid', 'Replace'].includes(policy)) errs.push(fieldErrors.notSupported('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
  for (const key of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) errs.push(...nonNegative(spec[key], `spec.${key}`));
  const jobTemplate = obj(spec, 'jobTemplate');
  if (!jobTemplate) {
    errs.push(fieldErrors.required('spec.jobTemplate', ''));
    return errs;
  }
  const meta = obj(jobTemplate, 'metadata');
  errs.push(...validateLabels(meta?.labels, 'spec.jobTemplate.metadata.labels'));
  errs.push(...validateAnnotations(meta?.annotations, 'spec.jobTemplate.metadata.annotations'));
  const jobSpec = obj(jobTemplate, 'spec');
  if (jobSpec) errs.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec', false));
  if (jobSpec && isObject(jobSpec.selector) && isEmptySelector(jobSpec.selector) && jobSpec.manualSelector === true) {
    errs.push(fieldErrors.invalid('spec.jobTemplate.spec.selector', jobSpec.selector, 'empty selector is invalid for a job with manualSelector'));
  }
  return errs;
};
