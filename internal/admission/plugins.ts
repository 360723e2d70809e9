// internal/admission/plugins owns building the admission plugins in upstream's order (the names,
// order, default set and flag checks are plugin-names.ts's) and the registry of plugin name →
// factory. A plugin is built here by adding
// one entry to FACTORIES; names without a factory are accepted (upstream has them) and logged
// once as not implemented when enabled. The order of the flags never matters: upstream's does.
// Imports: admission, the plugin modules, webhook/dispatcher, apierrors, log, naming (types).

import { errors } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import type { AdmissionPlugin } from './admission.js';
import { namespaceLifecycle, type NamespaceLookup } from './namespace-lifecycle.js';
import { nodeRestriction, type NodeRestrictionDeps } from './node-restriction.js';
import { priorityPlugin, type PriorityClassInfo } from './priority.js';
import { defaultTolerationSeconds } from './default-toleration-seconds.js';
import { serviceAccountPlugin, type ServiceAccountDeps } from './service-account.js';
import { limitRanger, type LimitRangeLookup } from './limit-ranger.js';
import { resourceQuotaPlugin, type QuotaStore } from './resource-quota.js';
import { podSecurity, type PodSecurityDeps } from './pod-security/plugin.js';
import { defaultStorageClassPlugin, storageObjectInUseProtection, type StorageClassInfo } from './storage.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction, type Authorize } from './certificates.js';
import { taintNodesByCondition } from './taint-nodes-by-condition.js';
import type { WebhookDispatcher } from './webhook/dispatcher.js';

export { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS, enabledPluginNames, validateAdmissionPluginFlags, type PluginName } from './plugin-names.js';
import { ALL_ORDERED_PLUGINS, type PluginName } from './plugin-names.js';


/**
 * What the plugins need from the server that builds them. Helpers adding a plugin add the
 * fields it needs here (and set them where server.ts builds the chain).
 */
export interface AdmissionPluginDeps {
  log: Logger;
  naming: Naming;
  /** Namespace existence and termination as this replica's cache has it. */
  namespaceLookup: NamespaceLookup;
  /** Namespaces that may never be deleted. */
  immortalNamespaces: readonly string[];
  nodeRestriction: NodeRestrictionDeps;
  /** The stored PriorityClasses (Priority). */
  priorityClasses: () => PriorityClassInfo[];
  /** --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds. */
  defaultTolerationSeconds: { notReady: number; unreachable: number };
  /** The webhook configurations followed from the watch cache (both webhook plugins share it). */
  webhooks: WebhookDispatcher;
  /** The ValidatingAdmissionPolicy plugin (policy/validating-policy), built by the server, which serves its metrics. */
  validatingPolicies: AdmissionPlugin;
  /** ServiceAccount: the accounts (cache, then a consistent read) and the root CA ConfigMap's name. */
  serviceAccounts: Pick<ServiceAccountDeps, 'getServiceAccount' | 'rootCaConfigMap'>;
  /** LimitRanger: a namespace's LimitRanges as the cache holds them. */
  limitRanges: LimitRangeLookup;
  /** ResourceQuota: the quotas and the CAS of their status. */
  quotas: QuotaStore;
  /** PodSecurity: its configuration and what it reads (namespace labels, a namespace's pods). */
  podSecurity: Omit<PodSecurityDeps, 'naming'>;
  /** The stored StorageClasses (DefaultStorageClass). */
  storageClasses: () => StorageClassInfo[];
  /** The authorizer chain in force (CertificateApproval, CertificateSigning). */
  authorize: Authorize;
  /** The MutatingAdmissionPolicy plugin (policy/mutating-policy); absent while its feature gate is off. */
  mutatingPolicies?: AdmissionPlugin;
}

export type PluginFactory = (deps: AdmissionPluginDeps) => AdmissionPlugin;

