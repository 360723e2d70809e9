// internal/schema/lifecycle owns the release lifecycle of the built-in kinds (when a kind's
// version was introduced, deprecated and removed, and what replaces it) as upstream's
// `+k8s:prerelease-lifecycle-gen` markers give it, and the deprecation Warning text built from it
// (spec §9.2 item 6, in upstream's wording). The data is keyed by upstream group names; the
// Warning is written in the configured naming. Imports: naming (types), versions.

import type { Naming } from '../naming/naming.js';
import { stabilityOf } from './versions.js';

/** A `major.minor` release. */
export interface Release {
  readonly major: number;
  readonly minor: number;
}

/** What the markers of one kind in one group-version say (upstream group name in `replacement`). */
export interface LifecycleMarkers {
  readonly introduced?: Release;
  readonly deprecated?: Release;
  readonly removed?: Release;
  readonly replacement?: { readonly group: string; readonly version: string; readonly kind: string };
}

/** The release the committed schema data (proto/api-resources.json) describes: the server's. */
export const SCHEMA_RELEASE: Release = { major: 1, minor: 35 };

const r = (minor: number): Release => ({ major: 1, minor });

/**
 * Markers per `<upstream group>/<version>/<Kind>` for the versions the schema data serves. GA
 * kinds carry markers only where upstream deprecated them explicitly; beta kinds carry
 * `introduced` (the rest follows upstream's defaults, see resolveLifecycle); alpha kinds carry
 * no deprecation unless upstream marks one, since its generator defaults nothing for alpha.
 */
export const LIFECYCLE_MARKERS: Readonly<Record<string, LifecycleMarkers>> = {
  // GA kinds deprecated in place.
  '/v1/ComponentStatus': { deprecated: r(19) },
  '/v1/Endpoints': { deprecated: r(33), replacement: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' } },
  // Beta versions.
  'admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy': { introduced: r(34) },
  'admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicyBinding': { introduced: r(34) },
  'certificates.k8s.io/v1beta1/ClusterTrustBundle': { introduced: r(33) },
  'certificates.k8s.io/v1beta1/PodCertificateRequest': { introduced: r(35) },
  'coordination.k8s.io/v1beta1/LeaseCandidate': { introduced: r(33) },
  'networking.k8s.io/v1beta1/IPAddress': { introduced: r(31), replacement: { group: 'networking.k8s.io', version: 'v1', kind: 'IPAddress' } },
  'networking.k8s.io/v1beta1/ServiceCIDR': { introduced: r(31), replacement: { group: 'networking.k8s.io', version: 'v1', kind: 'ServiceCIDR' } },
  'resource.k8s.io/v1beta1/DeviceClass': { introduced: r(32) },
  'resource.k8s.io/v1beta1/ResourceClaim': { introduced: r(32) },
  'resource.k8s.io/v1beta1/ResourceClaimTemplate': { introduced: r(32) },
  'resource.k8s.io/v1beta1/ResourceSlice': { introduced: r(32) },
  'resource.k8s.io/v1beta2/DeviceClass': { introduced: r(33) },
  'resource.k8s.io/v1beta2/ResourceClaim': { introduced: r(33) },
  'resource.k8s.io/v1beta2/ResourceClaimTemplate': { introduced: r(33) },
  'resource.k8s.io/v1beta2/ResourceSlice': { introduced: r(33) },
  'storage.k8s.io/v1beta1/VolumeAttributesClass': { introduced: r(31), replacement: { group: 'storage.k8s.io', version: 'v1', kind: 'VolumeAttributesClass' } },
  'storagemigration.k8s.io/v1beta1/StorageVersionMigration': { introduced: r(35) },
  // Alpha versions: introduced only, never deprecated by default.
  'admissionregistration.k8s.io/v1alpha1/MutatingAdmissionPolicy': { introduced: r(32) },
  'admissionregistration.k8s.io/v1alpha1/MutatingAdmissionPolicyBinding': { introduced: r(32) },
  'certificates.k8s.io/v1alpha1/ClusterTrustBundle': { introduced: r(27) },
  'coordination.k8s.io/v1alpha2/LeaseCandidate': { introduced: r(32) },
  'internal.apiserver.k8s.io/v1alpha1/StorageVersion': { introduced: r(20) },
  'resource.k8s.io/v1alpha3/DeviceTaintRule': { introduced: r(33) },
  'scheduling.k8s.io/v1alpha1/Workload': { introduced: r(35) },
};

const plus = (rel: Release, minors: number): Release => ({ major: rel.major, minor: rel.minor + minors });
const atOrAfter = (current: Release, rel: Release): boolean => current.major > rel.major || (current.major === rel.major && current.minor >= rel.minor);

/**
 * The markers with upstream's generator defaults filled in: a beta kind is deprecated three
 * minor releases after its introduction and removed three after its deprecation, unless marked
 * otherwise; GA and alpha kinds get no defaults.
 */
export function resolveLifecycle(version: string, m: LifecycleMarkers): LifecycleMarkers {
  if (stabilityOf(version) !== 'beta' || !m.introduced) return m;
  const deprecated = m.deprecated ?? plus(m.introduced, 3);
  return { ...m, deprecated, removed: m.removed ?? plus(deprecated, 3) };
}

/**
 * Upstream's deprecation Warning: `<group/version> <Kind> is deprecated in v<X>+`, then
 * `, unavailable in v<Y>+` when a removal is planned and `; use <group/version> <Kind>` when
 * a replacement is named (groups in the configured naming).
 */
export function deprecationWarning(naming: Naming, upstreamGroup: string, version: string, kind: string, m: LifecycleMarkers): string {
  if (!m.deprecated) return '';
  const gv = (g: string, v: string) => (g ? `${naming.group(g)}/${v}` : v);
  let text = `${gv(upstreamGroup, version)} ${kind} is deprecated in v${m.deprecated.major}.${m.deprecated.minor}+`;
  if (m.removed) text += `, unavailable in v${m.removed.major}.${m.removed.minor}+`;
  if (m.replacement) text += `; use ${gv(m.replacement.group, m.replacement.version)} ${m.replacement.kind}`;
  return text;
}

/**
 * A built-in kind's deprecation in the running release: its Warning and the removed release
 * (`major.minor`, '' when none is planned), or undefined when it is not (yet) deprecated.
 */
export function builtinDeprecation(naming: Naming, upstreamGroup: string, version: string, kind: string, current: Release = SCHEMA_RELEASE): { warning: string; removedRelease: string } | undefined {
  const markers = LIFECYCLE_MARKERS[`${upstreamGroup}/${version}/${kind}`];
  if (!markers) return undefined;
  const m = resolveLifecycle(version, markers);
  if (!m.deprecated || !atOrAfter(current, m.deprecated)) return undefined;
  return { warning: deprecationWarning(naming, upstreamGroup, version, kind, m), removedRelease: m.removed ? `${m.removed.major}.${m.removed.minor}` : '' };
}
