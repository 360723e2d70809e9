// Table-driven checks of the per-kind rules through the registry's entry (validateObject on
// defaulted objects), so each case sees what upstream validates: the defaulted object.
import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../apierrors/field-errors.js';
import { applyDefaults } from '../../defaults/defaults.js';
import { createNaming, type Naming } from '../../naming/naming.js';
import { ApiCatalog } from '../../schema/catalog.js';
import { cloneJson } from '../plain-json.js';
import { validateObject } from '../validate-object.js';
import { cronScheduleError, isValidTimeZone } from './cron.js';
import { hasKindValidator, validateKind } from './index.js';
import { validatePodEphemeralContainersUpdate } from './pod.js';

const cluster = createNaming('cluster');
const kube = createNaming('kubernetes');
const catalogs = { cluster: new ApiCatalog(cluster), kubernetes: new ApiCatalog(kube) };

type Obj = Record<string, any>;

function check(kind: string, obj: Obj, old?: Obj, naming: Naming = cluster): string[] {
  const [group, version, k] = kind.split('/') as [string, string, string];
  const catalog = catalogs[naming.mode];
  const resource = catalog.resourceForKind(naming.group(group), version, k);
  if (!resource) throw new Error(`no resource for ${kind}`);
  const o = applyDefaults(resource, cloneJson(obj), naming);
  const before = cloneJson(o);
  const oldDefaulted = old ? applyDefaults(resource, cloneJson(old), naming) : undefined;
  const errs = validateObject(resource, o, { old: oldDefaulted, naming });
  expect(o).toEqual(before); // validation never mutates
  return errs.map(formatFieldError);
}

/** Runs a case: no expected text means the object must be valid; otherwise one message must contain it. */
function expectCase(messages: string[], expected: string | undefined): void {
  if (expected === undefined) expect(messages).toEqual([]);
  else expect(messages.join('\n')).toContain(expected);
}

const meta = (name = 'x', namespace: string | null = 'default') => (namespace ? { name, namespace } : { name });

const container = (name = 'app', extra: Obj = {}) => ({ name, image: 'nginx:1.27', ...extra });
const podSpec = (extra: Obj = {}) => ({ containers: [container()], ...extra });
const template = (labels: Obj = { app: 'web' }, spec: Obj = podSpec()) => ({ metadata: { labels }, spec });

const deployment = (spec: Obj = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: meta('web'),
  spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...spec },
});

describe('Deployment', () => {
  it.each<[string, Obj, string | undefined]>([
    ['valid', deployment(), undefined],
    ['missing selector', deployment({ selector: undefined }), 'spec.selector: Required value'],
    ['empty selector', deployment({ selector: {} }), 'spec.selector: Invalid value: {}: empty selector is invalid for deployment'],
    ['selector not matching', deployment({ selector: { matchLabels: { app: 'db' } } }), 'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'],
    ['expression selector matching', deployment({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }), undefined],
    ['bad expression', deployment({ selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }), "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ['template restart policy', deployment({ template: template({ app: 'web' }, podSpec({ restartPolicy: 'OnFailure' })) }), 'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ['negative replicas', deployment({ replicas: -1 }), 'spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
    ['recreate with rolling params', deployment({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }), "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    ['zero surge and unavailable', deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }), 'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0'],
    ['bad percent', deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'lots' } } }), 'spec.strategy.rollingUpdate.maxSurge: Invalid value: "lots": a valid percent string'],
    ['over 100%', deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '120%' } } }), 'must not be greater than 100%'],
    ['bad strategy type', deployment({ strategy: { type: 'BlueGreen' } }), 'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"'],
    ['deadline not above minReady', deployment({ minReadySeconds: 700 }), 'spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds'],
    ['template label syntax', deployment({ selector: { matchLabels: { 'a b': 'x' } }, template: template({ 'a b': 'x' }) }), 'spec.template.metadata.labels: Invalid value: "a b"'],
  ])('%s', (_n, obj, expected) => expectCase(check('apps/v1/Deployment', obj), expected));

  it('keeps the selector immutable, the template mutable', () => {
    const old = deployment();
    expect(check('apps/v1/Deployment', deployment({ template: template({ app: 'web', v: '2' }) }), old)).toEqual([]);
    expect(check('apps/v1/Deployment', deployment({ selector: { matchLabels: { app: 'web', v: '2' } }, template: template({ app: 'web', v: '2' }) }), old)).toContain(
      'spec.selector: Invalid value: {"matchLabels":{"app":"web","v":"2"}}: field is immutable',
    );
  });
});

const pod = (spec: Obj = podSpec()): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta('p'), spec });

