// internal/admission/pod-security/plugin owns upstream's `PodSecurity` admission plugin (1.32),
// a validating plugin:
//   - pods (create, and updates that change what the checks look at: container images, the
//     number of containers, seccomp annotations; the ephemeralcontainers sub-resource always)
//     are evaluated against the namespace's enforce, audit and warn policies: enforce refuses
//     (403 `violates PodSecurity "restricted:latest": ...`), audit adds the audit annotation,
//     warn adds a Warning (not to a request already refused);
//   - the pod templates of workload resources (Deployment, ReplicaSet, StatefulSet, DaemonSet,
//     Job, CronJob, ReplicationController, PodTemplate) get audit and warn only, and only when
//     the template changed;
//   - namespaces: invalid policy labels are refused (422) on create and when changed; a change
//     of the enforce policy evaluates the namespace's existing pods and warns about those that
//     would violate it, grouped by their violations as upstream does;
//   - exempt usernames, runtime classes and namespaces from the configuration skip evaluation.
// Imports: admission, apierrors, http/respond, naming, node-restriction (jsonEqual), checks, policy.

import { errors } from '../../apierrors/status.js';
import { warningHeader } from '../../http/respond.js';
import type { Naming } from '../../naming/naming.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from '../admission.js';
import { jsonEqual } from '../node-restriction.js';
import { aggregate, evaluatePod, levelVersionString, type CheckResult, type LevelVersion } from './checks.js';
import { policyFromLabels, type NamespacePolicy, type PodSecurityConfig } from './policy.js';

export const POD_SECURITY_PLUGIN = 'PodSecurity';

export interface PodSecurityDeps {
  naming: Naming;
  config: PodSecurityConfig;
  /**
   * A namespace's labels (undefined when it does not exist), never changed once handed out (the
   * server gives the cache entry's): the plugin keys what it derives from them by the object.
   */
  namespaceLabels(name: string): Promise<Readonly<Record<string, string>> | undefined>;
  /** The pods of a namespace as this replica's cache holds them. */
  podsIn(namespace: string): JsonObject[];
}

