import { describe, expect, it } from 'vitest';
import { base64ErrorOffset, goDecodeError } from './go-decode.js';
import { QUANTITY_FORMAT_MESSAGE } from './quantity.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests poke arbitrary paths into sample bodies

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const POD = 'io.k8s.api.core.v1.Pod';
const SERVICE = 'io.k8s.api.core.v1.Service';
const SECRET = 'io.k8s.api.core.v1.Secret';
const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap';

const deployment = (): Json => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' }, creationTimestamp: null },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            args: ['--port', '80'],
            env: [{ name: 'A', value: 'x' }],
            ports: [{ containerPort: 80, protocol: 'TCP' }],
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: 1 } },
          },
        ],
      },
    },
  },
});

const pod = (): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }], terminationGracePeriodSeconds: 30 },
});

const cannot = (what: string, field: string, type: string) => `json: cannot unmarshal ${what} into Go struct field ${field} of type ${type}`;

describe('goDecodeError', () => {
  it('accepts well-formed bodies', () => {
    expect(goDecodeError(DEPLOYMENT, deployment())).toBeUndefined();
    expect(goDecodeError(POD, pod())).toBeUndefined();
  });

  it.each<[string, string, () => Json, string]>([
    ['int32 given a string', DEPLOYMENT, () => ({ ...deployment(), spec: { ...deployment().spec, replicas: 'three' } }), cannot('string', 'DeploymentSpec.spec.replicas', 'int32')],
    ['int32 given a fraction', DEPLOYMENT, () => ({ ...deployment(), spec: { ...deployment().spec, replicas: 1.5 } }), cannot('number 1.5', 'DeploymentSpec.spec.replicas', 'int32')],
    ['int32 overflow', DEPLOYMENT, () => ({ ...deployment(), spec: { ...deployment().spec, replicas: 2 ** 31 } }), cannot('number 2147483648', 'DeploymentSpec.spec.replicas', 'int32')],
    ['int32 given an object', DEPLOYMENT, () => ({ ...deployment(), spec: { ...deployment().spec, replicas: {} } }), cannot('object', 'DeploymentSpec.spec.replicas', 'int32')],
    ['struct given a string', DEPLOYMENT, () => ({ ...deployment(), spec: 'x' }), cannot('string', 'Deployment.spec', 'v1.DeploymentSpec')],
    ['map given a string', DEPLOYMENT, () => ({ ...deployment(), metadata: { name: 'web', labels: 'x' } }), cannot('string', 'ObjectMeta.metadata.labels', 'map[string]string')],
    ['map value given a number', DEPLOYMENT, () => ({ ...deployment(), metadata: { name: 'web', labels: { a: 1 } } }), cannot('number', 'ObjectMeta.metadata.labels', 'string')],
    ['metadata given a string', DEPLOYMENT, () => ({ ...deployment(), metadata: 'x' }), cannot('string', 'Deployment.metadata', 'v1.ObjectMeta')],
    ['slice given an object', POD, () => ({ ...pod(), spec: { containers: {} } }), cannot('object', 'PodSpec.spec.containers', '[]v1.Container')],
    ['string given a number, inside a slice element', POD, () => ({ ...pod(), spec: { containers: [{ name: 'c', image: 5 }] } }), cannot('number', 'Container.spec.containers.image', 'string')],
    ['[]string given a string', POD, () => ({ ...pod(), spec: { containers: [{ name: 'c', command: 'sleep' }] } }), cannot('string', 'Container.spec.containers.command', '[]string')],
    ['[]string element given a number', POD, () => ({ ...pod(), spec: { containers: [{ name: 'c', command: ['sleep', 5] }] } }), cannot('number', 'Container.spec.containers.command', 'string')],
    ['int64 given a string', POD, () => ({ ...pod(), spec: { ...pod().spec, terminationGracePeriodSeconds: '30' } }), cannot('string', 'PodSpec.spec.terminationGracePeriodSeconds', 'int64')],
    ['int64 given a fraction', POD, () => ({ ...pod(), spec: { ...pod().spec, terminationGracePeriodSeconds: 0.5 } }), cannot('number 0.5', 'PodSpec.spec.terminationGracePeriodSeconds', 'int64')],
    ['bool given a string', POD, () => ({ ...pod(), spec: { ...pod().spec, hostNetwork: 'yes' } }), cannot('string', 'PodSpec.spec.hostNetwork', 'bool')],
    ['string given a bool', POD, () => ({ ...pod(), spec: { ...pod().spec, nodeName: true } }), cannot('bool', 'PodSpec.spec.nodeName', 'string')],
    ['string given an array', POD, () => ({ ...pod(), spec: { ...pod().spec, nodeName: [] } }), cannot('array', 'PodSpec.spec.nodeName', 'string')],
    ['named string type', POD, () => ({ ...pod(), spec: { ...pod().spec, restartPolicy: 1 } }), cannot('number', 'PodSpec.spec.restartPolicy', 'v1.RestartPolicy')],
    ['named slice element type', POD, () => ({ ...pod(), spec: { containers: [{ name: 'c', securityContext: { capabilities: { add: [1] } } }] } }), cannot('number', 'Capabilities.spec.containers.securityContext.capabilities.add', 'v1.Capability')],
    ['named map type', POD, () => ({ ...pod(), spec: { containers: [{ name: 'c', resources: { limits: [] } }] } }), cannot('array', 'ResourceRequirements.spec.containers.resources.limits', 'v1.ResourceList')],
    ['deep path through a template', DEPLOYMENT, () => { const d = deployment(); d.spec.template.spec.containers[0].env[0].value = true; return d; }, cannot('bool', 'EnvVar.spec.template.spec.containers.env.value', 'string')],
    ['int-or-string given a bool', DEPLOYMENT, () => { const d = deployment(); d.spec.strategy.rollingUpdate.maxSurge = true; return d; }, cannot('bool', 'RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge', 'int32')],
    ['int-or-string given a fraction', DEPLOYMENT, () => { const d = deployment(); d.spec.strategy.rollingUpdate.maxUnavailable = 1.5; return d; }, cannot('number 1.5', 'RollingUpdateDeployment.spec.strategy.rollingUpdate.maxUnavailable', 'int32')],
    ['int-or-string given an object', SERVICE, () => ({ apiVersion: 'v1', kind: 'Service', spec: { ports: [{ port: 80, targetPort: {} }] } }), cannot('object', 'ServicePort.spec.ports.targetPort', 'int32')],
    ['quantity given a bool', DEPLOYMENT, () => { const d = deployment(); d.spec.template.spec.containers[0].resources.limits.cpu = true; return d; }, QUANTITY_FORMAT_MESSAGE],
    ['quantity given a malformed string', DEPLOYMENT, () => { const d = deployment(); d.spec.template.spec.containers[0].resources.requests.memory = '64 MB'; return d; }, QUANTITY_FORMAT_MESSAGE],
    ['time given a number', DEPLOYMENT, () => ({ ...deployment(), metadata: { name: 'web', creationTimestamp: 5 } }), cannot('number', 'ObjectMeta.metadata.creationTimestamp', 'string')],
    ['bytes map value given a number', SECRET, () => ({ apiVersion: 'v1', kind: 'Secret', data: { a: 5 } }), cannot('number', 'Secret.data', '[]uint8')],
    ['bytes map value with bad base64', SECRET, () => ({ apiVersion: 'v1', kind: 'Secret', data: { a: 'hunter2!' } }), 'illegal base64 data at input byte 7'],
    ['string map value given a number', CONFIGMAP, () => ({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: 1 } }), cannot('number', 'ConfigMap.data', 'string')],
  ])('%s', (_name, schema, body, message) => {
    expect(goDecodeError(schema, body())).toBe(message);
  });

  it.each<[string, string, () => Json]>([
    ['null scalar, pointer and struct fields', DEPLOYMENT, () => ({ ...deployment(), spec: { ...deployment().spec, replicas: null, strategy: null, paused: null } })],
    ['null map, slice and map values', DEPLOYMENT, () => ({ ...deployment(), metadata: { name: 'web', labels: { a: null }, annotations: null, finalizers: null } })],
    ['null slice elements and int-or-string', DEPLOYMENT, () => { const d = deployment(); d.spec.template.spec.containers[0].args = [null]; d.spec.strategy.rollingUpdate.maxSurge = null; return d; }],
    ['null quantity and time', DEPLOYMENT, () => { const d = deployment(); d.spec.template.spec.containers[0].resources.limits.cpu = null; d.metadata.creationTimestamp = null; return d; }],
    ['int-or-string as string and int', SERVICE, () => ({ apiVersion: 'v1', kind: 'Service', spec: { ports: [{ port: 80, targetPort: 'http' }, { port: 81, targetPort: 8081 }] } })],
    ['quantities as numbers and strings', DEPLOYMENT, () => { const d = deployment(); d.spec.template.spec.containers[0].resources.limits = { cpu: 0.5, memory: '1Gi', 'example.com/gpu': 2 }; return d; }],
    ['a wrong type under an unknown field', DEPLOYMENT, () => ({ ...deployment(), spec: { ...deployment().spec, replica: 'three' } })],
    ['int64 at its bounds', POD, () => ({ ...pod(), spec: { ...pod().spec, activeDeadlineSeconds: 2 ** 53 } })],
    ['base64 with line breaks', SECRET, () => ({ apiVersion: 'v1', kind: 'Secret', data: { a: 'YWJj\nZGVm' } })],
    ['free-form values', 'io.k8s.api.apps.v1.ControllerRevision', () => ({ apiVersion: 'apps/v1', kind: 'ControllerRevision', revision: 1, data: { anything: [1, 'x', true] } })],
  ])('accepts %s', (_name, schema, body) => {
    expect(goDecodeError(schema, body())).toBeUndefined();
  });

  it('reports the first type error in document order', () => {
    const d = deployment();
    d.spec.replicas = 'three';
    d.spec.template.spec.containers[0].image = 5;
    expect(goDecodeError(DEPLOYMENT, d)).toBe(cannot('string', 'DeploymentSpec.spec.replicas', 'int32'));
    const reordered = { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: d.spec.template, replicas: 'three' } };
    expect(goDecodeError(DEPLOYMENT, reordered)).toBe(cannot('number', 'Container.spec.template.spec.containers.image', 'string'));
  });

  it('lets an error from a self-decoding type win over an earlier saved one, as Go returns it at once', () => {
    const d = deployment();
    d.spec.replicas = 'three';
    d.spec.template.spec.containers[0].resources.limits.cpu = 'lots';
    expect(goDecodeError(DEPLOYMENT, d)).toBe(QUANTITY_FORMAT_MESSAGE);
  });
});

describe('base64ErrorOffset', () => {
  it.each<[string, number | undefined]>([
    ['', undefined],
    ['YWJj', undefined],
    ['YQ==', undefined],
    ['YWI=', undefined],
    ['YW\r\nJj', undefined],
    ['YWJ', 0],
    ['YWJjZ', 4],
    ['YQ=', 3],
    ['Y===', 1],
    ['YQ==YQ==', 4],
    ['YW!j', 2],
    ['hunter2!', 7],
    ['é', 0],
  ])('%j → %s', (text, offset) => {
    expect(base64ErrorOffset(text)).toBe(offset);
  });
});