describe('Pod', () => {
  it.each<[string, Obj, string | undefined]>([
    ['valid', pod(), undefined],
    ['no containers', pod({ containers: [] }), 'spec.containers: Required value'],
    ['container without image', pod({ containers: [{ name: 'a' }] }), 'spec.containers[0].image: Required value'],
    ['container without name', pod({ containers: [{ image: 'x' }] }), 'spec.containers[0].name: Required value'],
    ['container name syntax', pod({ containers: [container('App')] }), 'spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label'],
    ['duplicate names across init and regular', pod({ initContainers: [container('app')], containers: [container('app')] }), 'spec.containers[0].name: Duplicate value: "app"'],
    ['duplicate port names', pod({ containers: [container('a', { ports: [{ name: 'http', containerPort: 80 }, { name: 'http', containerPort: 81 }] })] }), 'spec.containers[0].ports[1].name: Duplicate value: "http"'],
    ['port out of range', pod({ containers: [container('a', { ports: [{ containerPort: 70000 }] })] }), 'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
    ['port missing', pod({ containers: [container('a', { ports: [{ name: 'http' }] })] }), 'spec.containers[0].ports[0].containerPort: Required value'],
    ['bad protocol', pod({ containers: [container('a', { ports: [{ containerPort: 80, protocol: 'HTTP' }] })] }), 'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
    ['bad port name', pod({ containers: [container('a', { ports: [{ containerPort: 80, name: 'HTTP_1' }] })] }), 'spec.containers[0].ports[0].name: Invalid value: "HTTP_1"'],
    ['requests above limits', pod({ containers: [container('a', { resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } })] }), 'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ['unknown resource name', pod({ containers: [container('a', { resources: { requests: { gpu: '1' } } })] }), 'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers'],
    ['extended resource', pod({ containers: [container('a', { resources: { limits: { 'nvidia.com/gpu': '1' } } })] }), undefined],
    ['negative request', pod({ containers: [container('a', { resources: { requests: { memory: '-1Gi' } } })] }), 'must be greater than or equal to 0'],
    ['mount of a missing volume', pod({ containers: [container('a', { volumeMounts: [{ name: 'data', mountPath: '/data' }] })] }), 'spec.containers[0].volumeMounts[0].name: Not found: "data"'],
    ['duplicate mount path', pod({ volumes: [{ name: 'a' }, { name: 'b' }], containers: [container('a', { volumeMounts: [{ name: 'a', mountPath: '/d' }, { name: 'b', mountPath: '/d' }] })] }), 'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique'],
    ['two volume sources', pod({ ...podSpec(), volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }] }), 'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type'],
    ['duplicate volumes', pod({ ...podSpec(), volumes: [{ name: 'v' }, { name: 'v' }] }), 'spec.volumes[1].name: Duplicate value: "v"'],
    ['secret volume without name', pod({ ...podSpec(), volumes: [{ name: 'v', secret: {} }] }), 'spec.volumes[0].secret.secretName: Required value'],
    ['bad restart policy', pod({ ...podSpec(), restartPolicy: 'Sometimes' }), 'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ['dns None without config', pod({ ...podSpec(), dnsPolicy: 'None' }), 'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
    ['bad pull policy', pod({ containers: [container('a', { imagePullPolicy: 'Sometimes' })] }), 'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes"'],
    ['env value and valueFrom', pod({ containers: [container('a', { env: [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] })] }), 'spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty'],
    ['env without name', pod({ containers: [container('a', { env: [{ value: 'x' }] })] }), 'spec.containers[0].env[0].name: Required value'],
    ['probe without handler', pod({ containers: [container('a', { livenessProbe: { periodSeconds: 5 } })] }), 'spec.containers[0].livenessProbe: Required value: must specify a handler type'],
    ['probe on init container', pod({ initContainers: [container('i', { readinessProbe: { exec: { command: ['true'] } } })], containers: [container()] }), 'spec.initContainers[0].readinessProbe: Forbidden'],
    ['sidecar with probe', pod({ initContainers: [container('i', { restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } })], containers: [container()] }), undefined],
    ['toleration Exists with value', pod({ ...podSpec(), tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] }), "value must be empty when `operator` is 'Exists'"],
    ['toleration seconds without NoExecute', pod({ ...podSpec(), tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }] }), "effect must be 'NoExecute' when `tolerationSeconds` is set"],
    ['node selector syntax', pod({ ...podSpec(), nodeSelector: { 'bad key!': 'x' } }), 'spec.nodeSelector: Invalid value: "bad key!"'],
    ['ephemeral containers on create', pod({ ...podSpec(), ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }), 'spec.ephemeralContainers: Forbidden: cannot be set on create'],
  ])('%s', (_n, obj, expected) => expectCase(check('/v1/Pod', obj), expected));

  it('allows image updates and nothing else of note', () => {
    const old = pod();
    expect(check('/v1/Pod', pod({ containers: [container('app', { image: 'nginx:1.28' })] }), old)).toEqual([]);
    expect(check('/v1/Pod', pod({ containers: [container('app', { env: [{ name: 'A', value: 'b' }] })] }), old)).toEqual([
      expect.stringMatching(/^spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/),
    ]);
    expect(check('/v1/Pod', pod({ ...podSpec(), tolerations: [{ key: 'a', operator: 'Exists' }] }), old)).toEqual([]);
  });

  const forbidden = 'spec: Forbidden: pod updates may not change fields other than';
  it.each<[string, Obj, Obj, string | undefined]>([
    ['unchanged', podSpec(), podSpec(), undefined],
    ['every image at once, init containers too', { containers: [container(), container('two')], initContainers: [container('init')] }, { containers: [container('app', { image: 'nginx:1.28' }), container('two', { image: 'redis:7.4' })], initContainers: [container('init', { image: 'busybox:1.36' })] }, undefined],
    ['an image dropped', podSpec(), { containers: [{ name: 'app' }] }, 'spec.containers[0].image: Required value'],
    ['a container field besides the image', podSpec(), { containers: [container('app', { image: 'nginx:1.28', workingDir: '/w' })] }, forbidden],
    ['a container added', podSpec(), { containers: [container(), container('two')] }, forbidden],
    ['an init container list emptied', podSpec({ initContainers: [container('init')] }), podSpec({ initContainers: [] }), forbidden],
    ['an empty init container list dropped (empty and absent are one)', podSpec({ initContainers: [] }), podSpec(), undefined],
    ['another spec field', podSpec(), podSpec({ hostname: 'h' }), forbidden],
    ['a spec field removed', podSpec({ hostname: 'h' }), podSpec(), forbidden],
    ['a null spec field is an absent one', podSpec({ hostname: null }), podSpec(), undefined],
    ['a shorter deadline', podSpec({ activeDeadlineSeconds: 30 }), podSpec({ activeDeadlineSeconds: 10 }), undefined],
    ['a longer deadline', podSpec({ activeDeadlineSeconds: 10 }), podSpec({ activeDeadlineSeconds: 30 }), 'spec.activeDeadlineSeconds: Invalid value: 30: must be less than or equal to previous value'],
    ['a scheduling gate removed', podSpec({ schedulingGates: [{ name: 'g' }] }), podSpec(), undefined],
    ['a negative grace period fixed to 1', podSpec({ terminationGracePeriodSeconds: -1 }), podSpec({ terminationGracePeriodSeconds: 1 }), undefined],
    ['a grace period changed otherwise', podSpec({ terminationGracePeriodSeconds: 30 }), podSpec({ terminationGracePeriodSeconds: 1 }), forbidden],
  ])('update: %s', (_n, oldSpec, spec, expected) => expectCase(check('/v1/Pod', pod(spec), pod(oldSpec)), expected));
});

