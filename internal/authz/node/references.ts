// internal/authz/node/references owns what a Pod or a PersistentVolume refers to, as the Node
// authorizer's graph needs it: the secrets, configmaps, claims and service account a pod bound to
// a node may make its kubelet read (upstream 1.32's podutil/pvutil visitors: every container
// kind, image pull secrets, env and envFrom, every volume plugin with a secret, projected
// sources, generic ephemeral volumes' generated claims `<pod>-<volume>`, resource claims
// named directly or through the pod's status), and the secrets a bound PersistentVolume hands
// its kubelet. Pure functions over decoded JSON. Imports: nothing from the project.

type Json = Record<string, unknown>;

const rec = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);
const arr = (v: unknown): Json[] => (Array.isArray(v) ? v.map(rec).filter((x): x is Json => x !== undefined) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface PodReferences {
  /** spec.nodeName; '' for a pod not bound to a node (which grants nothing). */
  nodeName: string;
  namespace: string;
  name: string;
  uid: string;
  secrets: string[];
  configMaps: string[];
  claims: string[];
  /** spec.serviceAccountName, '' when unset (upstream adds no edge then). */
  serviceAccount: string;
  resourceClaims: string[];
}

function containers(spec: Json): Json[] {
  return [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)];
}

function add(into: Set<string>, name: unknown): void {
  const n = str(name);
  if (n) into.add(n);
}

export function podReferences(pod: Json): PodReferences {
  const meta = rec(pod.metadata) ?? {};
  const spec = rec(pod.spec) ?? {};
  const name = str(meta.name);
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const claims = new Set<string>();
  for (const s of arr(spec.imagePullSecrets)) add(secrets, s.name);
  for (const c of containers(spec)) {
    for (const from of arr(c.envFrom)) {
      add(secrets, rec(from.secretRef)?.name);
      add(configMaps, rec(from.configMapRef)?.name);
    }
    for (const env of arr(c.env)) {
      const source = rec(env.valueFrom);
      add(secrets, rec(source?.secretKeyRef)?.name);
      add(configMaps, rec(source?.configMapKeyRef)?.name);
    }
  }
  for (const v of arr(spec.volumes)) {
    add(secrets, rec(v.secret)?.secretName);
    add(secrets, rec(v.azureFile)?.secretName);
    for (const plugin of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) add(secrets, rec(rec(v[plugin])?.secretRef)?.name);
    add(secrets, rec(rec(v.csi)?.nodePublishSecretRef)?.name);
    add(configMaps, rec(v.configMap)?.name);
    for (const source of arr(rec(v.projected)?.sources)) {
      add(secrets, rec(source.secret)?.name);
      add(configMaps, rec(source.configMap)?.name);
    }
    add(claims, rec(v.persistentVolumeClaim)?.claimName);
    if (rec(v.ephemeral) && str(v.name)) claims.add(`${name}-${str(v.name)}`);
  }
  // A claim from a template is named in the pod's status once the controller made it.
  const statuses = new Map(arr(rec(pod.status)?.resourceClaimStatuses).map((s) => [str(s.name), str(s.resourceClaimName)]));
  const resourceClaims = new Set<string>();
  for (const c of arr(spec.resourceClaims)) {
    if (str(c.resourceClaimName)) resourceClaims.add(str(c.resourceClaimName));
    else if (str(c.resourceClaimTemplateName)) add(resourceClaims, statuses.get(str(c.name)));
  }
  return {
    nodeName: str(spec.nodeName),
    namespace: str(meta.namespace),
    name,
    uid: str(meta.uid),
    secrets: [...secrets],
    configMaps: [...configMaps],
    claims: [...claims],
    serviceAccount: str(spec.serviceAccountName),
    resourceClaims: [...resourceClaims],
  };
}

export interface PvReferences {
  name: string;
  /** spec.claimRef as `<ns>/<name>`; '' when the volume is not bound (it grants nothing then). */
  claim: string;
  /** Secrets as `<ns>/<name>` the kubelet reads to mount it (controller-side CSI secrets excluded, as upstream). */
  secrets: string[];
}

export function pvReferences(pv: Json): PvReferences {
  const spec = rec(pv.spec) ?? {};
  const claimRef = rec(spec.claimRef);
  const claimNs = str(claimRef?.namespace);
  const out = new Set<string>();
  // A reference without a namespace means the claim's namespace.
  const ref = (r: Json | undefined, fallbackNs: string): void => {
    const n = str(r?.name);
    if (n) out.add(`${str(r?.namespace) || fallbackNs}/${n}`);
  };
  const azure = rec(spec.azureFile);
  if (azure && str(azure.secretName)) out.add(`${str(azure.secretNamespace) || claimNs}/${str(azure.secretName)}`);
  for (const plugin of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) ref(rec(rec(spec[plugin])?.secretRef), claimNs);
  const csi = rec(spec.csi);
  for (const field of ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef']) ref(rec(csi?.[field]), claimNs);
  return { name: str(rec(pv.metadata)?.name), claim: claimRef && str(claimRef.name) ? `${claimNs}/${str(claimRef.name)}` : '', secrets: [...out] };
}
