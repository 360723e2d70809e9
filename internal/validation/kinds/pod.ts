// internal/validation/kinds/pod owns the pod spec rules users rely on, for Pods and every pod
// template: containers with names and images, unique container names across init, regular and
// ephemeral containers, ports, environment, resources (valid names, requests ≤ limits), volume
// mounts referring to volumes, probes, policies with their allowed values, volumes with exactly
// one source, tolerations; and Pod update rules (only images, deadlines, tolerations and gates
// may change).
// Imports: apierrors (FieldError), validation helpers (name-rules, object-meta, plain-json,
// quantity), kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import {
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isLabelValue,
  isQualifiedName,
  isValidIP,
  isValidPortName,
  isValidPortNum,
} from '../name-rules.js';
import { validateAnnotations, validateLabels } from '../object-meta.js';
import { arrayAt, isObject, jsonEqual, type JsonObject } from '../plain-json.js';
import { compareQuantities, formatQuantity, parseQuantity } from '../quantity.js';
import { list, obj, str, type KindValidator } from './common.js';
import type { Naming } from '../../naming/naming.js';

const child = fieldPath.child;
const index = fieldPath.index;

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const MESSAGE_POLICIES = ['FallbackToLogsOnError', 'File'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TOLERATION_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
// Upstream's order: with several sources, the later ones in this order are reported.
const VOLUME_SOURCES = [
  'emptyDir', 'hostPath', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi', 'glusterfs', 'flocker',
  'persistentVolumeClaim', 'rbd', 'cinder', 'cephfs', 'quobyte', 'downwardAPI', 'fc', 'flexVolume', 'configMap', 'azureFile',
  'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos', 'projected', 'scaleIO', 'csi', 'ephemeral',
  'image',
];
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const MAX_INT32 = 2147483647;

export interface PodSpecOptions {
  /** Pod templates (workloads, jobs): ephemeral containers are not allowed. */
  readonly template: boolean;
  /**
   * Volume names the owner adds to each pod it makes (a StatefulSet's volumeClaimTemplates):
   * mounts and devices may name them although the template's volumes do not.
   */
  readonly ownerVolumes?: readonly string[];
}

type ContainerKind = 'init' | 'regular' | 'ephemeral';

function validateContainerPort(value: unknown, path: string): FieldError[] {
  if (typeof value === 'number') return isValidPortNum(value).map((m) => fieldErrors.invalid(path, value, m));
  if (typeof value === 'string') return isValidPortName(value).map((m) => fieldErrors.invalid(path, value, m));
  return [];
}

function validatePorts(ports: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    if (!isObject(port)) return;
    const p = index(path, i);
    const name = str(port, 'name');
    if (name) {
      const msgs = isValidPortName(name);
      for (const m of msgs) errs.push(fieldErrors.invalid(child(p, 'name'), name, m));
      if (msgs.length === 0) {
        if (names.has(name)) errs.push(fieldErrors.duplicate(child(p, 'name'), name));
        names.add(name);
      }
    }
    const containerPort = port.containerPort;
    if (containerPort === 0 || containerPort === undefined || containerPort === null) errs.push(fieldErrors.required(child(p, 'containerPort'), ''));
    else if (typeof containerPort === 'number') for (const m of isValidPortNum(containerPort)) errs.push(fieldErrors.invalid(child(p, 'containerPort'), containerPort, m));
    if (typeof port.hostPort === 'number' && port.hostPort !== 0) {
      for (const m of isValidPortNum(port.hostPort)) errs.push(fieldErrors.invalid(child(p, 'hostPort'), port.hostPort, m));
    }
    const protocol = str(port, 'protocol');
    if (!protocol) errs.push(fieldErrors.required(child(p, 'protocol'), ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(fieldErrors.notSupported(child(p, 'protocol'), protocol, PROTOCOLS));
  });
  return errs;
}

function validateEnv(env: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  env.forEach((e, i) => {
    if (!isObject(e)) return;
    const p = index(path, i);
    const name = str(e, 'name');
    if (!name) errs.push(fieldErrors.required(child(p, 'name'), ''));
    else for (const m of isEnvVarName(name)) errs.push(fieldErrors.invalid(child(p, 'name'), name, m));
    const valueFrom = obj(e, 'valueFrom');
    if (!valueFrom) return;
    const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'].filter((k) => isObject(valueFrom[k]));
    if (sources.length === 0) {
      errs.push(fieldErrors.invalid(child(p, 'valueFrom'), '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    } else if (sources.length > 1) {
      errs.push(fieldErrors.invalid(child(p, 'valueFrom'), '', 'may not have more than one field specified at a time'));
    }
    if (str(e, 'value') !== '') errs.push(fieldErrors.invalid(child(p, 'valueFrom'), '', 'may not be specified when `value` is not empty'));
    for (const ref of ['configMapKeyRef', 'secretKeyRef']) {
      const r = obj(valueFrom, ref);
      if (!r) continue;
      const rp = child(child(p, 'valueFrom'), ref);
      const key = str(r, 'key');
      if (!key) errs.push(fieldErrors.required(child(rp, 'key'), ''));
      else for (const m of isConfigMapKey(key)) errs.push(fieldErrors.invalid(child(rp, 'key'), key, m));
      if (!str(r, 'name')) errs.push(fieldErrors.required(child(rp, 'name'), ''));
    }
    const fieldRef = obj(valueFrom, 'fieldRef');
    if (fieldRef && !str(fieldRef, 'fieldPath')) errs.push(fieldErrors.required(child(child(child(p, 'valueFrom'), 'fieldRef'), 'fieldPath'), ''));
  });
  return errs;
}

function validateEnvFrom(envFrom: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  envFrom.forEach((e, i) => {
    if (!isObject(e)) return;
    const p = index(path, i);
    const prefix = str(e, 'prefix');
    if (prefix) for (const m of isEnvVarName(prefix)) errs.push(fieldErrors.invalid(child(p, 'prefix'), prefix, m));
    const sources = ['configMapRef', 'secretRef'].filter((k) => isObject(e[k]));
    if (sources.length === 0) errs.push(fieldErrors.invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources.length > 1) errs.push(fieldErrors.invalid(p, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateResourceName(name: string, path: string): FieldError[] {
  const errs = isQualifiedName(name).map((m) => fieldErrors.invalid(path, name, m));
  if (errs.length > 0) return errs;
  if (!name.includes('/') && !STANDARD_CONTAINER_RESOURCES.has(name) && !name.startsWith('hugepages-')) {
    return [fieldErrors.invalid(path, name, 'must be a standard resource for containers')];
  }
  return [];
}

/** Container or pod-level resource requirements: valid names, non-negative, requests ≤ limits. */
export function validateResources(resources: unknown, path: string): FieldError[] {
  if (!isObject(resources)) return [];
  const errs: FieldError[] = [];
  const limits = obj(resources, 'limits') ?? {};
  const requests = obj(resources, 'requests') ?? {};
  for (const [which, m] of [['limits', limits], ['requests', requests]] as const) {
    const p = child(path, which);
    for (const [name, value] of Object.entries(m)) {
      const at = fieldPath.key(p, name);
      errs.push(...validateResourceName(name, at));
      const q = typeof value === 'string' || typeof value === 'number' ? parseQuantity(value) : undefined;
      if (q && q.nanos < 0n) errs.push(fieldErrors.invalid(at, value, 'must be greater than or equal to 0'));
    }
  }
  for (const [name, value] of Object.entries(requests)) {
    const limit = limits[name];
    if (limit === undefined) continue;
    const rq = typeof value === 'string' || typeof value === 'number' ? parseQuantity(value) : undefined;
    const lq = typeof limit === 'string' || typeof limit === 'number' ? parseQuantity(limit) : undefined;
    if (rq && lq && compareQuantities(rq, lq) > 0) {
      errs.push(
        fieldErrors.invalid(
          fieldPath.key(child(path, 'requests'), name),
          formatQuantity(rq),
          `must be less than or equal to ${name} limit of ${formatQuantity(lq)}`,
        ),
      );
    }
  }
  return errs;
}

const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc', 'sleep'];

function validateHandler(handler: JsonObject, path: string, allowed: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  const present = allowed.filter((k) => isObject(handler[k]));
  if (present.length === 0) return [fieldErrors.required(path, 'must specify a handler type')];
  for (const extra of present.slice(1)) errs.push(fieldErrors.forbidden(child(path, extra), 'may not specify more than 1 handler type'));
  const get = obj(handler, 'httpGet');
  if (get) {
    errs.push(...validateContainerPort(get.port, child(child(path, 'httpGet'), 'port')));
    const scheme = str(get, 'scheme');
    if (scheme && scheme !== 'HTTP' && scheme !== 'HTTPS') errs.push(fieldErrors.notSupported(child(child(path, 'httpGet'), 'scheme'), scheme, ['HTTP', 'HTTPS']));
  }
  const tcp = obj(handler, 'tcpSocket');
  if (tcp) errs.push(...validateContainerPort(tcp.port, child(child(path, 'tcpSocket'), 'port')));
  const grpc = obj(handler, 'grpc');
  if (grpc && typeof grpc.port === 'number') {
    for (const m of isValidPortNum(grpc.port)) errs.push(fieldErrors.invalid(child(child(path, 'grpc'), 'port'), grpc.port, m));
  }
  return errs;
}

function validateProbe(probe: unknown, path: string, mustSucceedOnce: boolean): FieldError[] {
  if (!isObject(probe)) return [];
  const errs = validateHandler(probe, path, HANDLERS.filter((h) => h !== 'sleep'));
  for (const key of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold', 'terminationGracePeriodSeconds']) {
    const v = probe[key];
    if (typeof v === 'number' && v < 0) errs.push(fieldErrors.invalid(child(path, key), v, 'must be greater than or equal to 0'));
  }
  if (mustSucceedOnce && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1) {
    errs.push(fieldErrors.invalid(child(path, 'successThreshold'), probe.successThreshold, 'must be 1'));
  }
  return errs;
}

function validateContainer(
  c: JsonObject,
  path: string,
  kind: ContainerKind,
  volumes: ReadonlyMap<string, JsonObject>,
): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(c, 'name');
  if (!name) errs.push(fieldErrors.required(child(path, 'name'), ''));
  else for (const m of isDNS1123Label(name)) errs.push(fieldErrors.invalid(child(path, 'name'), name, m));

  const image = str(c, 'image');
  if (!image) errs.push(fieldErrors.required(child(path, 'image'), ''));
  else if (image.trim() !== image) errs.push(fieldErrors.invalid(child(path, 'image'), image, 'must not have leading or trailing whitespace'));

  const pull = str(c, 'imagePullPolicy');
  if (!pull) errs.push(fieldErrors.required(child(path, 'imagePullPolicy'), ''));
  else if (!PULL_POLICIES.includes(pull)) errs.push(fieldErrors.notSupported(child(path, 'imagePullPolicy'), pull, PULL_POLICIES));

  const messagePolicy = str(c, 'terminationMessagePolicy');
  if (!messagePolicy) errs.push(fieldErrors.required(child(path, 'terminationMessagePolicy'), ''));
  else if (!MESSAGE_POLICIES.includes(messagePolicy)) {
    errs.push(fieldErrors.notSupported(child(path, 'terminationMessagePolicy'), messagePolicy, MESSAGE_POLICIES));
  }

  const restartPolicy = c.restartPolicy;
  const sidecar = kind === 'init' && restartPolicy === 'Always';
  if (restartPolicy !== undefined && restartPolicy !== null) {
    if (kind === 'init') {
      if (restartPolicy !== 'Always') errs.push(fieldErrors.notSupported(child(path, 'restartPolicy'), restartPolicy, ['Always']));
    } else if (kind === 'ephemeral') {
      errs.push(fieldErrors.forbidden(child(path, 'restartPolicy'), 'cannot set a restartPolicy on ephemeral containers'));
    } else if (!['Always', 'OnFailure', 'Never'].includes(String(restartPolicy))) {
      errs.push(fieldErrors.notSupported(child(path, 'restartPolicy'), restartPolicy, RESTART_POLICIES));
    }
  }

  if (kind === 'ephemeral') {
    for (const forbidden of ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resources']) {
      const v = c[forbidden];
      const empty = v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
      if (!empty) errs.push(fieldErrors.forbidden(child(path, forbidden), 'cannot be set for an Ephemeral Container'));
    }
  } else {
    errs.push(...validatePorts(list(c, 'ports'), child(path, 'ports')));
    if (kind === 'init' && !sidecar) {
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (isObject(c[probe])) errs.push(fieldErrors.forbidden(child(path, probe), 'may not be set for init containers without restartPolicy=Always'));
      }
      if (isObject(c.lifecycle)) errs.push(fieldErrors.forbidden(child(path, 'lifecycle'), 'may not be set for init containers without restartPolicy=Always'));
    } else {
      errs.push(...validateProbe(c.livenessProbe, child(path, 'livenessProbe'), true));
      errs.push(...validateProbe(c.readinessProbe, child(path, 'readinessProbe'), false));
      errs.push(...validateProbe(c.startupProbe, child(path, 'startupProbe'), true));
      const lifecycle = obj(c, 'lifecycle');
      for (const hook of ['postStart', 'preStop']) {
        const h = obj(lifecycle, hook);
        if (h) errs.push(...validateHandler(h, child(child(path, 'lifecycle'), hook), HANDLERS));
      }
    }
    errs.push(...validateResources(c.resources, child(path, 'resources')));
  }
  errs.push(...validateEnv(list(c, 'env'), child(path, 'env')));
  errs.push(...validateEnvFrom(list(c, 'envFrom'), child(path, 'envFrom')));

  const mountPaths = new Set<string>();
  list(c, 'volumeMounts').forEach((m, i) => {
    if (!isObject(m)) return;
    const p = index(child(path, 'volumeMounts'), i);
    const mname = str(m, 'name');
    if (!mname) errs.push(fieldErrors.required(child(p, 'name'), ''));
    else if (!volumes.has(mname)) errs.push(fieldErrors.notFound(child(p, 'name'), mname));
    const mountPath = str(m, 'mountPath');
    if (!mountPath) errs.push(fieldErrors.required(child(p, 'mountPath'), ''));
    else {
      if (mountPaths.has(mountPath)) errs.push(fieldErrors.invalid(child(p, 'mountPath'), mountPath, 'must be unique'));
      mountPaths.add(mountPath);
    }
    const subPath = str(m, 'subPath');
    if (subPath && (subPath.startsWith('/') || subPath.split('/').includes('..'))) {
      errs.push(fieldErrors.invalid(child(p, 'subPath'), subPath, subPath.startsWith('/') ? 'must be a relative path' : "must not contain '..'"));
    }
  });
  const devicePaths = new Set<string>();
  list(c, 'volumeDevices').forEach((d, i) => {
    if (!isObject(d)) return;
    const p = index(child(path, 'volumeDevices'), i);
    const dname = str(d, 'name');
    if (!dname) errs.push(fieldErrors.required(child(p, 'name'), ''));
    else if (!volumes.has(dname)) errs.push(fieldErrors.notFound(child(p, 'name'), dname));
    const devicePath = str(d, 'devicePath');
    if (!devicePath) errs.push(fieldErrors.required(child(p, 'devicePath'), ''));
    else {
      if (devicePaths.has(devicePath) || mountPaths.has(devicePath)) errs.push(fieldErrors.invalid(child(p, 'devicePath'), devicePath, 'must be unique'));
      devicePaths.add(devicePath);
    }
  });
  return errs;
}

function validateKeyToPaths(items: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  items.forEach((item, i) => {
    if (!isObject(item)) return;
    const p = index(path, i);
    if (!str(item, 'key')) errs.push(fieldErrors.required(child(p, 'key'), ''));
    const itemPath = str(item, 'path');
    if (!itemPath) errs.push(fieldErrors.required(child(p, 'path'), ''));
    else if (itemPath.startsWith('/')) errs.push(fieldErrors.invalid(child(p, 'path'), itemPath, 'must be a relative path'));
    else if (itemPath.split('/').includes('..')) errs.push(fieldErrors.invalid(child(p, 'path'), itemPath, "must not contain '..'"));
    if (typeof item.mode === 'number' && (item.mode < 0 || item.mode > 0o777)) {
      errs.push(fieldErrors.invalid(child(p, 'mode'), item.mode, 'must be a number between 0 and 0777 (octal), both inclusive'));
    }
  });
  return errs;
}

function validateVolumes(volumes: unknown[], path: string): { errs: FieldError[]; byName: Map<string, JsonObject> } {
  const errs: FieldError[] = [];
  const byName = new Map<string, JsonObject>();
  volumes.forEach((v, i) => {
    if (!isObject(v)) return;
    const p = index(path, i);
    const own: FieldError[] = [];
    const name = str(v, 'name');
    if (!name) own.push(fieldErrors.required(child(p, 'name'), ''));
    else for (const m of isDNS1123Label(name)) own.push(fieldErrors.invalid(child(p, 'name'), name, m));
    if (name && byName.has(name)) own.push(fieldErrors.duplicate(child(p, 'name'), name));
    const sources = VOLUME_SOURCES.filter((k) => isObject(v[k]));
    if (sources.length === 0) own.push(fieldErrors.required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1)) own.push(fieldErrors.forbidden(child(p, extra), 'may not specify more than 1 volume type'));
    for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
      const source = obj(v, key);
      const mode = source?.defaultMode;
      if (typeof mode === 'number' && (mode < 0 || mode > 0o777)) {
        own.push(fieldErrors.invalid(child(child(p, key), 'defaultMode'), mode, 'must be a number between 0 and 0777 (octal), both inclusive'));
      }
    }
    const secret = obj(v, 'secret');
    if (secret) {
      if (!str(secret, 'secretName')) own.push(fieldErrors.required(child(child(p, 'secret'), 'secretName'), ''));
      own.push(...validateKeyToPaths(list(secret, 'items'), child(child(p, 'secret'), 'items')));
    }
    const configMap = obj(v, 'configMap');
    if (configMap) {
      if (!str(configMap, 'name')) own.push(fieldErrors.required(child(child(p, 'configMap'), 'name'), ''));
      own.push(...validateKeyToPaths(list(configMap, 'items'), child(child(p, 'configMap'), 'items')));
    }
    const pvc = obj(v, 'persistentVolumeClaim');
    if (pvc && !str(pvc, 'claimName')) own.push(fieldErrors.required(child(child(p, 'persistentVolumeClaim'), 'claimName'), ''));
    const hostPath = obj(v, 'hostPath');
    if (hostPath && !str(hostPath, 'path')) own.push(fieldErrors.required(child(child(p, 'hostPath'), 'path'), ''));
    const emptyDir = obj(v, 'emptyDir');
    const sizeLimit = emptyDir?.sizeLimit;
    if (typeof sizeLimit === 'string' || typeof sizeLimit === 'number') {
      const q = parseQuantity(sizeLimit);
      if (q && q.nanos < 0n) own.push(fieldErrors.forbidden(child(child(p, 'emptyDir'), 'sizeLimit'), 'SizeLimit field must be a valid resource quantity'));
    }
    if (own.length === 0 && name) byName.set(name, v);
    errs.push(...own);
  });
  return { errs, byName };
}

function validateTolerations(tolerations: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  tolerations.forEach((t, i) => {
    if (!isObject(t)) return;
    const p = index(path, i);
    const key = str(t, 'key');
    const operator = str(t, 'operator');
    const value = str(t, 'value');
    if (key) for (const m of isQualifiedName(key)) errs.push(fieldErrors.invalid(child(p, 'key'), key, m));
    if (!key && operator !== 'Exists') {
      errs.push(fieldErrors.invalid(child(p, 'operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (typeof t.tolerationSeconds === 'number' && str(t, 'effect') !== 'NoExecute') {
      errs.push(fieldErrors.invalid(child(p, 'effect'), str(t, 'effect'), "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (operator) {
      case '':
      case 'Equal':
        for (const m of isLabelValue(value)) errs.push(fieldErrors.invalid(child(p, 'operator'), value, m));
        break;
      case 'Exists':
        if (value) errs.push(fieldErrors.invalid(child(p, 'operator'), t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(fieldErrors.notSupported(child(p, 'operator'), operator, ['Equal', 'Exists']));
    }
    const effect = str(t, 'effect');
    if (effect && !TOLERATION_EFFECTS.includes(effect)) errs.push(fieldErrors.notSupported(child(p, 'effect'), effect, TOLERATION_EFFECTS));
  });
  return errs;
}

function validateTopologySpread(constraints: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  constraints.forEach((c, i) => {
    if (!isObject(c)) return;
    const p = index(path, i);
    if (typeof c.maxSkew === 'number' && c.maxSkew <= 0) errs.push(fieldErrors.invalid(child(p, 'maxSkew'), c.maxSkew, 'must be greater than zero'));
    const topologyKey = str(c, 'topologyKey');
    if (!topologyKey) errs.push(fieldErrors.required(child(p, 'topologyKey'), 'can not be empty'));
    else for (const m of isQualifiedName(topologyKey)) errs.push(fieldErrors.invalid(child(p, 'topologyKey'), topologyKey, m));
    const when = str(c, 'whenUnsatisfiable');
    if (!['DoNotSchedule', 'ScheduleAnyway'].includes(when)) {
      errs.push(fieldErrors.notSupported(child(p, 'whenUnsatisfiable'), when, ['DoNotSchedule', 'ScheduleAnyway']));
    }
    const key = `${topologyKey}\u0000${when}`;
    if (seen.has(key)) errs.push(fieldErrors.duplicate(p, `{${topologyKey}, ${when}}`));
    seen.add(key);
  });
  return errs;
}

// Tables of validatePodSpec, built once: it runs for every pod and workload write.
const CONTAINER_GROUPS: ReadonlyArray<readonly [string, ContainerKind]> = [
  ['initContainers', 'init'],
  ['containers', 'regular'],
  ['ephemeralContainers', 'ephemeral'],
];
const POD_SPEC_NAMES: ReadonlyArray<readonly [string, (value: string) => string[]]> = [
  ['serviceAccountName', isDNS1123Subdomain],
  ['nodeName', isDNS1123Subdomain],
  ['hostname', isDNS1123Label],
  ['subdomain', isDNS1123Label],
  ['priorityClassName', isDNS1123Subdomain],
];

/** A PodSpec at `path` (`spec` for pods, `spec.template.spec` for workloads). */
export function validatePodSpec(spec: unknown, path: string, opts: PodSpecOptions): FieldError[] {
  if (!isObject(spec)) return [];
  const errs: FieldError[] = [];
  const { errs: volumeErrs, byName: volumes } = validateVolumes(list(spec, 'volumes'), child(path, 'volumes'));
  errs.push(...volumeErrs);
  for (const name of opts.ownerVolumes ?? []) if (!volumes.has(name)) volumes.set(name, { persistentVolumeClaim: { claimName: name } });

  const containers = list(spec, 'containers');
  if (containers.length === 0) errs.push(fieldErrors.required(child(path, 'containers'), ''));
  const names = new Set<string>();
  for (const [key, kind] of CONTAINER_GROUPS) {
    list(spec, key).forEach((c, i) => {
      if (!isObject(c)) return;
      const p = index(child(path, key), i);
      errs.push(...validateContainer(c, p, kind, volumes));
      const name = str(c, 'name');
      if (name) {
        if (names.has(name)) errs.push(fieldErrors.duplicate(child(p, 'name'), name));
        names.add(name);
      }
    });
  }
  if (opts.template && list(spec, 'ephemeralContainers').length > 0) {
    errs.push(fieldErrors.forbidden(child(path, 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }

  const restartPolicy = str(spec, 'restartPolicy');
  if (!restartPolicy) errs.push(fieldErrors.required(child(path, 'restartPolicy'), ''));
  else if (!RESTART_POLICIES.includes(restartPolicy)) errs.push(fieldErrors.notSupported(child(path, 'restartPolicy'), restartPolicy, RESTART_POLICIES));

  const dnsPolicy = str(spec, 'dnsPolicy');
  if (!dnsPolicy) errs.push(fieldErrors.required(child(path, 'dnsPolicy'), ''));
  else if (!DNS_POLICIES.includes(dnsPolicy)) errs.push(fieldErrors.notSupported(child(path, 'dnsPolicy'), dnsPolicy, DNS_POLICIES));
  else if (dnsPolicy === 'None' && !isObject(spec.dnsConfig)) {
    errs.push(fieldErrors.required(child(path, 'dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  }

  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number' && (deadline < 1 || deadline > MAX_INT32)) {
    errs.push(fieldErrors.invalid(child(path, 'activeDeadlineSeconds'), deadline, `must be between 1 and ${MAX_INT32}, inclusive`));
  }
  errs.push(...validateLabels(spec.nodeSelector, child(path, 'nodeSelector')));
  for (const [key, check] of POD_SPEC_NAMES) {
    const v = str(spec, key);
    if (v) for (const m of check(v)) errs.push(fieldErrors.invalid(child(path, key), v, m));
  }
  errs.push(...validateTolerations(list(spec, 'tolerations'), child(path, 'tolerations')));
  errs.push(...validateTopologySpread(list(spec, 'topologySpreadConstraints'), child(path, 'topologySpreadConstraints')));
  list(spec, 'hostAliases').forEach((a, i) => {
    const ip = str(a, 'ip');
    for (const m of isValidIP(ip)) errs.push(fieldErrors.invalid(child(index(child(path, 'hostAliases'), i), 'ip'), ip, m));
  });
  const gates = new Set<string>();
  list(spec, 'schedulingGates').forEach((g, i) => {
    const p = child(index(child(path, 'schedulingGates'), i), 'name');
    const name = str(g, 'name');
    for (const m of isQualifiedName(name)) errs.push(fieldErrors.invalid(p, name, m));
    if (gates.has(name)) errs.push(fieldErrors.duplicate(p, name));
    gates.add(name);
  });
  const os = str(obj(spec, 'os'), 'name');
  if (os && os !== 'linux' && os !== 'windows') errs.push(fieldErrors.notSupported(child(child(path, 'os'), 'name'), os, ['linux', 'windows']));
  errs.push(...validateResources(spec.resources, child(path, 'resources')));
  return errs;
}

export interface PodTemplateOptions {
  /** The only restart policies the owning kind accepts (for example ["Always"] for workloads). */
  readonly restartPolicies?: readonly string[];
  /** See PodSpecOptions.ownerVolumes. */
  readonly ownerVolumes?: readonly string[];
}

/** A PodTemplateSpec at `path` (`spec.template`): template metadata labels and annotations, then the spec. */
export function validatePodTemplateSpec(template: unknown, path: string, opts: PodTemplateOptions = {}): FieldError[] {
  if (!isObject(template)) return [fieldErrors.required(path, '')];
  const errs: FieldError[] = [];
  const meta = obj(template, 'metadata');
  errs.push(...validateLabels(meta?.labels, child(child(path, 'metadata'), 'labels')));
  errs.push(...validateAnnotations(meta?.annotations, child(child(path, 'metadata'), 'annotations')));
  const specPath = child(path, 'spec');
  errs.push(...validatePodSpec(template.spec, specPath, { template: true, ...(opts.ownerVolumes ? { ownerVolumes: opts.ownerVolumes } : {}) }));
  const restart = str(obj(template, 'spec'), 'restartPolicy');
  if (opts.restartPolicies && restart && !opts.restartPolicies.includes(restart)) {
    errs.push(fieldErrors.notSupported(child(specPath, 'restartPolicy'), restart, opts.restartPolicies));
  }
  return errs;
}

const POD_UPDATE_MESSAGE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function podUpdateErrors(spec: JsonObject, oldSpec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const oldDeadline = oldSpec.activeDeadlineSeconds;
  const newDeadline = spec.activeDeadlineSeconds;
  if (typeof oldDeadline === 'number' && (typeof newDeadline !== 'number' || newDeadline > oldDeadline)) {
    errs.push(fieldErrors.invalid('spec.activeDeadlineSeconds', newDeadline ?? null, 'must be less than or equal to previous value'));
  }
  const oldTolerations = list(oldSpec, 'tolerations');
  const newTolerations = list(spec, 'tolerations');
  for (const t of oldTolerations) {
    if (!newTolerations.some((n) => jsonEqual(n, t))) {
      errs.push(fieldErrors.forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
      break;
    }
  }
  const oldGates = list(oldSpec, 'schedulingGates').map((g) => str(g, 'name'));
  if (list(spec, 'schedulingGates').some((g) => !oldGates.includes(str(g, 'name')))) {
    errs.push(fieldErrors.forbidden('spec.schedulingGates', 'only deletion is allowed, but found new scheduling gate'));
  }
  if (!specEqualButMutable(spec, oldSpec)) errs.push(fieldErrors.forbidden('spec', POD_UPDATE_MESSAGE));
  return errs;
}

/** What a pod update may change in the spec besides container images (compared apart). */
const POD_SPEC_MUTABLE: ReadonlySet<string> = new Set(['activeDeadlineSeconds', 'tolerations', 'schedulingGates']);

/**
 * Whether the spec equals the old one (jsonEqual) once the fields an update may change are
 * taken from the new spec: images of containers and init containers (when the list keeps its
 * length), the mutable fields, and a negative grace period replaced by 1. Compared in place:
 * copying the old spec to patch it cost a deep clone per pod update.
 */
function specEqualButMutable(spec: JsonObject, oldSpec: JsonObject): boolean {
  const oldGrace = oldSpec.terminationGracePeriodSeconds;
  const graceFixed = typeof oldGrace === 'number' && oldGrace < 0 && spec.terminationGracePeriodSeconds === 1;
  // Every key of either spec, without building their union.
  for (const key of Object.keys(oldSpec)) if (!specKeyEqual(spec, oldSpec, key, graceFixed)) return false;
  for (const key of Object.keys(spec)) if (!Object.hasOwn(oldSpec, key) && !specKeyEqual(spec, oldSpec, key, graceFixed)) return false;
  return true;
}

/** One key of specEqualButMutable. */
function specKeyEqual(spec: JsonObject, oldSpec: JsonObject, key: string, graceFixed: boolean): boolean {
  if (POD_SPEC_MUTABLE.has(key) || (key === 'terminationGracePeriodSeconds' && graceFixed)) return true;
  if (key === 'containers' || key === 'initContainers') {
    const newList = list(spec, key);
    const oldList = arrayAt(oldSpec, key);
    if (oldList && newList.length === oldList.length) {
      if (!oldList.every((c, i) => (isObject(c) && isObject(newList[i]) ? equalButImage(c, newList[i] as JsonObject) : jsonEqual(c, newList[i])))) return false;
      // Equal items make equal lists, except that jsonEqual takes an empty list for an absent one.
      return newList.length > 0 || jsonEqual(oldSpec[key], spec[key]);
    }
  }
  return jsonEqual(oldSpec[key], spec[key]);
}

/** jsonEqual of two containers, the old one's image taken as the new one's. */
function equalButImage(c: JsonObject, next: JsonObject): boolean {
  for (const k of Object.keys(c)) if (k !== 'image' && !jsonEqual(c[k], next[k])) return false;
  for (const k of Object.keys(next)) if (k !== 'image' && !Object.hasOwn(c, k) && !jsonEqual(c[k], next[k])) return false;
  return true;
}

export const validatePod: KindValidator = (pod, old) => {
  const errs = validatePodSpec(pod.spec, 'spec', { template: false });
  if (!old && list(pod.spec, 'ephemeralContainers').length > 0) {
    errs.push(fieldErrors.forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  }
  const oldSpec = obj(old, 'spec');
  const spec = obj(pod, 'spec');
  if (oldSpec && spec) errs.push(...podUpdateErrors(spec, oldSpec));
  return errs;
};

/**
 * An update through pods/ephemeralcontainers, as upstream validates it: the registry took
 * everything but spec.ephemeralContainers from the stored pod, so the spec is validated as a
 * whole (the new containers with the rules for ephemeral ones, names unique across all
 * containers), and the ephemeral containers already there may be neither changed nor removed.
 * The pod-update rule that freezes the spec does not apply: adding them is this sub-resource's
 * purpose (`kubectl debug`).
 */
export function validatePodEphemeralContainersUpdate(pod: JsonObject, old: JsonObject, naming: Naming): FieldError[] {
  // A kubelet's static pod (its mirror carries the config.mirror annotation) takes none.
  const oldMeta = obj(old, 'metadata');
  const annotations = oldMeta ? obj(oldMeta, 'annotations') : undefined;
  if (annotations && Object.hasOwn(annotations, naming.label('config.mirror'))) {
    return [fieldErrors.forbidden('', 'static pods do not support ephemeral containers')];
  }
  const errs = validatePodSpec(pod.spec, 'spec', { template: false });
  const path = 'spec.ephemeralContainers';
  const byName = new Map<string, unknown>();
  for (const c of list(obj(pod, 'spec') ?? {}, 'ephemeralContainers')) if (isObject(c)) byName.set(str(c, 'name'), c);
  for (const c of list(obj(old, 'spec') ?? {}, 'ephemeralContainers')) {
    if (!isObject(c)) continue;
    const name = str(c, 'name');
    const now = byName.get(name);
    if (now === undefined) errs.push(fieldErrors.forbidden(path, `existing ephemeral containers ${JSON.stringify(name)} may not be removed`));
    else if (!jsonEqual(c, now)) errs.push(fieldErrors.forbidden(`${path}[${name}]`, `existing ephemeral containers ${JSON.stringify(name)} may not be changed`));
  }
  return errs;
}

export const validatePodTemplate: KindValidator = (template) => validatePodTemplateSpec(template.template, 'template');
