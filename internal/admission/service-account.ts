// internal/admission/service-account owns upstream's `ServiceAccount` admission plugin (1.32):
// a pod created without a service account runs as `default`; the account must exist (403 with
// upstream's words otherwise; `default` is looked for a little longer, as the controller
// creates it just after its namespace); unless automountServiceAccountToken is false on the pod
// (which wins) or on the account, every container and init container mounts a projected
// `kube-api-access-<5>` volume (bound token, expiring after 3607 s, the root CA ConfigMap and
// the namespace) at the service-account path, except where a container mounts something there
// already; the account's imagePullSecrets are copied when the pod names none. Mirror pods are
// never changed and may reference no account, secret or token projection. An account
// annotated `<domain>/enforce-mountable-secrets: "true"` limits the secrets a pod (and its
// ephemeral containers, added later) may use to the account's. Only pod creates are changed;
// pod updates keep spec.serviceAccountName by the pod's own update validation.
// Imports: admission, apierrors, naming, registry (name generator).

import { errors } from '../apierrors/status.js';
import type { Naming } from '../naming/naming.js';
import { generateName } from '../registry/generic-registry.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export const SERVICE_ACCOUNT_PLUGIN = 'ServiceAccount';
export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** The projected volume's name prefix (upstream's ServiceAccountVolumeName). */
export const SERVICE_ACCOUNT_VOLUME = 'kube-api-access';
/** Upstream's WarnOnlyBoundTokenExpirationSeconds: one hour and seven seconds. */
export const TOKEN_EXPIRATION_SECONDS = 3607;
/** corev1.ProjectedVolumeSourceDefaultMode (0644). */
const PROJECTED_DEFAULT_MODE = 420;
/** Attempts (and the pause between them) to find `default`, which may be a moment behind its namespace. */
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

export const tokenMountPath = (naming: Naming): string => `/var/run/secrets/${naming.labelDomain}/serviceaccount`;

export interface ServiceAccountDeps {
  naming: Naming;
  /**
   * The ServiceAccount as this replica's cache holds it, else read consistently; undefined when
   * missing. SHARED and READ-ONLY: the server hands out the cache's decoded form.
   */
  getServiceAccount(namespace: string, name: string): Promise<Readonly<JsonObject> | undefined>;
  /** The CA ConfigMap's name every namespace gets (root-ca-cert-publisher). */
  rootCaConfigMap: string;
  /** Pause between lookups of `default` (ms); upstream waits 100–200 ms. */
  retryDelayMs?: () => number;
}

type Container = { name?: string; env?: JsonObject[]; envFrom?: JsonObject[]; volumeMounts?: JsonObject[] };
type PodSpec = {
  serviceAccountName?: string;
  serviceAccount?: string;
  automountServiceAccountToken?: boolean;
  volumes?: JsonObject[];
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  imagePullSecrets?: Array<{ name?: string }>;
};
type Account = { metadata?: { annotations?: Record<string, string> }; automountServiceAccountToken?: boolean; secrets?: Array<{ name?: string }>; imagePullSecrets?: Array<{ name?: string }> };

const names = (refs: Array<{ name?: string }> | undefined): Set<string> => new Set((refs ?? []).map((r) => r.name ?? ''));