// pods/ephemeralcontainers (kubectl debug): the registry keeps all but the ephemeral containers.
describe('Pod ephemeral containers sub-resource', () => {
  const debug = (name: string, extra: Obj = {}) => ({ name, image: 'busybox', targetContainerName: 'app', ...extra });
  const withEphemeral = (ephemeral: Obj[], m: Obj = meta('p')): Obj => ({ ...pod(podSpec({ ephemeralContainers: ephemeral })), metadata: m });
  const podResource = catalogs.cluster.resourceForKind('', 'v1', 'Pod')!;
  const errors = (next: Obj, old: Obj) =>
    validatePodEphemeralContainersUpdate(applyDefaults(podResource, cloneJson(next), cluster), applyDefaults(podResource, cloneJson(old), cluster), cluster).map(formatFieldError);
  it.each<[string, Obj[], Obj[], string[]]>([
    ['the first one added', [], [debug('d1')], []],
    ['another added beside one that stays', [debug('d1')], [debug('d1'), debug('d2')], []],
    ['one removed', [debug('d1')], [debug('d2')], ['spec.ephemeralContainers: Forbidden: existing ephemeral containers "d1" may not be removed']],
    ['one changed', [debug('d1')], [debug('d1', { image: 'alpine' })], ['spec.ephemeralContainers[d1]: Forbidden: existing ephemeral containers "d1" may not be changed']],
    ['one with ports (not allowed for an ephemeral container)', [], [debug('d1', { ports: [{ containerPort: 80 }] })], ['spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container']],
    ['one named as a regular container', [], [debug('app')], ['spec.ephemeralContainers[0].name: Duplicate value: "app"']],
  ])('%s', (_n, before, after, want) => {
    expect(errors(withEphemeral(after), withEphemeral(before))).toEqual(want);
  });
  it('refuses a static (mirror) pod', () => {
    const m = { ...meta('p'), annotations: { [cluster.label('config.mirror')]: 'x' } };
    expect(errors(withEphemeral([debug('d1')], m), withEphemeral([], m))).toEqual(['Forbidden: static pods do not support ephemeral containers']);
  });
});

const service = (spec: Obj, name = 'web'): Obj => ({ apiVersion: 'v1', kind: 'Service', metadata: meta(name), spec });

describe('Service', () => {
  it.each<[string, Obj, string | undefined]>([
    ['valid', service({ ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'web' } }), undefined],
    ['name must be a DNS-1035 label', service({ ports: [{ port: 80 }] }, '1web'), 'metadata.name: Invalid value: "1web": a DNS-1035 label'],
    ['ports required', service({ selector: { app: 'web' } }), 'spec.ports: Required value'],
    ['headless without ports', service({ clusterIP: 'None', selector: { app: 'web' } }), undefined],
    ['ExternalName without ports', service({ type: 'ExternalName', externalName: 'db.example.com' }), undefined],
    ['ExternalName needs a name', service({ type: 'ExternalName' }), 'spec.externalName: Required value'],
    ['two ports need names', service({ ports: [{ port: 80, name: 'http' }, { port: 443 }] }), 'spec.ports[1].name: Required value'],
    ['duplicate port names', service({ ports: [{ port: 80, name: 'p' }, { port: 81, name: 'p' }] }), 'spec.ports[1].name: Duplicate value: "p"'],
    ['duplicate port and protocol', service({ ports: [{ port: 80, name: 'a' }, { port: 80, name: 'b' }] }), 'spec.ports[1]: Duplicate value: {"port":80,"protocol":"TCP"}'],
    ['same port other protocol', service({ ports: [{ port: 53, name: 'a' }, { port: 53, name: 'b', protocol: 'UDP' }] }), undefined],
    ['port zero', service({ ports: [{ port: 0 }] }), 'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive'],
    ['missing port', service({ ports: [{ name: 'x' }] }), 'spec.ports[0].port: Invalid value: 0'],
    ['bad type', service({ type: 'Magic', ports: [{ port: 80 }] }), 'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'],
    ['bad protocol', service({ ports: [{ port: 80, protocol: 'ICMP' }] }), 'spec.ports[0].protocol: Unsupported value: "ICMP"'],
    ['node port on ClusterIP', service({ ports: [{ port: 80, nodePort: 30080 }] }), "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    ['node port on NodePort', service({ type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }), undefined],
    ['bad target port name', service({ ports: [{ port: 80, targetPort: 'Not_Valid' }] }), 'spec.ports[0].targetPort: Invalid value: "Not_Valid"'],
    ['bad cluster IP', service({ clusterIP: '10.0.0.300', ports: [{ port: 80 }] }), 'spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address'],
    ['bad affinity', service({ sessionAffinity: 'Sticky', ports: [{ port: 80 }] }), 'spec.sessionAffinity: Unsupported value: "Sticky"'],
    ['external traffic policy on ClusterIP', service({ externalTrafficPolicy: 'Local', ports: [{ port: 80 }] }), 'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services'],
  ])('%s', (_n, obj, expected) => expectCase(check('/v1/Service', obj), expected));

  it('keeps clusterIP immutable except across ExternalName', () => {
    const old = service({ clusterIP: '10.96.0.10', ports: [{ port: 80 }] });
    expect(check('/v1/Service', service({ clusterIP: '10.96.0.11', ports: [{ port: 80 }] }), old)).toContain(
      'spec.clusterIPs[0]: Invalid value: "10.96.0.11": may not change once set',
    );
    expect(check('/v1/Service', service({ clusterIP: '10.96.0.10', ports: [{ port: 81 }] }), old)).toEqual([]);
  });
});

