// internal/defaults/pod-spec owns upstream's defaults for pod specs wherever they appear (pods,
// pod templates of every workload, job templates): restart and DNS policy, grace period,
// scheduler, security context; per container the pull policy, termination message settings,
// probes and HTTP handlers; volumes' modes and sources; downward-API field selectors; PVC
// templates. Pod-only defaults (service links, requests from limits, host-network ports) are
// applied by defaultPod, as upstream does them on Pod objects and not on templates.
// Mutates in place; idempotent.
// Imports: validation (plain-json).

import { arrayAt, isBlank, isObject, objectAt, objectsIn, type JsonObject } from '../validation/plain-json.js';

const setIfAbsent = (obj: JsonObject, key: string, value: unknown): void => {
  if (isBlank(obj[key])) obj[key] = value;
};


/**
 * Upstream's image reference parsing for the pull policy: a reference without tag and digest
 * means `:latest`; only `:latest` pulls Always.
 */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const lastSlash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > lastSlash ? name.slice(colon + 1) : '';
  if (tag) return tag;
  return at >= 0 ? '' : 'latest';
}

export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  return imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHttpGet(handler: unknown): void {
  const get = objectAt(handler, 'httpGet');
  if (!get) return;
  setIfAbsent(get, 'path', '/');
  setIfAbsent(get, 'scheme', 'HTTP');
}

function defaultProbe(probe: unknown): void {
  if (!isObject(probe)) return;
  for (const [key, value] of [
    ['timeoutSeconds', 1],
    ['periodSeconds', 10],
    ['successThreshold', 1],
    ['failureThreshold', 3],
  ] as const) {
    if (probe[key] === undefined || probe[key] === null || probe[key] === 0) probe[key] = value;
  }
  defaultHttpGet(probe);
}

function defaultFieldRef(holder: unknown): void {
  const ref = objectAt(holder, 'fieldRef');
  if (ref) setIfAbsent(ref, 'apiVersion', 'v1');
}

export function defaultContainer(c: JsonObject): void {
  if (isBlank(c.imagePullPolicy)) {
    c.imagePullPolicy = defaultPullPolicy(typeof c.image === 'string' ? c.image : '');
  }
  setIfAbsent(c, 'terminationMessagePath', '/dev/termination-log');
  setIfAbsent(c, 'terminationMessagePolicy', 'File');
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(c[probe]);
  const lifecycle = objectAt(c, 'lifecycle');
  if (lifecycle) for (const hook of ['postStart', 'preStop']) defaultHttpGet(lifecycle[hook]);
  for (const env of objectsIn(arrayAt(c, 'env'))) defaultFieldRef(env.valueFrom);
}

/** PersistentVolumeClaim spec: volumeMode Filesystem. */
export function defaultPvcSpec(spec: unknown): void {
  if (isObject(spec)) setIfAbsent(spec, 'volumeMode', 'Filesystem');
}

const DEFAULT_MODE = 0o644;

function defaultVolume(v: JsonObject): void {
  const sourceKeys = Object.keys(v).filter((k) => k !== 'name' && v[k] !== null && v[k] !== undefined);
  if (sourceKeys.length === 0) v.emptyDir = {};
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = objectAt(v, key);
    if (source) setIfAbsent(source, 'defaultMode', DEFAULT_MODE);
  }
  for (const item of objectsIn(arrayAt(objectAt(v, 'downwardAPI'), 'items'))) defaultFieldRef(item);
  for (const source of objectsIn(arrayAt(objectAt(v, 'projected'), 'sources'))) {
    const token = objectAt(source, 'serviceAccountToken');
    if (token) setIfAbsent(token, 'expirationSeconds', 3600);
    for (const item of objectsIn(arrayAt(objectAt(source, 'downwardAPI'), 'items'))) defaultFieldRef(item);
  }
  const hostPath = objectAt(v, 'hostPath');
  if (hostPath && (hostPath.type === undefined || hostPath.type === null)) hostPath.type = '';
  const claimTemplate = objectAt(objectAt(v, 'ephemeral'), 'volumeClaimTemplate');
  if (claimTemplate) defaultPvcSpec(claimTemplate.spec);
}

/** Defaults of a PodSpec, as upstream applies them to pods and to every pod template. */
/**
 * `serviceAccount` is the deprecated alias of `serviceAccountName`; upstream keeps one field and
 * serves both, so they are always equal: the alias alone names the account, the name wins when
 * both are set. Without this, a client that sends back its manifest without the alias (kubectl
 * replace, an unconditional PUT) would be told it changed the pod's account.
 */
function syncServiceAccountAlias(spec: JsonObject): void {
  const named = (v: unknown): v is string => typeof v === 'string' && v !== '';
  if (!named(spec.serviceAccountName) && named(spec.serviceAccount)) spec.serviceAccountName = spec.serviceAccount;
  if (named(spec.serviceAccountName)) spec.serviceAccount = spec.serviceAccountName;
  else delete spec.serviceAccount;
}

export function defaultPodSpec(spec: unknown): void {
  if (!isObject(spec)) return;
  setIfAbsent(spec, 'dnsPolicy', 'ClusterFirst');
  setIfAbsent(spec, 'restartPolicy', 'Always');
  if (!isObject(spec.securityContext)) spec.securityContext = {};
  if (typeof spec.terminationGracePeriodSeconds !== 'number') spec.terminationGracePeriodSeconds = 30;
  setIfAbsent(spec, 'schedulerName', 'default-scheduler');
  syncServiceAccountAlias(spec);
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const c of objectsIn(arrayAt(spec, key))) defaultContainer(c);
  }
  for (const v of objectsIn(arrayAt(spec, 'volumes'))) defaultVolume(v);
}

/** Defaults of a PodTemplateSpec (`{metadata, spec}`). */
export function defaultPodTemplateSpec(template: unknown): void {
  defaultPodSpec(objectAt(template, 'spec'));
}

function requestsFromLimits(container: JsonObject): void {
  const resources = objectAt(container, 'resources');
  const limits = objectAt(resources, 'limits');
  if (!resources || !limits) return;
  const requests = objectAt(resources, 'requests') ?? (resources.requests = {} as JsonObject);
  for (const [name, value] of Object.entries(limits)) if ((requests as JsonObject)[name] === undefined) (requests as JsonObject)[name] = value;
}

/** Defaults of a Pod object: the PodSpec ones plus upstream's pod-only ones. */
export function defaultPod(pod: JsonObject): void {
  const spec = objectAt(pod, 'spec');
  if (!spec) return;
  for (const key of ['containers', 'initContainers']) for (const c of objectsIn(arrayAt(spec, key))) requestsFromLimits(c);
  if (typeof spec.enableServiceLinks !== 'boolean') spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    for (const key of ['containers', 'initContainers']) {
      for (const c of objectsIn(arrayAt(spec, key))) {
        for (const port of objectsIn(arrayAt(c, 'ports'))) {
          if (!port.hostPort && typeof port.containerPort === 'number') port.hostPort = port.containerPort;
        }
      }
    }
  }
  defaultPodSpec(spec);
}
