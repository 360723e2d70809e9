// internal/controllers/selection owns --controllers: the names of the selectable controllers
// (upstream 1.32's `<name>-controller` names and their older short aliases), which are off by
// default, and upstream's rule: the first entry naming a controller (`name` or `-name`)
// decides, else `*` turns on the default ones, else it is off.
// Imports: nothing from the project.

export type ControllerName =
  | 'namespace-controller'
  | 'serviceaccount-controller'
  | 'serviceaccount-token-controller'
  | 'root-ca-certificate-publisher-controller'
  | 'bootstrap-signer-controller'
  | 'token-cleaner-controller'
  | 'clusterrole-aggregation-controller'
  | 'legacy-serviceaccount-token-cleaner-controller'
  | 'garbage-collector-controller'
  | 'disruption-controller'
  | 'certificatesigningrequest-signing-controller'
  | 'validatingadmissionpolicy-status-controller'
  | 'resourcequota-controller'
  | 'node-lifecycle-controller'
  | 'persistentvolumeclaim-protection-controller'
  | 'persistentvolume-protection-controller';

const ALIASES: Readonly<Record<ControllerName, string>> = {
  'namespace-controller': 'namespace',
  'serviceaccount-controller': 'serviceaccount',
  'serviceaccount-token-controller': 'serviceaccount-token',
  'root-ca-certificate-publisher-controller': 'root-ca-cert-publisher',
  'bootstrap-signer-controller': 'bootstrapsigner',
  'token-cleaner-controller': 'tokencleaner',
  'clusterrole-aggregation-controller': 'clusterrole-aggregation',
  'legacy-serviceaccount-token-cleaner-controller': 'legacy-serviceaccount-token-cleaner',
  'garbage-collector-controller': 'garbagecollector',
  'disruption-controller': 'disruption',
  'certificatesigningrequest-signing-controller': 'csrsigning',
  'validatingadmissionpolicy-status-controller': 'validatingadmissionpolicy-status',
  'resourcequota-controller': 'resourcequota',
  'node-lifecycle-controller': 'nodelifecycle',
  'persistentvolumeclaim-protection-controller': 'pvc-protection',
  'persistentvolume-protection-controller': 'pv-protection',
};

const OFF_BY_DEFAULT = new Set<ControllerName>(['bootstrap-signer-controller', 'token-cleaner-controller']);

export const CONTROLLER_NAMES = Object.keys(ALIASES) as ControllerName[];

function canonical(name: string): ControllerName | undefined {
  if ((CONTROLLER_NAMES as string[]).includes(name)) return name as ControllerName;
  return CONTROLLER_NAMES.find((c) => ALIASES[c] === name);
}

/** Throws for an entry that names no known controller. */
export function validateControllers(entries: readonly string[]): void {
  for (const e of entries) {
    if (e === '*') continue;
    const name = e.startsWith('-') ? e.slice(1) : e;
    if (!canonical(name)) {
      throw new Error(`"${name}" is not in the list of known controllers: ${CONTROLLER_NAMES.map((c) => `${c} (${ALIASES[c]})`).join(', ')}`);
    }
  }
}

export function controllerEnabled(name: ControllerName, entries: readonly string[]): boolean {
  let star = false;
  for (const e of entries) {
    if (e === '*') star = true;
    else if (e.startsWith('-') && canonical(e.slice(1)) === name) return false;
    else if (canonical(e) === name) return true;
  }
  return star && !OFF_BY_DEFAULT.has(name);
}