const configMap = (extra: Obj): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('c'), ...extra });
const secret = (extra: Obj): Obj => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta('s'), ...extra });
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('ConfigMap and Secret', () => {
  it.each<[string, string, Obj, string | undefined]>([
    ['valid configmap', '/v1/ConfigMap', configMap({ data: { 'app.properties': 'a=b' }, binaryData: { logo: b64('png') } }), undefined],
    ['bad key', '/v1/ConfigMap', configMap({ data: { 'a/b': 'x' } }), 'data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters'],
    ['key in data and binaryData', '/v1/ConfigMap', configMap({ data: { k: 'x' }, binaryData: { k: b64('x') } }), 'binaryData[k]: Invalid value: "k": duplicate of key present in data'],
    ['too large', '/v1/ConfigMap', configMap({ data: { a: 'x'.repeat(1024 * 1024), b: 'y' } }), 'Too long: may not be more than 1048576 bytes'],
    ['valid secret', '/v1/Secret', secret({ data: { password: b64('hunter2') } }), undefined],
    ['secret data not base64', '/v1/Secret', secret({ data: { password: 'hunter2!' } }), 'data[password]: Invalid value: "hunter2!": data[password] in body must be of type byte'],
    ['secret key syntax', '/v1/Secret', secret({ data: { '..x': b64('a') } }), "data[..x]: Invalid value: \"..x\": must not start with '..'"],
    ['secret too large', '/v1/Secret', secret({ data: { big: b64('x'.repeat(1024 * 1024 + 1)) } }), 'data: Too long: may not be more than 1048576 bytes'],
    ['tls needs keys (cluster naming)', '/v1/Secret', secret({ type: 'cluster.io/tls', data: { 'tls.crt': b64('c') } }), 'data[tls.key]: Required value'],
    ['tls needs keys (upstream spelling)', '/v1/Secret', secret({ type: 'kubernetes.io/tls', data: {} }), 'data[tls.crt]: Required value'],
    ['basic auth needs a field', '/v1/Secret', secret({ type: 'cluster.io/basic-auth', data: {} }), 'data[username]: Required value'],
    ['dockerconfigjson must be JSON', '/v1/Secret', secret({ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{nope') } }), 'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": must be valid JSON'],
    ['service account token annotation', '/v1/Secret', secret({ type: 'cluster.io/service-account-token' }), 'metadata.annotations[cluster.io/service-account.name]: Required value'],
    ['custom type', '/v1/Secret', secret({ type: 'example.com/thing', data: {} }), undefined],
  ])('%s', (_n, kind, obj, expected) => expectCase(check(kind, obj), expected));

  it('freezes immutable objects', () => {
    const old = configMap({ data: { a: '1' }, immutable: true });
    expect(check('/v1/ConfigMap', configMap({ data: { a: '2' }, immutable: true }), old)).toEqual(['data: Forbidden: field is immutable when `immutable` is set']);
    expect(check('/v1/ConfigMap', configMap({ data: { a: '1' } }), old)).toEqual(['immutable: Forbidden: field is immutable when `immutable` is set']);
    expect(check('/v1/ConfigMap', configMap({ data: { a: '1' }, immutable: true, metadata: { ...meta('c'), labels: { l: 'v' } } }), old)).toEqual([]);
    const oldSecret = secret({ data: { a: b64('1') }, immutable: true });
    expect(check('/v1/Secret', secret({ data: { a: b64('2') }, immutable: true }), oldSecret)).toEqual(['data: Forbidden: field is immutable when `immutable` is set']);
    // Mutable objects may be made immutable.
    expect(check('/v1/ConfigMap', configMap({ data: { a: '1' }, immutable: true }), configMap({ data: { a: '1' } }))).toEqual([]);
  });

  it('keeps the secret type immutable', () => {
    expect(check('/v1/Secret', secret({ type: 'example.com/b' }), secret({ type: 'example.com/a' }))).toEqual([
      'type: Invalid value: "example.com/b": field is immutable',
    ]);
  });
});

const binding = (roleRef: Obj, subjects: Obj[] = [{ kind: 'User', name: 'alice' }]): Obj => ({
  metadata: meta('b'),
  roleRef,
  subjects,
});

describe('RBAC', () => {
  it.each<[string, string, Obj, string | undefined, Naming?]>([
    ['valid role', 'rbac.authorization.k8s.io/v1/Role', { metadata: meta('r'), rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, undefined],
    ['role rule without verbs', 'rbac.authorization.k8s.io/v1/Role', { metadata: meta('r'), rules: [{ apiGroups: [''], resources: ['pods'], verbs: [] }] }, 'rules[0].verbs: Required value: verbs must contain at least one value'],
    ['role with non-resource URLs', 'rbac.authorization.k8s.io/v1/Role', { metadata: meta('r'), rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] }, 'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs'],
    ['cluster role with non-resource URLs', 'rbac.authorization.k8s.io/v1/ClusterRole', { metadata: meta('r', null), rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] }, undefined],
    ['rule without resources', 'rbac.authorization.k8s.io/v1/ClusterRole', { metadata: meta('system:r', null), rules: [{ apiGroups: [''], verbs: ['get'] }] }, 'rules[0].resources: Required value: resource rules must supply at least one resource'],
    ['binding defaults the group', 'rbac.authorization.k8s.io/v1/RoleBinding', binding({ kind: 'Role', name: 'r' }), undefined],
    ['binding with a foreign group', 'rbac.authorization.k8s.io/v1/RoleBinding', binding({ apiGroup: 'example.com', kind: 'Role', name: 'r' }), 'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.cluster.io"'],
    ['upstream group under kubernetes naming', 'rbac.authorization.k8s.io/v1/RoleBinding', binding({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }), undefined, kube],
    ['cluster binding to a Role', 'rbac.authorization.k8s.io/v1/ClusterRoleBinding', { ...binding({ kind: 'Role', name: 'r' }), metadata: meta('b', null) }, 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'],
    ['cluster binding SA without namespace', 'rbac.authorization.k8s.io/v1/ClusterRoleBinding', { ...binding({ kind: 'ClusterRole', name: 'r' }, [{ kind: 'ServiceAccount', name: 'sa' }]), metadata: meta('b', null) }, 'subjects[0].namespace: Required value'],
    ['bad subject kind', 'rbac.authorization.k8s.io/v1/RoleBinding', binding({ kind: 'Role', name: 'r' }, [{ kind: 'Robot', name: 'r2' }]), 'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'],
  ])('%s', (_n, kind, obj, expected, naming) => expectCase(check(kind, obj, undefined, naming ?? cluster), expected));

  it('keeps roleRef immutable', () => {
    const old = binding({ kind: 'Role', name: 'a' });
    expect(check('rbac.authorization.k8s.io/v1/RoleBinding', binding({ kind: 'Role', name: 'b' }), old)).toEqual([
      'roleRef: Invalid value: {"kind":"Role","name":"b","apiGroup":"rbac.authorization.cluster.io"}: cannot change roleRef',
    ]);
    expect(check('rbac.authorization.k8s.io/v1/RoleBinding', binding({ kind: 'Role', name: 'a' }, []), old)).toEqual([]);
  });
});

const uid = '6a1e4c1c-0000-4000-8000-000000000001';
const job = (spec: Obj = {}, metaExtra: Obj = { uid }): Obj => ({
  metadata: { ...meta('pi'), ...metaExtra },
  spec: { template: { spec: podSpec({ restartPolicy: 'Never' }) }, ...spec },
});

describe('Job and CronJob', () => {
  it.each<[string, Obj, string | undefined]>([
    ['valid with generated selector', job(), undefined],
    ['restart policy defaults to Always and is rejected', job({ template: { spec: podSpec() } }), 'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'],
    ['manual selector needs a selector', job({ manualSelector: true }), 'spec.selector: Required value'],
    ['manual selector matching', job({ manualSelector: true, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: podSpec({ restartPolicy: 'Never' }) } }), undefined],
    ['manual selector not matching', job({ manualSelector: true, selector: { matchLabels: { a: 'b' } } }), '`selector` does not match template `labels`'],
    ['negative backoff', job({ backoffLimit: -1 }), 'spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0'],
    ['indexed needs completions', job({ completionMode: 'Indexed', parallelism: 2 }), 'spec.completions: Required value: when completion mode is Indexed'],
    ['wrong generated uid label', job({ template: { metadata: { labels: { 'batch.cluster.io/controller-uid': 'other' } }, spec: podSpec({ restartPolicy: 'Never' }) } }), '`selector` not auto-generated'],
  ])('%s', (_n, obj, expected) => expectCase(check('batch/v1/Job', obj), expected));

  it('freezes the template and selector of a running job, not of a suspended one', () => {
    const old = job();
    const changed = job({ template: { spec: podSpec({ restartPolicy: 'OnFailure' }) } });
    expect(check('batch/v1/Job', changed, old).join('\n')).toContain('spec.template: Invalid value');
    expect(check('batch/v1/Job', { ...changed, spec: { ...changed.spec, suspend: true } }, { ...old, spec: { ...old.spec, suspend: true } })).toEqual([]);
  });

  const cronJob = (spec: Obj, name = 'hello'): Obj => ({
    metadata: meta(name),
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: podSpec({ restartPolicy: 'OnFailure' }) } } }, ...spec },
  });
  it.each<[string, Obj, string | undefined]>([
    ['valid', cronJob({}), undefined],
    ['descriptor', cronJob({ schedule: '@hourly' }), undefined],
    ['every', cronJob({ schedule: '@every 1h30m' }), undefined],
    ['names and steps', cronJob({ schedule: '0 9-17/2 * JAN-MAR mon-fri' }), undefined],
    ['bad schedule', cronJob({ schedule: 'every minute' }), 'spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]'],
    ['out of range', cronJob({ schedule: '61 * * * *' }), 'end of range (61) above maximum (59): 61'],
    ['TZ in schedule', cronJob({ schedule: 'CRON_TZ=UTC 0 * * * *' }), 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'],
    ['valid time zone', cronJob({ timeZone: 'Europe/Paris' }), undefined],
    ['unknown time zone', cronJob({ timeZone: 'Mars/Olympus' }), 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'],
    ['name too long', cronJob({}, 'c'.repeat(53)), 'metadata.name: Invalid value: "' + 'c'.repeat(53) + '": must be no more than 52 characters'],
    ['bad concurrency policy', cronJob({ concurrencyPolicy: 'Sometimes' }), 'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'],
    ['job template restart Always', cronJob({ jobTemplate: { spec: { template: { spec: podSpec() } } } }), 'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always"'],
  ])('CronJob %s', (_n, obj, expected) => expectCase(check('batch/v1/CronJob', obj), expected));
});

const sts = (spec: Obj = {}): Obj => ({
  metadata: meta('db'),
  spec: { serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: template({ app: 'db' }), ...spec },
});
const ds = (spec: Obj = {}): Obj => ({ metadata: meta('ds'), spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...spec } });