/** The plugins built here; every other name of ALL_ORDERED_PLUGINS is accepted but not implemented. */
export const FACTORIES: Partial<Record<PluginName, PluginFactory>> = {
  AlwaysAdmit: () => ({ name: 'AlwaysAdmit', handles: () => true }),
  NamespaceLifecycle: (d) => namespaceLifecycle(d.namespaceLookup, d.immortalNamespaces),
  NamespaceExists: (d) => ({
    name: 'NamespaceExists',
    handles: (op) => op !== 'DELETE',
    async validate(req) {
      if (!req.resource.namespaced || !req.namespace || (req.resource.group === '' && req.resource.resource === 'namespaces')) return;
      if (!(await d.namespaceLookup(req.namespace)).exists) throw errors.notFound({ group: '', name: 'namespaces' }, req.namespace);
    },
  }),
  NodeRestriction: (d) => nodeRestriction(d.nodeRestriction),
  ServiceAccount: (d) => serviceAccountPlugin({ naming: d.naming, ...d.serviceAccounts }),
  LimitRanger: (d) => limitRanger(d.naming, d.limitRanges),
  ResourceQuota: (d) => resourceQuotaPlugin(d.quotas),
  TaintNodesByCondition: (d) => taintNodesByCondition(d.naming),
  PodSecurity: (d) => podSecurity({ naming: d.naming, ...d.podSecurity }),
  Priority: (d) => priorityPlugin(d.priorityClasses),
  DefaultTolerationSeconds: (d) => defaultTolerationSeconds(d.naming, d.defaultTolerationSeconds),
  DefaultStorageClass: (d) => defaultStorageClassPlugin(d.naming, d.storageClasses),
  StorageObjectInUseProtection: (d) => storageObjectInUseProtection(d.naming),
  CertificateApproval: (d) => certificateApproval(d.naming, d.authorize),
  CertificateSigning: (d) => certificateSigning(d.naming, d.authorize),
  CertificateSubjectRestriction: (d) => certificateSubjectRestriction(d.naming),
  // With the gate off it is enabled but inert, as upstream's.
  MutatingAdmissionPolicy: (d) => d.mutatingPolicies ?? { name: 'MutatingAdmissionPolicy', handles: () => false },
  MutatingAdmissionWebhook: (d) => d.webhooks.mutatingPlugin(),
  ValidatingAdmissionPolicy: (d) => d.validatingPolicies,
  ValidatingAdmissionWebhook: (d) => d.webhooks.validatingPlugin(),
  AlwaysDeny: () => ({
    name: 'AlwaysDeny',
    handles: () => true,
    admit(req) {
      throw errors.forbidden({ group: req.resource.group, name: req.resource.resource }, req.name || undefined, 'admission control is denying all modifications');
    },
  }),
};

/** Where upstream's registries do their own checks: after the mutating webhooks, before the validating policies. */
const STORAGE_STEPS_BEFORE: ReadonlySet<string> = new Set<PluginName>(['ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny']);

/**
 * Builds the enabled plugins in order, with `storageSteps` (what upstream's registries do
 * between mutating and validating admission, such as Service IP allocation and the RBAC
 * escalation check: never turned off) placed after the mutating webhooks. Enabled names without
 * a factory are logged once: at warn when `--enable-admission-plugins` asked for them, else
 * (upstream's defaults) at info.
 */
export function buildPlugins(
  names: readonly PluginName[],
  deps: AdmissionPluginDeps,
  explicitlyEnabled: readonly string[] = [],
  storageSteps: readonly AdmissionPlugin[] = [],
  factories: Partial<Record<PluginName, PluginFactory>> = FACTORIES,
): AdmissionPlugin[] {
  const plugins: AdmissionPlugin[] = [];
  const missing: string[] = [];
  let stepsPlaced = false;
  for (const name of names) {
    if (!stepsPlaced && STORAGE_STEPS_BEFORE.has(name)) {
      plugins.push(...storageSteps);
      stepsPlaced = true;
    }
    const factory = factories[name];
    if (factory) plugins.push(factory(deps));
    else missing.push(name);
  }
  if (!stepsPlaced) plugins.push(...storageSteps);
  const asked = missing.filter((n) => explicitlyEnabled.includes(n));
  const defaults = missing.filter((n) => !explicitlyEnabled.includes(n));
  const message = 'admission plugins enabled but not implemented by this server: they admit everything';
  if (asked.length > 0) deps.log.warn(message, { plugins: asked });
  if (defaults.length > 0) deps.log.info(message, { plugins: defaults });
  return plugins;
}
