// Expected objects are what upstream's `kubectl create … --dry-run=server -o yaml` shows for the
// same input, without the fields the registry and admission own (uid, resourceVersion,
// creationTimestamp, generation, managedFields, clusterIP, the service-account volume,
// tolerations and priority added by admission plugins).
import { describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { applyDefaults, prepareForCreate, prepareForUpdate } from './defaults.js';
import { defaultPodSpec, imageTag } from './pod-spec.js';
import { podQOSClass } from './pod-status.js';

const kube = createNaming('kubernetes');
const cluster = createNaming('cluster');
const kubeCatalog = new ApiCatalog(kube);
const clusterCatalog = new ApiCatalog(cluster);
const res = (catalog: ApiCatalog, group: string, version: string, kind: string) => {
  const r = catalog.resourceForKind(group, version, kind);
  if (!r) throw new Error(`no ${group}/${version}/${kind}`);
  return r;
};
const K = (group: string, version: string, kind: string) => res(kubeCatalog, group, version, kind);

const defaultedTemplateSpec = (containers: object[], extra: object = {}) => ({
  containers,
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Always',
  schedulerName: 'default-scheduler',
  securityContext: {},
  terminationGracePeriodSeconds: 30,
  ...extra,
});
const defaultedContainer = (name: string, image: string, pull: string, extra: object = {}) => ({
  name,
  image,
  imagePullPolicy: pull,
  resources: {},
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  ...extra,
});

describe('applyDefaults matches upstream dry-run output', () => {
  it('Deployment', () => {
    const d = applyDefaults(K('apps', 'v1', 'Deployment'), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } },
      },
    });
    expect(d).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: {
        progressDeadlineSeconds: 600,
        replicas: 1,
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: defaultedTemplateSpec([defaultedContainer('nginx', 'nginx', 'Always')]),
        },
      },
      status: {},
    });
  });

  it('Pod (with create preparation)', () => {
    const r = K('', 'v1', 'Pod');
    const p = prepareForCreate(
      r,
      applyDefaults(r, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default', labels: { run: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      }),
    );
    expect(p).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { run: 'web' } },
      spec: defaultedTemplateSpec([defaultedContainer('web', 'nginx:1.27', 'IfNotPresent')], { enableServiceLinks: true }),
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    });
  });

  it('Service', () => {
    const s = applyDefaults(K('', 'v1', 'Service'), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { ports: [{ name: '80-8080', port: 80, targetPort: 8080 }], selector: { app: 'web' }, type: 'ClusterIP' },
    });
    expect(s).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: {
        internalTrafficPolicy: 'Cluster',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }],
        selector: { app: 'web' },
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    });
  });

  it('Job (with create preparation after uid assignment)', () => {
    const r = K('batch', 'v1', 'Job');
    const uid = '0f4e1c3a-1111-2222-3333-444455556666';
    const input = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'pi', namespace: 'default', uid },
      spec: { template: { metadata: {}, spec: { containers: [{ name: 'pi', image: 'perl' }], restartPolicy: 'Never' } } },
    };
    const labels = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': uid, 'job-name': 'pi' };
    const j = applyDefaults(r, prepareForCreate(r, input, kube), kube);
    expect(j).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'pi', namespace: 'default', uid, labels },
      spec: {
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        completions: 1,
        manualSelector: false,
        parallelism: 1,
        podReplacementPolicy: 'TerminatingOrFailed',
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
        suspend: false,
        template: {
          metadata: { labels },
          spec: defaultedTemplateSpec([defaultedContainer('pi', 'perl', 'Always')], { restartPolicy: 'Never' }),
        },
      },
      status: {},
    });
  });

  it('CronJob: the job template gets pod defaults but no Job defaults', () => {
    const c = applyDefaults(K('batch', 'v1', 'CronJob'), {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        schedule: '*/1 * * * *',
        jobTemplate: {
          metadata: { name: 'hello' },
          spec: { template: { spec: { containers: [{ name: 'hello', image: 'busybox' }], restartPolicy: 'OnFailure' } } },
        },
      },
    });
    expect(c).toEqual({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        concurrencyPolicy: 'Allow',
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          metadata: { name: 'hello' },
          spec: {
            template: {
              metadata: {},
              spec: defaultedTemplateSpec([defaultedContainer('hello', 'busybox', 'Always')], { restartPolicy: 'OnFailure' }),
            },
          },
        },
        schedule: '*/1 * * * *',
        successfulJobsHistoryLimit: 3,
        suspend: false,
      },
      status: {},
    });
  });

  it('StatefulSet', () => {
    const s = applyDefaults(K('apps', 'v1', 'StatefulSet'), {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'default' },
      spec: {
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres:17' }] } },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      },
    });
    expect(s).toEqual({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'default' },
      spec: {
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
        podManagementPolicy: 'OrderedReady',
        replicas: 1,
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'db' } },
        serviceName: 'db',
        template: {
          metadata: { labels: { app: 'db' } },
          spec: defaultedTemplateSpec([defaultedContainer('db', 'postgres:17', 'IfNotPresent')]),
        },
        updateStrategy: { rollingUpdate: { partition: 0 }, type: 'RollingUpdate' },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
            status: { phase: 'Pending' },
          },
        ],
      },
      status: { availableReplicas: 0, replicas: 0 },
    });
  });

  it('DaemonSet', () => {
    const d = applyDefaults(K('apps', 'v1', 'DaemonSet'), {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'kube-system' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'agent@sha256:abcd' }] } },
      },
    });
    expect(d).toEqual({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'kube-system' },
      spec: {
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: defaultedTemplateSpec([defaultedContainer('agent', 'agent@sha256:abcd', 'IfNotPresent')]),
        },
        updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' },
      },
      status: { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 },
    });
  });
});

