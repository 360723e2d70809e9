// internal/admission/pod-security/policy owns where a namespace's Pod Security policy comes
// from, as upstream 1.32: the `pod-security.<label domain>/{enforce,audit,warn}[-version]`
// namespace labels over the configured defaults; an unparsable enforce level fails closed
// (restricted), unparsable audit/warn levels fail open (privileged), an unparsable version means
// latest, and warn follows an explicitly set, stricter enforce level when it is not set itself.
// It also owns the PodSecurityConfiguration (defaults and exemptions) read from the admission
// configuration file. Imports: apierrors (field errors), naming, checks.

import type { FieldError } from '../../apierrors/field-errors.js';
import type { Naming } from '../../naming/naming.js';
import { LATEST_MINOR, type Level, type LevelVersion, type Version } from './checks.js';

export interface NamespacePolicy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export interface PodSecurityConfig {
  defaults: NamespacePolicy;
  exemptions: { usernames: string[]; runtimeClasses: string[]; namespaces: string[] };
}

const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', version: 'latest' };
export const DEFAULT_POD_SECURITY_CONFIG: PodSecurityConfig = {
  defaults: { enforce: PRIVILEGED_LATEST, audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST },
  exemptions: { usernames: [], runtimeClasses: [], namespaces: [] },
};

const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];
export const levelRank = (l: Level): number => LEVELS.indexOf(l);

export function parseLevel(v: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(v) ? (v as Level) : undefined;
}

/** `latest` or `v1.<minor>`; a minor newer than this server's is latest. */
export function parseVersion(v: string): Version | undefined {
  if (v === 'latest') return 'latest';
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(v);
  if (!m) return undefined;
  const minor = Number(m[1]);
  return minor > LATEST_MINOR ? 'latest' : minor;
}

const LEVEL_ERROR = 'must be one of privileged, baseline, restricted';
const VERSION_ERROR = 'must be "latest" or "v1.x"';

/** The policy the labels give over `defaults`, and the label errors (each as a field error). */
export function policyFromLabels(naming: Naming, labels: Readonly<Record<string, string>>, defaults: NamespacePolicy): { policy: NamespacePolicy; errors: FieldError[] } {
  const prefix = naming.labelPrefix('pod-security');
  const policy: NamespacePolicy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  const bad = (key: string, value: string, detail: string) => errors.push({ type: 'FieldValueInvalid', field: `metadata.labels[${key}]`, value, detail });
  for (const mode of ['enforce', 'audit', 'warn'] as const) {
    const levelKey = `${prefix}${mode}`;
    const versionKey = `${prefix}${mode}-version`;
    if (levelKey in labels) {
      const l = parseLevel(labels[levelKey]!);
      if (l === undefined) bad(levelKey, labels[levelKey]!, LEVEL_ERROR);
      policy[mode].level = l ?? (mode === 'enforce' ? 'restricted' : 'privileged');
    }
    if (versionKey in labels) {
      const v = parseVersion(labels[versionKey]!);
      if (v === undefined) bad(versionKey, labels[versionKey]!, VERSION_ERROR);
      policy[mode].version = v ?? 'latest';
    }
  }
  const enforceKey = `${prefix}enforce`;
  if (!(`${prefix}warn` in labels) && enforceKey in labels && levelRank(policy.enforce.level) > levelRank(policy.warn.level)) {
    policy.warn.level = policy.enforce.level;
    if (!(`${prefix}warn-version` in labels)) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}

const strings = (v: unknown, what: string): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`${what} must be a list of strings`);
  return v as string[];
};

/**
 * A PodSecurityConfiguration (pod-security.admission.config.<group domain>/v1, v1beta1 or
 * v1alpha1) as decoded from the admission configuration file; throws with the field at fault.
 */
export function parsePodSecurityConfiguration(naming: Naming, doc: unknown): PodSecurityConfig {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('PodSecurity configuration must be an object');
  const o = doc as Record<string, unknown>;
  const group = naming.group('pod-security.admission.config.k8s.io');
  const versions = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${group}/${v}`);
  if (o.apiVersion !== undefined && !versions.includes(String(o.apiVersion))) throw new Error(`PodSecurity configuration apiVersion must be one of ${versions.join(', ')}, not ${JSON.stringify(o.apiVersion)}`);
  if (o.kind !== undefined && o.kind !== 'PodSecurityConfiguration') throw new Error(`PodSecurity configuration kind must be PodSecurityConfiguration, not ${JSON.stringify(o.kind)}`);
  const d = (o.defaults ?? {}) as Record<string, unknown>;
  const defaults: NamespacePolicy = { enforce: { ...PRIVILEGED_LATEST }, audit: { ...PRIVILEGED_LATEST }, warn: { ...PRIVILEGED_LATEST } };
  for (const mode of ['enforce', 'audit', 'warn'] as const) {
    const level = d[mode];
    if (level !== undefined) {
      const l = parseLevel(String(level));
      if (!l) throw new Error(`defaults.${mode}: Invalid value: ${JSON.stringify(level)}: ${LEVEL_ERROR}`);
      defaults[mode].level = l;
    }
    const version = d[`${mode}-version`];
    if (version !== undefined) {
      const v = parseVersion(String(version));
      if (v === undefined) throw new Error(`defaults.${mode}-version: Invalid value: ${JSON.stringify(version)}: ${VERSION_ERROR}`);
      defaults[mode].version = v;
    }
  }
  const e = (o.exemptions ?? {}) as Record<string, unknown>;
  return {
    defaults,
    exemptions: {
      usernames: strings(e.usernames, 'exemptions.usernames'),
      runtimeClasses: strings(e.runtimeClasses, 'exemptions.runtimeClasses'),
      namespaces: strings(e.namespaces, 'exemptions.namespaces'),
    },
  };
}