describe('StatefulSet, DaemonSet, ReplicaSet, ReplicationController', () => {
  it.each<[string, string, Obj, string | undefined]>([
    ['valid sts', 'apps/v1/StatefulSet', sts(), undefined],
    ['sts bad policy', 'apps/v1/StatefulSet', sts({ podManagementPolicy: 'Random' }), 'spec.podManagementPolicy: Unsupported value: "Random": supported values: "OrderedReady", "Parallel"'],
    ['sts OnDelete with rollingUpdate', 'apps/v1/StatefulSet', sts({ updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } } }), "only allowed for updateStrategy 'RollingUpdate'"],
    ['sts negative partition', 'apps/v1/StatefulSet', sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } } }), 'spec.updateStrategy.rollingUpdate.partition: Invalid value: -1'],
    ['valid ds', 'apps/v1/DaemonSet', ds(), undefined],
    ['ds bad strategy', 'apps/v1/DaemonSet', ds({ updateStrategy: { type: 'Recreate' } }), 'spec.updateStrategy.type: Unsupported value: "Recreate": supported values: "OnDelete", "RollingUpdate"'],
    ['ds empty selector', 'apps/v1/DaemonSet', ds({ selector: { matchLabels: {} } }), 'empty selector is invalid for daemonset'],
    ['rs valid', 'apps/v1/ReplicaSet', ds(), undefined],
    ['rc valid', '/v1/ReplicationController', { metadata: meta('rc'), spec: { template: template() } }, undefined],
    ['rc selector mismatch', '/v1/ReplicationController', { metadata: meta('rc'), spec: { selector: { app: 'db' }, template: template() } }, '`selector` does not match template `labels`'],
  ])('%s', (_n, kind, obj, expected) => expectCase(check(kind, obj), expected));

  it('StatefulSet updates touch only the mutable fields', () => {
    expect(check('apps/v1/StatefulSet', sts({ replicas: 3, template: template({ app: 'db', v: '2' }) }), sts())).toEqual([]);
    expect(check('apps/v1/StatefulSet', sts({ serviceName: 'other' }), sts())).toEqual([
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ]);
  });

  it('StatefulSet mounts may name its volumeClaimTemplates (each pod gets that volume); other names are still not found', () => {
    const mounting = (mounts: Obj[]) => template({ app: 'db' }, podSpec({ containers: [{ ...container(), volumeMounts: mounts }] }));
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    expect(check('apps/v1/StatefulSet', sts({ template: mounting([{ name: 'data', mountPath: '/data' }]), volumeClaimTemplates: [claim] }))).toEqual([]);
    expect(check('apps/v1/StatefulSet', sts({ template: mounting([{ name: 'data', mountPath: '/data' }, { name: 'cache', mountPath: '/cache' }]), volumeClaimTemplates: [claim] }))).toEqual([
      'spec.template.spec.containers[0].volumeMounts[1].name: Not found: "cache"',
    ]);
    // Only a StatefulSet adds volumes: a DaemonSet naming the same volume is refused.
    expect(check('apps/v1/DaemonSet', ds({ template: template({ app: 'web' }, podSpec({ containers: [{ ...container(), volumeMounts: [{ name: 'data', mountPath: '/data' }] }] })) }))).toEqual([
      'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"',
    ]);
  });

  it('DaemonSet selector is immutable', () => {
    const changed = ds({ selector: { matchLabels: { app: 'web', x: 'y' } }, template: template({ app: 'web', x: 'y' }) });
    expect(check('apps/v1/DaemonSet', changed, ds()).join('\n')).toContain('spec.selector: Invalid value');
  });
});