describe('applyDefaults details', () => {
  it('is idempotent', () => {
    const r = K('apps', 'v1', 'Deployment');
    const once = applyDefaults(r, {
      metadata: { name: 'x', namespace: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }] } } },
    });
    const twice = applyDefaults(r, structuredClone(once));
    expect(twice).toEqual(once);
    expect((once as any).spec.template.spec.containers[0].ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
    expect((once as any).spec.template.metadata).toEqual({});
  });

  it('keeps what the user set', () => {
    const d: any = applyDefaults(K('apps', 'v1', 'Deployment'), {
      spec: { replicas: 0, strategy: { type: 'Recreate' }, template: { spec: { restartPolicy: 'Never', containers: [] } } },
    });
    expect(d.spec.replicas).toBe(0);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
    expect(d.spec.template.spec.restartPolicy).toBe('Never');
  });

  it('pod-only defaults: requests from limits, service links, host ports', () => {
    const p: any = applyDefaults(K('', 'v1', 'Pod'), {
      spec: {
        hostNetwork: true,
        containers: [{ name: 'c', image: 'i:1', ports: [{ containerPort: 8080 }], resources: { limits: { cpu: '0.5', memory: '1Gi' } } }],
      },
    });
    expect(p.spec.containers[0].resources).toEqual({ limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } });
    expect(p.spec.containers[0].ports[0]).toEqual({ containerPort: 8080, hostPort: 8080, protocol: 'TCP' });
    expect(p.spec.enableServiceLinks).toBe(true);
    expect(podQOSClass(p)).toBe('Guaranteed');
    const template: any = applyDefaults(K('apps', 'v1', 'ReplicaSet'), {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'i:1', resources: { limits: { cpu: '1' } } }] } } },
    });
    expect(template.spec.template.spec.containers[0].resources).toEqual({ limits: { cpu: '1' } });
    expect(template.spec.template.spec.enableServiceLinks).toBeUndefined();
  });

  it('volumes, probes and downward API references', () => {
    const p: any = applyDefaults(K('', 'v1', 'Pod'), {
      spec: {
        containers: [
          {
            name: 'c',
            image: 'i:1',
            livenessProbe: { httpGet: { port: 8080 } },
            env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
          },
        ],
        volumes: [
          { name: 'scratch' },
          { name: 'cfg', configMap: { name: 'cfg' } },
          { name: 'host', hostPath: { path: '/var/log' } },
          { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
        ],
      },
    });
    expect(p.spec.containers[0].livenessProbe).toEqual({
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(p.spec.containers[0].env[0].valueFrom.fieldRef).toEqual({ fieldPath: 'spec.nodeName', apiVersion: 'v1' });
    expect(p.spec.volumes).toEqual([
      { name: 'scratch', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } },
      { name: 'host', hostPath: { path: '/var/log', type: '' } },
      { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }], defaultMode: 420 } },
    ]);
  });

  it('drops nulls and canonicalizes quantities, rounding resource lists up to milli', () => {
    const p: any = applyDefaults(K('', 'v1', 'Pod'), {
      metadata: { name: 'x', labels: null },
      spec: { nodeName: null, containers: [{ name: 'c', image: 'i:1', resources: { requests: { cpu: 0.0001, memory: '1024Mi' } } }] },
    });
    expect(p.metadata).toEqual({ name: 'x' });
    expect('nodeName' in p.spec).toBe(false);
    expect(p.spec.containers[0].resources.requests).toEqual({ cpu: '1m', memory: '1Gi' });
  });

  it('Service variants: ClientIP affinity, NodePort, LoadBalancer, headless, ExternalName', () => {
    const svc = (spec: object): any => applyDefaults(K('', 'v1', 'Service'), { spec }).spec;
    expect(svc({ sessionAffinity: 'ClientIP', ports: [{ port: 80 }] }).sessionAffinityConfig).toEqual({ clientIP: { timeoutSeconds: 10800 } });
    expect(svc({ type: 'NodePort', ports: [{ port: 80, targetPort: 'http' }] })).toMatchObject({
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }],
    });
    expect(svc({ type: 'LoadBalancer', ports: [{ port: 80 }] }).allocateLoadBalancerNodePorts).toBe(true);
    expect(svc({ clusterIP: 'None', ports: [{ port: 80 }] })).toMatchObject({ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4'] });
    const ext = svc({ type: 'ExternalName', externalName: 'example.com' });
    expect(ext.ipFamilyPolicy).toBeUndefined();
    expect(ext.internalTrafficPolicy).toBeUndefined();
  });

  it('Namespace label and create preparation under both namings', () => {
    const ns = (catalog: ApiCatalog, naming = cluster) => {
      const r = res(catalog, '', 'v1', 'Namespace');
      return prepareForCreate(r, applyDefaults(r, { metadata: { name: 'team-a' } }, naming), naming) as any;
    };
    expect(ns(clusterCatalog)).toEqual({
      metadata: { name: 'team-a', labels: { 'cluster.io/metadata.name': 'team-a' } },
      spec: { finalizers: ['cluster'] },
      status: { phase: 'Active' },
    });
    expect(ns(kubeCatalog, kube)).toEqual({
      metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    // Updates never bring the finalizer back once the controller removed it.
    const r = res(clusterCatalog, '', 'v1', 'Namespace');
    expect((applyDefaults(r, { metadata: { name: 'x' }, spec: {} }) as any).spec).toEqual({});
  });

  it('Secret type and stringData folding', () => {
    const s: any = applyDefaults(K('', 'v1', 'Secret'), { metadata: { name: 's' }, data: { a: 'b2xk' }, stringData: { a: 'new', b: 'héllo' } });
    expect(s).toEqual({
      metadata: { name: 's' },
      type: 'Opaque',
      data: { a: Buffer.from('new').toString('base64'), b: Buffer.from('héllo').toString('base64') },
    });
  });

  it('PVC, RBAC subjects, HPA v2 and v1, NetworkPolicy, webhooks, CRD', () => {
    expect(applyDefaults(K('', 'v1', 'PersistentVolumeClaim'), { metadata: { name: 'c' }, spec: { resources: { requests: { storage: '1Gi' } } } })).toEqual({
      metadata: { name: 'c' },
      spec: { resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
      status: { phase: 'Pending' },
    });
    const rb: any = applyDefaults(
      res(clusterCatalog, 'rbac.authorization.cluster.io', 'v1', 'RoleBinding'),
      { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 's' }] },
      cluster,
    );
    expect(rb.roleRef.apiGroup).toBe('rbac.authorization.cluster.io');
    expect(rb.subjects).toEqual([
      { kind: 'User', name: 'u', apiGroup: 'rbac.authorization.cluster.io' },
      { kind: 'ServiceAccount', name: 's', apiGroup: '' },
    ]);
    const hpa2: any = applyDefaults(K('autoscaling', 'v2', 'HorizontalPodAutoscaler'), {
      spec: { maxReplicas: 5, scaleTargetRef: { kind: 'Deployment', name: 'web' }, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } },
    });
    expect(hpa2.spec.minReplicas).toBe(1);
    expect(hpa2.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    expect(hpa2.spec.behavior.scaleDown).toEqual({ stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
    expect(hpa2.spec.behavior.scaleUp.policies).toHaveLength(2);
    const hpa1: any = applyDefaults(K('autoscaling', 'v1', 'HorizontalPodAutoscaler'), { spec: { maxReplicas: 5, scaleTargetRef: { kind: 'Deployment', name: 'web' } } });
    expect(hpa1.spec.metrics).toBeUndefined();
    const np: any = applyDefaults(K('networking.k8s.io', 'v1', 'NetworkPolicy'), { spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] } });
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.egress[0].ports[0].protocol).toBe('TCP');
    const vwc: any = applyDefaults(K('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration'), {
      webhooks: [{ name: 'w.example.com', clientConfig: { service: { name: 's', namespace: 'n' } }, rules: [{ operations: ['CREATE'] }] }],
    });
    expect(vwc.webhooks[0]).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      rules: [{ operations: ['CREATE'], scope: '*' }],
      clientConfig: { service: { name: 's', namespace: 'n', port: 443 } },
    });
    const crd: any = applyDefaults(K('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition'), {
      spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' }, scope: 'Namespaced', versions: [] },
    });
    expect(crd.spec.names).toEqual({ plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' });
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
  });

  it('parses image tags for the pull policy', () => {
    expect(imageTag('nginx')).toBe('latest');
    expect(imageTag('registry:5000/team/app')).toBe('latest');
    expect(imageTag('registry:5000/team/app:1.2')).toBe('1.2');
    expect(imageTag('app@sha256:abc')).toBe('');
    expect(imageTag('app:latest@sha256:abc')).toBe('latest');
  });

  it('leaves non-objects and unknown kinds alone', () => {
    expect(applyDefaults(K('', 'v1', 'Pod'), 'nope')).toBe('nope');
    const lease = applyDefaults(K('coordination.k8s.io', 'v1', 'Lease'), { metadata: { name: 'l' }, spec: { holderIdentity: 'a' } });
    expect(lease).toEqual({ metadata: { name: 'l' }, spec: { holderIdentity: 'a' } });
  });
});

