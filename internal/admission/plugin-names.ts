// internal/admission/plugin-names owns upstream's admission plugin names: their fixed order
// (kube-apiserver's AllOrderedPlugins, 1.32), the set on by default, and the checks of
// `--enable-admission-plugins` / `--disable-admission-plugins`. Apart from plugins.ts (which
// builds the plugins) so that the flag parser, which every command loads, does not load every
// plugin and what they import (the certificate library among them).
// Imports: nothing from the project.

/** kube-apiserver 1.32's AllOrderedPlugins: the order plugins run in, whatever the flags say. */
export const ALL_ORDERED_PLUGINS = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  // Webhooks, policies, quota and deny go last, as upstream keeps them.
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
] as const;

export type PluginName = (typeof ALL_ORDERED_PLUGINS)[number];

/**
 * Upstream's default-on set (the rest are off unless enabled), plus NodeRestriction: the default
 * authorization mode here is Node,RBAC as kubeadm and k3s run it, and the Node authorizer only
 * confines a node agent to its own objects together with NodeRestriction, which those
 * distributions enable with it.
 */
export const DEFAULT_ON_PLUGINS: ReadonlySet<string> = new Set<PluginName>([
  'NamespaceLifecycle',
  'NodeRestriction',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'ValidatingAdmissionPolicy',
  'MutatingAdmissionPolicy',
]);

const KNOWN: ReadonlySet<string> = new Set(ALL_ORDERED_PLUGINS);

/** Upstream's AdmissionOptions.Validate: unknown names, and names both enabled and disabled. */
export function validateAdmissionPluginFlags(enable: readonly string[], disable: readonly string[]): string[] {
  const errs: string[] = [];
  for (const n of enable) if (!KNOWN.has(n)) errs.push(`enable-admission-plugins plugin "${n}" is unknown`);
  for (const n of disable) if (!KNOWN.has(n)) errs.push(`disable-admission-plugins plugin "${n}" is unknown`);
  const both = [...new Set(enable.filter((n) => disable.includes(n)))].sort();
  if (both.length > 0) errs.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  return errs;
}

/** The plugins that run, in upstream's order: the default set plus `enable`, minus `disable`. */
export function enabledPluginNames(enable: readonly string[], disable: readonly string[]): PluginName[] {
  return ALL_ORDERED_PLUGINS.filter((n) => !disable.includes(n) && (DEFAULT_ON_PLUGINS.has(n) || enable.includes(n)));
}