describe('other kinds', () => {
  it.each<[string, string, Obj, string | undefined]>([
    ['namespace', '/v1/Namespace', { metadata: { name: 'team-a' } }, undefined],
    ['namespace name is a label', '/v1/Namespace', { metadata: { name: 'team.a' } }, 'metadata.name: Invalid value: "team.a": must not contain dots'],
    ['namespace finalizer', '/v1/Namespace', { metadata: { name: 'n' }, spec: { finalizers: ['custom'] } }, 'spec.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified'],
    ['node taints', '/v1/Node', { metadata: { name: 'n1' }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }, { key: 'k', effect: 'NoSchedule' }] } }, 'spec.taints[1]: Duplicate value'],
    ['node taint effect', '/v1/Node', { metadata: { name: 'n1' }, spec: { taints: [{ key: 'k', effect: 'Sometimes' }] } }, 'spec.taints[0].effect: Unsupported value: "Sometimes"'],
    ['pvc', '/v1/PersistentVolumeClaim', { metadata: meta('c'), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }, undefined],
    ['pvc without storage', '/v1/PersistentVolumeClaim', { metadata: meta('c'), spec: { accessModes: ['ReadWriteOnce'] } }, 'spec.resources[storage]: Required value'],
    ['pdb both set', 'policy/v1/PodDisruptionBudget', { metadata: meta('p'), spec: { minAvailable: 1, maxUnavailable: '10%' } }, 'minAvailable and maxUnavailable cannot be both set'],
    ['pdb percent', 'policy/v1/PodDisruptionBudget', { metadata: meta('p'), spec: { minAvailable: '150%' } }, 'spec.minAvailable: Invalid value: "150%": must not be greater than 100%'],
    ['hpa', 'autoscaling/v2/HorizontalPodAutoscaler', { metadata: meta('h'), spec: { maxReplicas: 3, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } } }, undefined],
    ['hpa min above max', 'autoscaling/v2/HorizontalPodAutoscaler', { metadata: meta('h'), spec: { minReplicas: 5, maxReplicas: 3, scaleTargetRef: { kind: 'Deployment', name: 'web' } } }, 'spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`'],
    ['hpa without target', 'autoscaling/v2/HorizontalPodAutoscaler', { metadata: meta('h'), spec: { maxReplicas: 3, scaleTargetRef: { name: 'web' } } }, 'spec.scaleTargetRef.kind: Required value'],
    ['hpa v1', 'autoscaling/v1/HorizontalPodAutoscaler', { metadata: meta('h'), spec: { maxReplicas: 3, targetCPUUtilizationPercentage: 0, scaleTargetRef: { kind: 'Deployment', name: 'web' } } }, 'spec.targetCPUUtilizationPercentage: Invalid value: 0'],
    ['lease', 'coordination.k8s.io/v1/Lease', { metadata: meta('l'), spec: { holderIdentity: 'a', leaseDurationSeconds: 0 } }, 'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'],
    ['core event', '/v1/Event', { metadata: meta('e.1'), involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Started' }, undefined],
    ['core event namespace mismatch', '/v1/Event', { metadata: meta('e.1'), involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' } }, 'involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
    ['events.k8s.io event', 'events.k8s.io/v1/Event', { metadata: meta('e'), eventTime: '2025-01-01T00:00:00.000000Z', type: 'Normal', reason: 'R', action: 'A', reportingController: 'example.com/ctl', reportingInstance: 'i' }, undefined],
    ['events.k8s.io event without controller', 'events.k8s.io/v1/Event', { metadata: meta('e'), eventTime: '2025-01-01T00:00:00Z', type: 'Normal', reason: 'R', action: 'A', reportingInstance: 'i' }, 'reportingController: Required value'],
    ['events.k8s.io event without eventTime', 'events.k8s.io/v1/Event', { metadata: meta('e'), type: 'Normal', reason: 'R', action: 'A', reportingController: 'c', reportingInstance: 'i' }, 'eventTime: Required value'],
    ['events.k8s.io event regarding nothing outside default', 'events.k8s.io/v1/Event', { metadata: meta('e', 'team'), eventTime: '2025-01-01T00:00:00Z', type: 'Normal', reason: 'R', action: 'A', reportingController: 'c', reportingInstance: 'i' }, 'involvedObject.namespace: Invalid value: "": does not match event.namespace'],
    ['events.k8s.io event regarding another namespace', 'events.k8s.io/v1/Event', { metadata: meta('e', 'team'), eventTime: '2025-01-01T00:00:00Z', type: 'Normal', reason: 'R', action: 'A', reportingController: 'c', reportingInstance: 'i', regarding: { kind: 'Pod', name: 'p', namespace: 'other' } }, undefined],
    ['service account', '/v1/ServiceAccount', { metadata: meta('sa') }, undefined],
  ])('%s', (_n, kind, obj, expected) => expectCase(check(kind, obj), expected));

  it('an events.k8s.io update may lack eventTime: core events, stored in the same place, never had one', () => {
    const legacy = { metadata: meta('e.1'), regarding: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Started', note: 'n', deprecatedCount: 2 };
    expect(check('events.k8s.io/v1/Event', { ...legacy, metadata: { ...meta('e.1'), labels: { a: 'b' } } }, legacy)).toEqual([]);
    expect(check('events.k8s.io/v1/Event', { ...legacy, note: 'changed' }, legacy).join('\n')).toContain('note: Invalid value');
  });
});

const crd = (spec: Obj = {}, name = 'widgets.example.com'): Obj => ({
  metadata: { name },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
      },
    ],
    ...spec,
  },
});