describe('prepareForUpdate', () => {
  it('carries system metadata over and keeps a client uid', () => {
    const old = { metadata: { name: 'a', uid: 'u1', generation: 4, creationTimestamp: '2024-01-01T00:00:00Z', deletionTimestamp: '2024-02-01T00:00:00Z', deletionGracePeriodSeconds: 0 } };
    const updated: any = prepareForUpdate(K('', 'v1', 'ConfigMap'), { metadata: { name: 'a', generation: 1, deletionTimestamp: null, creationTimestamp: '2030-01-01T00:00:00Z' } }, old);
    expect(updated.metadata).toEqual(old.metadata);
    const other: any = prepareForUpdate(K('', 'v1', 'ConfigMap'), { metadata: { name: 'a', uid: 'u2' } }, old);
    expect(other.metadata.uid).toBe('u2');
    const plain: any = prepareForUpdate(K('', 'v1', 'ConfigMap'), { metadata: { name: 'a', deletionTimestamp: '2024-02-01T00:00:00Z' } }, { metadata: { name: 'a' } });
    expect(plain.metadata).toEqual({ name: 'a' });
  });

  it('keeps namespace finalizers and service allocations', () => {
    const ns: any = prepareForUpdate(K('', 'v1', 'Namespace'), { metadata: { name: 'n' }, spec: {} }, { metadata: { name: 'n' }, spec: { finalizers: ['kubernetes'] } });
    expect(ns.spec.finalizers).toEqual(['kubernetes']);
    const old = { spec: { type: 'NodePort', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }] } };
    const svc: any = prepareForUpdate(K('', 'v1', 'Service'), { spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }, { port: 81, protocol: 'TCP' }] } }, old);
    expect(svc.spec).toEqual({ type: 'NodePort', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }, { port: 81, protocol: 'TCP' }] });
    const ext: any = prepareForUpdate(K('', 'v1', 'Service'), { spec: { type: 'ExternalName', externalName: 'x.example.com' } }, old);
    expect(ext.spec.clusterIP).toBeUndefined();
  });
});

describe('the deprecated serviceAccount alias', () => {
  it.each([
    ['name only', { serviceAccountName: 'builder' }, { serviceAccountName: 'builder', serviceAccount: 'builder' }],
    ['alias only', { serviceAccount: 'builder' }, { serviceAccountName: 'builder', serviceAccount: 'builder' }],
    ['both, different: the name wins', { serviceAccountName: 'builder', serviceAccount: 'old' }, { serviceAccountName: 'builder', serviceAccount: 'builder' }],
    ['empty alias dropped', { serviceAccount: '' }, {}],
    ['neither', {}, {}],
  ])('%s', (_name, given, want) => {
    const spec: Record<string, unknown> = { containers: [], ...given };
    defaultPodSpec(spec);
    expect({ serviceAccountName: spec.serviceAccountName, serviceAccount: spec.serviceAccount }).toEqual({ serviceAccountName: undefined, serviceAccount: undefined, ...want });
  });
});
