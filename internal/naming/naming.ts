// internal/naming owns every name that carries the product's domain: API group suffixes,
// the protobuf media type, the meta group, schema extension prefixes and well-known label and
// annotation prefixes. `cluster` (default) serves the spec's names, `kubernetes` the upstream
// names so stock clients work unchanged. The schema data uses upstream names; everything that
// crosses this module's boundary outward is in the configured naming.
// Imports: nothing from the project.

export type NamingMode = 'cluster' | 'kubernetes';

export interface Naming {
  readonly mode: NamingMode;
  /** `cluster.io` or `k8s.io`: the suffix of API groups and of the meta group. */
  readonly groupDomain: string;
  /** `cluster.io` or `kubernetes.io`: the prefix domain of labels and annotations. */
  readonly labelDomain: string;
  /** `application/vnd.cluster.protobuf` or `application/vnd.kubernetes.protobuf`. */
  readonly protobufMediaType: string;
  /** `meta.cluster.io` or `meta.k8s.io` (Table, PartialObjectMetadata). */
  readonly metaGroup: string;
  /** `x-cluster-` or `x-kubernetes-` (OpenAPI schema extensions). */
  readonly extensionPrefix: string;
  /** Upstream group name from the schema data → the group this server serves. */
  group(upstreamGroup: string): string;
  /** Served group name → upstream group name, or undefined when the name is not ours. */
  upstreamGroup(servedGroup: string): string | undefined;
  /** `<labelDomain>/<name>`, for example label('metadata.name'). */
  label(name: string): string;
  /** A label prefix under the label domain, for example labelPrefix('node') = `node.cluster.io/`. */
  labelPrefix(subdomain: string): string;
}

const UPSTREAM_GROUP_DOMAIN = 'k8s.io';

function mapSuffix(name: string, from: string, to: string): string {
  if (name === from) return to;
  if (name.endsWith(`.${from}`)) return `${name.slice(0, -from.length)}${to}`;
  return name;
}

export function createNaming(mode: NamingMode): Naming {
  const groupDomain = mode === 'cluster' ? 'cluster.io' : UPSTREAM_GROUP_DOMAIN;
  const labelDomain = mode === 'cluster' ? 'cluster.io' : 'kubernetes.io';
  return {
    mode,
    groupDomain,
    labelDomain,
    protobufMediaType: `application/vnd.${mode}.protobuf`,
    metaGroup: `meta.${groupDomain}`,
    extensionPrefix: `x-${mode}-`,
    group: (upstream) => mapSuffix(upstream, UPSTREAM_GROUP_DOMAIN, groupDomain),
    upstreamGroup: (served) => {
      const upstream = mapSuffix(served, groupDomain, UPSTREAM_GROUP_DOMAIN);
      // In cluster mode an upstream spelling (`*.k8s.io`) is not a served name.
      if (mode === 'cluster' && (served === UPSTREAM_GROUP_DOMAIN || served.endsWith(`.${UPSTREAM_GROUP_DOMAIN}`))) {
        return undefined;
      }
      return upstream;
    },
    label: (name) => `${labelDomain}/${name}`,
    labelPrefix: (subdomain) => `${subdomain}.${labelDomain}/`,
  };
}

export const NAMING_MODES: readonly NamingMode[] = ['cluster', 'kubernetes'];