describe('CustomResourceDefinition', () => {
  const v = (name: string, storage: boolean, schema: Obj = { type: 'object' }) => ({ name, served: true, storage, schema: { openAPIV3Schema: schema } });
  it.each<[string, Obj, string | undefined]>([
    ['valid', crd(), undefined],
    ['name mismatch', crd({}, 'gadgets.example.com'), 'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'],
    ['group needs a dot', crd({ group: 'example' }, 'widgets.example'), 'spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ['bad scope', crd({ scope: 'Global' }), 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ['two storage versions', crd({ versions: [v('v1', true), v('v2', true)] }), 'must have exactly one version marked as storage version'],
    ['duplicate versions', crd({ versions: [v('v1', true), v('v1', false)] }), 'spec.versions[1].name: Duplicate value: "v1"'],
    ['no schema', crd({ versions: [{ name: 'v1', served: true, storage: true }] }), 'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ['root not an object', crd({ versions: [v('v1', true, { type: 'string' })] }), 'spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root'],
    ['untyped property', crd({ versions: [v('v1', true, { type: 'object', properties: { spec: { properties: {} } } })] }), 'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields'],
    ['preserve-unknown opt-out (cluster spelling)', crd({ versions: [v('v1', true, { type: 'object', properties: { spec: { 'x-cluster-preserve-unknown-fields': true } } })] }), undefined],
    ['preserveUnknownFields on create', crd({ preserveUnknownFields: true }), 'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'],
    ['preserveUnknownFields false', crd({ preserveUnknownFields: false }), undefined],
    ['bad plural', crd({ names: { plural: 'Widgets', kind: 'Widget' } }, 'Widgets.example.com'), 'spec.names.plural: Invalid value: "Widgets"'],
    ['valid RE2 pattern', crd({ versions: [v('v1', true, { type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]+\\p{L}*$' } } })] }), undefined],
    [
      'pattern that does not parse',
      crd({ versions: [v('v1', true, { type: 'object', properties: { s: { type: 'string', pattern: '+' } } })] }),
      'spec.versions[0].schema.openAPIV3Schema.properties[s].pattern: Invalid value: "+": must be a valid regular expression, but isn\'t: error parsing regexp: missing argument to repetition operator: `+`',
    ],
    [
      'lookahead is not RE2',
      crd({ versions: [v('v1', true, { type: 'object', properties: { l: { type: 'array', items: { type: 'string', pattern: '^(?!x)' } } } })] }),
      'spec.versions[0].schema.openAPIV3Schema.properties[l].items.pattern: Invalid value: "^(?!x)": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
    ],
    [
      'backreference inside a junctor',
      crd({ versions: [v('v1', true, { type: 'object', properties: { s: { type: 'string' } }, anyOf: [{ properties: { s: { pattern: '(a)\\1' } } }] })] }),
      'spec.versions[0].schema.openAPIV3Schema.anyOf[0].properties[s].pattern: Invalid value: "(a)\\\\1": must be a valid regular expression, but isn\'t: error parsing regexp: invalid escape sequence: `\\1`',
    ],
  ])('%s', (_n, obj, expected) => expectCase(check('apiextensions.k8s.io/v1/CustomResourceDefinition', obj), expected));

  it('an update may keep preserveUnknownFields an older object already had, not turn it on', () => {
    const on = crd({ preserveUnknownFields: true });
    expectCase(check('apiextensions.k8s.io/v1/CustomResourceDefinition', on, crd({ preserveUnknownFields: true })), undefined);
    expectCase(check('apiextensions.k8s.io/v1/CustomResourceDefinition', on, crd()), 'spec.preserveUnknownFields: Invalid value: true');
  });
});

describe('CustomResourceDefinition selectableFields', () => {
  const KIND = 'apiextensions.k8s.io/v1/CustomResourceDefinition';
  const specSchema = {
    type: 'object',
    properties: {
      color: { type: 'string', enum: ['red', 'blue'] },
      size: { type: 'integer' },
      ready: { type: 'boolean' },
      ratio: { type: 'number' },
      when: { type: 'string', format: 'date-time' },
      port: { 'x-cluster-int-or-string': true },
      items: { type: 'array', items: { type: 'string' } },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      free: { type: 'object', 'x-cluster-preserve-unknown-fields': true },
    },
  };
  const rootSchema = (extra: Obj = {}) => ({ type: 'object', properties: { spec: specSchema, ...extra } });
  // null: no schema (undefined would take the default).
  const version = (name: string, storage: boolean, fields: string[] | undefined, schema: Obj | null = rootSchema()): Obj => ({
    name,
    served: true,
    storage,
    ...(schema ? { schema: { openAPIV3Schema: schema } } : {}),
    ...(fields ? { selectableFields: fields.map((jsonPath) => ({ jsonPath })) } : {}),
  });
  const withFields = (...fields: string[]) => crd({ versions: [version('v1', true, fields)] });

  it('reports each bad field as upstream does, at spec.selectableFields when there is one version', () => {
    const msgs = check(KIND, withFields('.metadata.name', 'spec.color', '.spec', '.spec.items[0]', '.spec.missing', '.spec.color', '.spec.color'));
    expect(msgs).toEqual([
      'spec.selectableFields[0].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[1].jsonPath: Invalid value: "spec.color": is an invalid path: expected [ or . but got: spec',
      'spec.selectableFields[2].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.selectableFields[3].jsonPath: Invalid value: ".spec.items[0]": is an invalid path: array notation is not allowed',
      'spec.selectableFields[4].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[6].jsonPath: Duplicate value: ".spec.color"',
    ]);
  });

  it.each<[string, Obj, string | undefined]>([
    ['string, enum, integer, boolean, formatted string and map value', withFields('.spec.color', '.spec.size', '.spec.ready', '.spec.when', '.spec.labels.team'), undefined],
    ['no selectable fields', crd({ versions: [version('v1', true, [])] }), undefined],
    ['empty jsonPath', withFields(''), 'spec.selectableFields[0].jsonPath: Required value'],
    ['number', withFields('.spec.ratio'), 'spec.selectableFields[0].jsonPath: Invalid value: ".spec.ratio": must point to a field of type string, boolean or integer.'],
    ['int-or-string has no type', withFields('.spec.port'), 'spec.selectableFields[0].jsonPath: Invalid value: ".spec.port": must point to a field of type string'],
    ['array', withFields('.spec.items'), 'spec.selectableFields[0].jsonPath: Invalid value: ".spec.items": must point to a field of type string'],
    ['undeclared field under preserve-unknown-fields', withFields('.spec.free.x'), 'spec.selectableFields[0].jsonPath: Invalid value: ".spec.free.x": is an invalid path: does not refer to a valid field'],
    ['trailing dot', withFields('.spec.'), 'spec.selectableFields[0].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON path'],
    ['quoted key notation', withFields(".spec['color']"), `spec.selectableFields[0].jsonPath: Invalid value: ".spec['color']": is an invalid path: array notation is not allowed`],
    ['field in a declared metadata', crd({ versions: [version('v1', true, ['.metadata.name'], rootSchema({ metadata: { type: 'object', properties: { name: { type: 'string' } } } }))] }), 'spec.selectableFields[0].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata'],
    ['nine distinct fields', withFields('.spec.color', '.spec.size', '.spec.ready', '.spec.when', '.spec.labels.a', '.spec.labels.b', '.spec.labels.c', '.spec.labels.d', '.spec.labels.e'), 'spec.selectableFields: Too many: 9: must have at most 8 items'],
    ['eight distinct fields and a duplicate', withFields('.spec.color', '.spec.size', '.spec.ready', '.spec.when', '.spec.labels.a', '.spec.labels.b', '.spec.labels.c', '.spec.labels.d', '.spec.color'), 'spec.selectableFields[8].jsonPath: Duplicate value: ".spec.color"'],
    ['no schema', crd({ versions: [version('v1', true, ['.spec.color'], null)] }), 'spec.selectableFields: Invalid value: "": selectableFields may only be set when validations.schema is included'],
    [
      'versions with their own schemas and fields',
      crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, ['.spec.size', '.spec.nope'], rootSchema({ status: { type: 'object' } }))] }),
      'spec.versions[1].selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
    ],
    [
      // Upstream 1.32 refuses this valid definition (kubernetes/kubernetes#140689); accepted here.
      'versions with their own schemas and the same fields',
      crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, ['.spec.color'], rootSchema({ status: { type: 'object' } }))] }),
      undefined,
    ],
    [
      'versions with their own schemas and the same fields, one bad in the second schema',
      crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, ['.spec.color'], { type: 'object', properties: { spec: { type: 'object', properties: { color: { type: 'object' } } } } })] }),
      'spec.versions[1].selectableFields[0].jsonPath: Invalid value: ".spec.color": must point to a field of type string',
    ],
    [
      // Upstream 1.32 refuses this valid definition too (the same bug); accepted here.
      'versions with one schema and their own fields',
      crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, ['.spec.size'])] }),
      undefined,
    ],
    [
      'versions with one schema and their own fields, one bad',
      crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, ['.spec.items'])] }),
      'spec.versions[1].selectableFields[0].jsonPath: Invalid value: ".spec.items": must point to a field of type string',
    ],
    ['versions with one schema and the same fields', crd({ versions: [version('v1', true, ['.spec.color']), version('v2', false, ['.spec.color'])] }), undefined],
  ])('%s', (_n, obj, expected) => expectCase(check(KIND, obj), expected));

  it('checks on update too', () => {
    const old = withFields('.spec.color');
    expect(check(KIND, withFields('.spec.color'), old)).toEqual([]);
    expect(check(KIND, withFields('.spec'), old)).toEqual([
      'spec.selectableFields[0].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
    ]);
  });

  it('reports the types upstream uses', () => {
    const crdObj = withFields('', '.spec.color', '.spec.color');
    const resource = catalogs.cluster.resourceForKind(cluster.group('apiextensions.k8s.io'), 'v1', 'CustomResourceDefinition')!;
    const errs = validateObject(resource, applyDefaults(resource, cloneJson(crdObj), cluster), { naming: cluster });
    expect(errs.map((e) => [e.type, e.field])).toEqual([
      ['FieldValueRequired', 'spec.selectableFields[0].jsonPath'],
      ['FieldValueDuplicate', 'spec.selectableFields[2].jsonPath'],
    ]);
  });
});