const rec = (v: unknown): JsonObject => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Where each workload resource keeps its pod template (upstream group/resource). */
const TEMPLATE_PATHS: Record<string, readonly string[]> = {
  '/replicationcontrollers': ['spec', 'template'],
  '/podtemplates': ['template'],
  'apps/deployments': ['spec', 'template'],
  'apps/replicasets': ['spec', 'template'],
  'apps/statefulsets': ['spec', 'template'],
  'apps/daemonsets': ['spec', 'template'],
  'batch/jobs': ['spec', 'template'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template'],
};

function template(obj: JsonObject | undefined, path: readonly string[]): { meta: JsonObject; spec: JsonObject } | undefined {
  let cur: unknown = obj;
  for (const k of path) cur = rec(cur)[k];
  if (cur === undefined || cur === null) return undefined;
  return { meta: rec(rec(cur).metadata), spec: rec(rec(cur).spec) };
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

/** Upstream's isSignificantPodUpdate: only what a pod update may change and a check looks at. */
export function isSignificantPodUpdate(pod: JsonObject, old: JsonObject): boolean {
  const ann = (o: JsonObject) => rec(rec(o.metadata).annotations);
  const a = ann(pod);
  const b = ann(old);
  if (a[SECCOMP_POD_ANNOTATION] !== b[SECCOMP_POD_ANNOTATION]) return true;
  for (const field of ['containers', 'initContainers']) {
    const now = Array.isArray(rec(pod.spec)[field]) ? (rec(pod.spec)[field] as unknown[]).map(rec) : [];
    const before = Array.isArray(rec(old.spec)[field]) ? (rec(old.spec)[field] as unknown[]).map(rec) : [];
    if (now.length !== before.length) return true;
    for (let i = 0; i < now.length; i++) {
      if (now[i]!.image !== before[i]!.image) return true;
      const key = `${SECCOMP_CONTAINER_PREFIX}${str(now[i]!.name)}`;
      if (a[key] !== b[key]) return true;
    }
  }
  return false;
}

export function podSecurity(deps: PodSecurityDeps): AdmissionPlugin {
  const { naming, config } = deps;
  const annotationPrefix = naming.labelPrefix('pod-security');
  const exemptNamespaces = new Set(config.exemptions.namespaces);
  const exemptUsers = new Set(config.exemptions.usernames);
  const exemptRuntimeClasses = new Set(config.exemptions.runtimeClasses);

  // Every pod write asks for its namespace's policy: work it out once per labels object (one per
  // stored version of the namespace), not per request. Read-only from here on.
  const policies = new WeakMap<object, NamespacePolicy>();
  const policyOf = async (namespace: string): Promise<NamespacePolicy> => {
    const labels = await deps.namespaceLabels(namespace);
    if (labels === undefined) return policyFromLabels(naming, {}, config.defaults).policy;
    let policy = policies.get(labels);
    if (policy === undefined) {
      policy = policyFromLabels(naming, labels, config.defaults).policy;
      policies.set(labels, policy);
    }
    return policy;
  };

  const evaluate = (lv: LevelVersion, meta: JsonObject, spec: JsonObject): CheckResult[] => (lv.level === 'privileged' ? [] : evaluatePod(lv, meta, spec));

  /** Evaluates one pod (or template); throws on an enforce failure when `enforce`. */
  function evaluateIn(req: AdmissionRequest, policy: NamespacePolicy, meta: JsonObject, spec: JsonObject, enforce: boolean): void {
    if (exemptRuntimeClasses.has(str(spec.runtimeClassName))) {
      req.annotate?.(`${annotationPrefix}exempt`, 'runtimeClass');
      return;
    }
    if (enforce) {
      req.annotate?.(`${annotationPrefix}enforce-policy`, levelVersionString(policy.enforce));
      const failed = evaluate(policy.enforce, meta, spec);
      if (failed.length) {
        const audit = evaluate(policy.audit, meta, spec);
        if (audit.length) req.annotate?.(`${annotationPrefix}audit-violations`, `would violate PodSecurity "${levelVersionString(policy.audit)}": ${aggregate(audit)}`);
        throw errors.forbidden({ group: req.resource.group, name: req.resource.resource }, req.name || str(rec(req.object?.metadata).name) || undefined, `violates PodSecurity "${levelVersionString(policy.enforce)}": ${aggregate(failed)}`);
      }
    }
    const audit = evaluate(policy.audit, meta, spec);
    if (audit.length) req.annotate?.(`${annotationPrefix}audit-violations`, `would violate PodSecurity "${levelVersionString(policy.audit)}": ${aggregate(audit)}`);
    const warn = evaluate(policy.warn, meta, spec);
    if (warn.length) req.warnings?.push(warningHeader(`would violate PodSecurity "${levelVersionString(policy.warn)}": ${aggregate(warn)}`));
  }

  async function validateNamespace(req: AdmissionRequest): Promise<void> {
    if (req.subresource) return;
    const labels = (o: JsonObject | undefined) => rec(rec(o?.metadata).labels) as Record<string, string>;
    const now = policyFromLabels(naming, labels(req.object), config.defaults);
    if (req.operation === 'UPDATE') {
      const before = policyFromLabels(naming, labels(req.oldObject), config.defaults);
      const ours = (l: Record<string, string>) => Object.entries(l).filter(([k]) => k.startsWith(annotationPrefix));
      if (jsonEqual(Object.fromEntries(ours(labels(req.object))), Object.fromEntries(ours(labels(req.oldObject))))) return;
      if (now.errors.length) throw errors.invalid({ group: '', name: 'Namespace' }, req.name, now.errors);
      if (jsonEqual(now.policy.enforce, before.policy.enforce) || now.policy.enforce.level === 'privileged') return;
      if (exemptNamespaces.has(req.name)) {
        req.warnings?.push(warningHeader(`namespace ${JSON.stringify(req.name)} is exempt from Pod Security, and the policy (${levelVersionString(now.policy.enforce)}) will be ignored`));
        return;
      }
      warnExistingPods(req, now.policy.enforce);
      return;
    }
    if (now.errors.length) throw errors.invalid({ group: '', name: 'Namespace' }, req.name || str(rec(req.object?.metadata).name), now.errors);
  }

  /** Upstream's dry run of a new enforce level over the pods already in the namespace. */
  function warnExistingPods(req: AdmissionRequest, lv: LevelVersion): void {
    const groups = new Map<string, string[]>();
    const pods = deps
      .podsIn(req.name)
      .filter((p) => !exemptRuntimeClasses.has(str(rec(p.spec).runtimeClassName)))
      .sort((a, b) => (str(rec(a.metadata).name) < str(rec(b.metadata).name) ? -1 : 1));
    for (const pod of pods) {
      const failed = evaluatePod(lv, rec(pod.metadata), rec(pod.spec));
      if (!failed.length) continue;
      const reasons = failed.map((r) => r.reason).join(', ');
      groups.set(reasons, [...(groups.get(reasons) ?? []), str(rec(pod.metadata).name)]);
    }
    if (!groups.size) return;
    req.warnings?.push(warningHeader(`existing pods in namespace ${JSON.stringify(req.name)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(lv))}`));
    for (const [reasons, names] of groups) {
      const who = names.length === 1 ? names[0]! : `${names[0]!} (and ${names.length - 1} other ${names.length === 2 ? 'pod' : 'pods'})`;
      req.warnings?.push(warningHeader(`${who}: ${reasons}`));
    }
  }

  return {
    name: POD_SECURITY_PLUGIN,
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async validate(req: AdmissionRequest): Promise<void> {
      const group = req.resource.upstreamGroup;
      const resource = req.resource.resource;
      if (group === '' && resource === 'namespaces') return validateNamespace(req);
      const isPod = group === '' && resource === 'pods';
      const templatePath = TEMPLATE_PATHS[`${group}/${resource}`];
      if ((!isPod && !templatePath) || !req.object) return;
      if (isPod && req.subresource !== '' && req.subresource !== 'ephemeralcontainers') return;
      if (!isPod && req.subresource) return;
      if (exemptUsers.has(req.user.name)) {
        req.annotate?.(`${annotationPrefix}exempt`, 'user');
        return;
      }
      if (exemptNamespaces.has(req.namespace)) {
        req.annotate?.(`${annotationPrefix}exempt`, 'namespace');
        return;
      }
      if (isPod) {
        if (req.operation === 'UPDATE' && req.subresource === '' && req.oldObject && !isSignificantPodUpdate(req.object, req.oldObject)) return;
        const policy = await policyOf(req.namespace);
        evaluateIn(req, policy, rec(req.object.metadata), rec(req.object.spec), true);
        return;
      }
      const tpl = template(req.object, templatePath!);
      if (!tpl) return;
      if (req.operation === 'UPDATE') {
        const old = template(req.oldObject, templatePath!);
        if (old && jsonEqual(old.spec, tpl.spec) && jsonEqual(old.meta, tpl.meta)) return;
      }
      evaluateIn(req, await policyOf(req.namespace), tpl.meta, tpl.spec, false);
    },
  };
}