/** The projected volume upstream's TokenVolumeSource describes. */
export function tokenVolume(name: string, rootCaConfigMap: string): JsonObject {
  return {
    name,
    projected: {
      defaultMode: PROJECTED_DEFAULT_MODE,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
        { configMap: { name: rootCaConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/** The pod's choice wins, then the account's; mounting is the default. */
function shouldAutomount(account: Account, spec: PodSpec): boolean {
  if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
  if (typeof account.automountServiceAccountToken === 'boolean') return account.automountServiceAccountToken;
  return true;
}

/** Adds the token volume and its mounts (upstream's mountServiceAccountToken). */
export function mountServiceAccountToken(spec: PodSpec, mountPath: string, rootCaConfigMap: string, volumeName = generateName(`${SERVICE_ACCOUNT_VOLUME}-`)): void {
  const volumes = spec.volumes ?? [];
  const existing = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(`${SERVICE_ACCOUNT_VOLUME}-`));
  const name = existing ? String(existing.name) : volumeName;
  let needsVolume = false;
  for (const list of [spec.initContainers, spec.containers]) {
    for (const c of list ?? []) {
      if ((c.volumeMounts ?? []).some((m) => m.mountPath === mountPath)) continue;
      c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath }];
      needsVolume = true;
    }
  }
  if (!existing && needsVolume) spec.volumes = [...volumes, tokenVolume(name, rootCaConfigMap)];
}

/** The secrets a pod's containers of one kind name through env and envFrom, with upstream's wording for a refused one. */
function containerSecretRefusal(kind: string, containers: Container[] | undefined, allowed: Set<string>, account: string): string | undefined {
  for (const c of containers ?? []) {
    for (const e of c.env ?? []) {
      const ref = ((e.valueFrom as JsonObject | undefined)?.secretKeyRef as { name?: string } | undefined)?.name;
      if (ref !== undefined && !allowed.has(ref)) {
        return `${kind} ${c.name ?? ''} with envVar ${String(e.name ?? '')} referencing secret.secretName="${ref}" is not allowed because service account ${account} does not reference that secret`;
      }
    }
    for (const e of c.envFrom ?? []) {
      const ref = (e.secretRef as { name?: string } | undefined)?.name;
      if (ref !== undefined && !allowed.has(ref)) {
        return `${kind} ${c.name ?? ''} with envFrom referencing secret.secretName="${ref}" is not allowed because service account ${account} does not reference that secret`;
      }
    }
  }
  return undefined;
}

/** upstream's limitSecretReferences: what a pod may use when the account enforces mountable secrets. */
function secretRefusal(spec: PodSpec, account: Account, accountName: string): string | undefined {
  const allowed = names(account.secrets);
  for (const v of spec.volumes ?? []) {
    const secretName = (v.secret as { secretName?: string } | undefined)?.secretName;
    if (secretName !== undefined && !allowed.has(secretName)) {
      return `volume with secret.secretName="${secretName}" is not allowed because service account ${accountName} does not reference that secret`;
    }
  }
  const refused = containerSecretRefusal('init container', spec.initContainers, allowed, accountName) ?? containerSecretRefusal('container', spec.containers, allowed, accountName);
  if (refused) return refused;
  const pullAllowed = names(account.imagePullSecrets);
  const pulls = spec.imagePullSecrets ?? [];
  for (let i = 0; i < pulls.length; i++) {
    const n = pulls[i]!.name ?? '';
    if (!pullAllowed.has(n)) return `imagePullSecrets[${i}].name="${n}" is not allowed because service account ${accountName} does not reference that imagePullSecret`;
  }
  return undefined;
}

/** Whether a pod references a secret anywhere (volumes, projections, env, envFrom, pull secrets). */
function referencesSecrets(spec: PodSpec): boolean {
  if ((spec.imagePullSecrets ?? []).length > 0) return true;
  for (const v of spec.volumes ?? []) {
    if (v.secret !== undefined) return true;
    const sources = ((v.projected as JsonObject | undefined)?.sources ?? []) as JsonObject[];
    if (sources.some((s) => s.secret !== undefined)) return true;
    // Volume plugins whose credentials are secrets.
    for (const plugin of Object.values(v)) {
      if (plugin && typeof plugin === 'object' && ('secretRef' in plugin || 'nodePublishSecretRef' in plugin)) return true;
    }
  }
  for (const list of [spec.initContainers, spec.containers, spec.ephemeralContainers]) {
    for (const c of list ?? []) {
      if ((c.envFrom ?? []).some((e) => e.secretRef !== undefined)) return true;
      if ((c.env ?? []).some((e) => (e.valueFrom as JsonObject | undefined)?.secretKeyRef !== undefined)) return true;
    }
  }
  return false;
}

export function serviceAccountPlugin(deps: ServiceAccountDeps): AdmissionPlugin {
  const mountPath = tokenMountPath(deps.naming);
  const mirrorAnnotation = deps.naming.label('config.mirror');
  const enforceAnnotation = deps.naming.label('enforce-mountable-secrets');
  const delay = deps.retryDelayMs ?? (() => 100 + Math.floor(Math.random() * 100));
  const applies = (req: AdmissionRequest) =>
    req.resource.group === '' && req.resource.resource === 'pods' && (req.subresource === '' || req.subresource === 'ephemeralcontainers') && req.object !== undefined;
  const forbid = (req: AdmissionRequest, message: string) => errors.forbidden({ group: '', name: 'pods' }, req.name || undefined, message);
  const isMirror = (obj: JsonObject) => mirrorAnnotation in (((obj.metadata as JsonObject | undefined)?.annotations ?? {}) as Record<string, string>);

  async function account(req: AdmissionRequest, name: string): Promise<Account> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, delay()));
      const sa = await deps.getServiceAccount(req.namespace, name);
      if (sa) return sa as Account;
    }
    throw forbid(req, `error looking up service account ${req.namespace}/${name}: serviceaccount "${name}" not found`);
  }
  const enforces = (sa: Account) => sa.metadata?.annotations?.[enforceAnnotation] === 'true';

  return {
    name: SERVICE_ACCOUNT_PLUGIN,
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async admit(req) {
      if (!applies(req) || req.operation !== 'CREATE' || req.subresource !== '') return;
      const obj = req.object!;
      // A mirror pod's spec is the node's static pod: changing it would make the node delete it.
      if (isMirror(obj)) return;
      const spec = (obj.spec ??= {}) as PodSpec;
      if (!spec.serviceAccountName) spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT;
      // The deprecated alias follows the name, as the pod's defaulting keeps them equal.
      spec.serviceAccount = spec.serviceAccountName;
      const sa = await account(req, spec.serviceAccountName);
      if (shouldAutomount(sa, spec)) mountServiceAccountToken(spec, mountPath, deps.rootCaConfigMap);
      if ((spec.imagePullSecrets ?? []).length === 0 && (sa.imagePullSecrets ?? []).length > 0) {
        spec.imagePullSecrets = sa.imagePullSecrets!.map((s) => ({ name: s.name ?? '' }));
      }
    },
    async validate(req) {
      if (!applies(req)) return;
      const obj = req.object!;
      const spec = (obj.spec ?? {}) as PodSpec;
      const podName = String((obj.metadata as JsonObject | undefined)?.name ?? req.name);
      if (req.operation === 'UPDATE') {
        if (req.subresource !== 'ephemeralcontainers') return;
        if (!spec.serviceAccountName) throw forbid(req, `no service account specified for pod ${req.namespace}/${podName}`);
        const sa = await account(req, spec.serviceAccountName);
        if (!enforces(sa)) return;
        const refused = containerSecretRefusal('container', spec.ephemeralContainers, names(sa.secrets), spec.serviceAccountName);
        if (refused) throw forbid(req, refused);
        return;
      }
      if (req.subresource !== '') return;
      if (isMirror(obj)) {
        if (spec.serviceAccountName) throw forbid(req, 'a mirror pod may not reference service accounts');
        if (referencesSecrets(spec)) throw forbid(req, 'a mirror pod may not reference secrets');
        for (const v of spec.volumes ?? []) {
          const sources = ((v.projected as JsonObject | undefined)?.sources ?? []) as JsonObject[];
          if (sources.some((s) => s.serviceAccountToken !== undefined)) throw forbid(req, 'a mirror pod may not use ServiceAccountToken volume projections');
        }
        return;
      }
      if (!spec.serviceAccountName) throw forbid(req, `no service account specified for pod ${req.namespace}/${podName}`);
      const sa = await account(req, spec.serviceAccountName);
      if (enforces(sa)) {
        const refused = secretRefusal(spec, sa, spec.serviceAccountName);
        if (refused) throw forbid(req, refused);
      }
    },
  };
}