describe('validateKind table', () => {
  it('covers the kinds users rely on and ignores the rest', () => {
    const all = [...catalogs.cluster.all()];
    const covered = all.filter(hasKindValidator).map((r) => r.kind);
    for (const k of ['Pod', 'Deployment', 'Service', 'ConfigMap', 'Secret', 'Job', 'CronJob', 'RoleBinding', 'CustomResourceDefinition']) {
      expect(covered).toContain(k);
    }
    const lease = all.find((r) => r.kind === 'PriorityClass')!;
    expect(validateKind(lease, { metadata: { name: 'p' } })).toEqual([]);
    expect(validateKind(all.find((r) => r.kind === 'Pod')!, 'not an object')).toEqual([]);
  });
});

describe('cron schedules', () => {
  it.each([
    ['* * * * *', undefined],
    ['0 0 1 1 *', undefined],
    ['*/15 0-6 ? * SUN', undefined],
    ['5,10,15 * * * *', undefined],
    ['@annually', undefined],
    ['@weekly', undefined],
    ['', 'empty spec string'],
    ['@sometimes', 'unrecognized descriptor: @sometimes'],
    ['@every forever', 'failed to parse duration @every forever'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['x * * * *', 'failed to parse int from x'],
    ['0 0 0 * *', 'beginning of range (0) below minimum (1): 0'],
  ])('%j', (schedule, expected) => {
    const err = cronScheduleError(schedule);
    if (expected === undefined) expect(err).toBeUndefined();
    else expect(err).toContain(expected);
  });

  it('knows time zones', () => {
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('America/New_York')).toBe(true);
    expect(isValidTimeZone('Local')).toBe(false);
    expect(isValidTimeZone('Nowhere/Land')).toBe(false);
  });
});
