import { describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { columnDefinitionsFor, hasCustomTable, partialObjectMetadata, rowsFor, tableFor, type TableResource } from './table.js';

const k8s = createNaming('kubernetes');
const cluster = createNaming('cluster');
const now = new Date('2024-05-01T12:00:00Z');
const ago = (ms: number): string => new Date(now.getTime() - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;

const r = (upstreamGroup: string, resource: string, version = 'v1'): TableResource => ({ upstreamGroup, resource, version });
const cells = (res: TableResource, obj: unknown, naming = k8s) => tableFor(res, [obj], { naming, now, includeObject: 'None' }).rows[0]!.cells;
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'ns', creationTimestamp: ago(2 * HOUR), ...extra });

describe('table assembly', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: meta('p', { uid: 'u1', resourceVersion: '7' }), spec: { containers: [{ name: 'c' }] } };

  it('builds kind Table in the meta group of the naming', () => {
    const t = tableFor(r('', 'pods'), [pod], { naming: cluster, now });
    expect(t.kind).toBe('Table');
    expect(t.apiVersion).toBe('meta.cluster.io/v1');
    expect(t.metadata).toEqual({});
    expect(tableFor(r('', 'pods'), [], { naming: k8s, now }).apiVersion).toBe('meta.k8s.io/v1');
  });

  it('defaults includeObject to Metadata: PartialObjectMetadata rows', () => {
    const t = tableFor(r('', 'pods'), [pod], { naming: k8s, now });
    expect(t.rows[0]!.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pod.metadata });
    expect(partialObjectMetadata(pod, cluster).apiVersion).toBe('meta.cluster.io/v1');
  });

  it('includeObject=Object embeds the object, None leaves it out', () => {
    expect(tableFor(r('', 'pods'), [pod], { naming: k8s, now, includeObject: 'Object' }).rows[0]!.object).toBe(pod);
    const none = tableFor(r('', 'pods'), [pod], { naming: k8s, now, includeObject: 'None' }).rows[0]!;
    expect('object' in none).toBe(false);
  });

  it('copies list metadata and can omit headers', () => {
    const t = tableFor(r('', 'pods'), [pod], {
      naming: k8s,
      now,
      noHeaders: true,
      listMeta: { resourceVersion: '10', continue: 'tok', remainingItemCount: 3 },
    });
    expect(t.metadata).toEqual({ resourceVersion: '10', continue: 'tok', remainingItemCount: 3 });
    expect(t.columnDefinitions).toEqual([]);
  });

  it('gives kinds without a printer exactly Name and Created At', () => {
    for (const res of [r('rbac.authorization.k8s.io', 'roles'), r('rbac.authorization.k8s.io', 'clusterroles'), r('apiextensions.k8s.io', 'customresourcedefinitions')]) {
      expect(hasCustomTable(res)).toBe(false);
      const defs = columnDefinitionsFor(res);
      expect(defs.map((d) => [d.name, d.type, d.format, d.priority])).toEqual([
        ['Name', 'string', 'name', 0],
        ['Created At', 'date', '', 0],
      ]);
      expect(defs[0]!.description).toMatch(/^Name must be unique within a namespace/);
      expect(defs[1]!.description).toMatch(/^CreationTimestamp is a timestamp/);
    }
    expect(cells(r('rbac.authorization.k8s.io', 'roles'), { metadata: { name: 'x', creationTimestamp: '2024-01-02T03:04:05Z' } })).toEqual([
      'x',
      '2024-01-02T03:04:05Z',
    ]);
  });

  it('every printer returns one cell per column, for a bare and a malformed object', () => {
    const catalog = new ApiCatalog(k8s, () => true);
    let custom = 0;
    for (const g of catalog.groups()) {
      for (const v of g.versions) {
        for (const info of catalog.resources(g.name, v)) {
          const defs = columnDefinitionsFor(info);
          if (hasCustomTable(info)) custom++;
          for (const obj of [{ metadata: { name: 'x' } }, { metadata: 5, spec: 'nope', status: [] }, null]) {
            const row = rowsFor(info, [obj], { naming: k8s, now, includeObject: 'None' })[0]!;
            expect(row.cells.length, `${info.upstreamGroup}/${info.resource}`).toBe(defs.length);
          }
          for (const d of defs) expect(['string', 'integer', 'number', 'boolean', 'date']).toContain(d.type);
        }
      }
    }
    expect(custom).toBeGreaterThan(40);
  });
});

describe('column sets users know from kubectl', () => {
  // [resource, [name, type, priority] of every column]
  const cases: Array<[TableResource, string]> = [
    [r('', 'pods'), 'Name:string:0 Ready:string:0 Status:string:0 Restarts:string:0 Age:string:0 IP:string:1 Node:string:1 Nominated Node:string:1 Readiness Gates:string:1'],
    [r('', 'nodes'), 'Name:string:0 Status:string:0 Roles:string:0 Age:string:0 Version:string:0 Internal-IP:string:1 External-IP:string:1 OS-Image:string:1 Kernel-Version:string:1 Container-Runtime:string:1'],
    [r('', 'namespaces'), 'Name:string:0 Status:string:0 Age:string:0'],
    [r('', 'services'), 'Name:string:0 Type:string:0 Cluster-IP:string:0 External-IP:string:0 Port(s):string:0 Age:string:0 Selector:string:1'],
    [r('', 'endpoints'), 'Name:string:0 Endpoints:string:0 Age:string:0'],
    [r('', 'configmaps'), 'Name:string:0 Data:string:0 Age:string:0'],
    [r('', 'secrets'), 'Name:string:0 Type:string:0 Data:string:0 Age:string:0'],
    [r('', 'serviceaccounts'), 'Name:string:0 Secrets:string:0 Age:string:0'],
    [r('', 'events'), 'Last Seen:string:0 Type:string:0 Reason:string:0 Object:string:0 Subobject:string:1 Source:string:1 Message:string:0 First Seen:string:1 Count:string:1 Name:string:1'],
    [r('apps', 'deployments'), 'Name:string:0 Ready:string:0 Up-to-date:string:0 Available:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1'],
    [r('apps', 'replicasets'), 'Name:string:0 Desired:integer:0 Current:integer:0 Ready:integer:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1'],
    [r('apps', 'statefulsets'), 'Name:string:0 Ready:string:0 Age:string:0 Containers:string:1 Images:string:1'],
    [r('apps', 'daemonsets'), 'Name:string:0 Desired:integer:0 Current:integer:0 Ready:integer:0 Up-to-date:integer:0 Available:integer:0 Node Selector:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1'],
    [r('batch', 'jobs'), 'Name:string:0 Status:string:0 Completions:string:0 Duration:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1'],
    [r('batch', 'cronjobs'), 'Name:string:0 Schedule:string:0 Timezone:string:0 Suspend:boolean:0 Active:integer:0 Last Schedule:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1'],
    [r('coordination.k8s.io', 'leases'), 'Name:string:0 Holder:string:0 Age:string:0'],
    [r('rbac.authorization.k8s.io', 'rolebindings'), 'Name:string:0 Role:string:0 Age:string:0 Users:string:1 Groups:string:1 ServiceAccounts:string:1'],
    [r('', 'persistentvolumes'), 'Name:string:0 Capacity:string:0 Access Modes:string:0 Reclaim Policy:string:0 Status:string:0 Claim:string:0 StorageClass:string:0 VolumeAttributesClass:string:0 Reason:string:0 Age:string:0 VolumeMode:string:1'],
    [r('', 'persistentvolumeclaims'), 'Name:string:0 Status:string:0 Volume:string:0 Capacity:string:0 Access Modes:string:0 StorageClass:string:0 VolumeAttributesClass:string:0 Age:string:0 VolumeMode:string:1'],
    [r('storage.k8s.io', 'storageclasses'), 'Name:string:0 Provisioner:string:0 ReclaimPolicy:string:0 VolumeBindingMode:string:0 AllowVolumeExpansion:string:0 Age:string:0'],
    [r('networking.k8s.io', 'ingresses'), 'Name:string:0 Class:string:0 Hosts:string:0 Address:string:0 Ports:string:0 Age:string:0'],
    [r('autoscaling', 'horizontalpodautoscalers', 'v2'), 'Name:string:0 Reference:string:0 Targets:string:0 MinPods:string:0 MaxPods:string:0 Replicas:string:0 Age:string:0'],
    [r('policy', 'poddisruptionbudgets'), 'Name:string:0 Min Available:string:0 Max Unavailable:string:0 Allowed Disruptions:integer:0 Age:string:0'],
    [r('scheduling.k8s.io', 'priorityclasses'), 'Name:string:0 Value:integer:0 Global-Default:boolean:0 Age:string:0 PreemptionPolicy:string:0'],
    [r('networking.k8s.io', 'networkpolicies'), 'Name:string:0 Pod-Selector:string:0 Age:string:0'],
  ];
  it.each(cases)('%o', (res, expected) => {
    const defs = columnDefinitionsFor(res);
    expect(defs.map((d) => `${d.name}:${d.type}:${d.priority}`).join(' ')).toBe(expected);
    expect(defs.find((d) => d.name === 'Name')?.format).toBe('name');
  });

  it('takes descriptions from the schemas', () => {
    const pod = columnDefinitionsFor(r('', 'pods'));
    expect(pod.find((d) => d.name === 'IP')!.description).toMatch(/podIP address allocated to the pod/);
    expect(pod.find((d) => d.name === 'Ready')!.description).toBe('The aggregate readiness state of this pod for accepting traffic.');
  });
});

describe('node rows', () => {
  const node = (status: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    metadata: meta('n1', { namespace: undefined, ...(extra.metadata as object) }),
    spec: extra.spec ?? {},
    status,
  });
  const info = { kubeletVersion: 'v1.34.0', osImage: 'Debian', kernelVersion: '6.1', containerRuntimeVersion: 'containerd://2.0' };

  it('ready node with roles and addresses', () => {
    const n = node(
      {
        conditions: [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status: 'True' }],
        nodeInfo: info,
        addresses: [{ type: 'Hostname', address: 'h' }, { type: 'InternalIP', address: '10.0.0.2' }, { type: 'ExternalIP', address: '1.2.3.4' }],
      },
      { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '', 'kubernetes.io/role': 'edge' } } },
    );
    expect(cells(r('', 'nodes'), n)).toEqual(['n1', 'Ready', 'control-plane,edge,worker', '120m', 'v1.34.0', '10.0.0.2', '1.2.3.4', 'Debian', '6.1', 'containerd://2.0']);
  });

  it('reads role labels in the configured naming', () => {
    const n = node({}, { metadata: { labels: { 'node-role.cluster.io/infra': '', 'node-role.kubernetes.io/worker': '' } } });
    expect(cells(r('', 'nodes'), n, cluster)[2]).toBe('infra');
    expect(cells(r('', 'nodes'), n, k8s)[2]).toBe('worker');
  });

  it.each([
    [[{ type: 'Ready', status: 'False' }], false, 'NotReady'],
    [[{ type: 'Ready', status: 'Unknown' }], false, 'NotReady'],
    [[], false, 'Unknown'],
    [[{ type: 'Ready', status: 'True' }], true, 'Ready,SchedulingDisabled'],
    [[], true, 'Unknown,SchedulingDisabled'],
  ] as Array<[unknown[], boolean, string]>)('status %#', (conditions, unschedulable, text) => {
    const c = cells(r('', 'nodes'), node({ conditions }, { spec: { unschedulable } }));
    expect(c[1]).toBe(text);
    expect(c.slice(2)).toEqual(['<none>', '120m', '', '<none>', '<none>', '<unknown>', '<unknown>', '<unknown>']);
  });
});

describe('service and endpoints rows', () => {
  const svc = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => ({ metadata: meta('s'), spec, status });
  it.each([
    [
      'ClusterIP',
      svc({ type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10', 'fd00::a'], ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }], selector: { k: 'v', a: 'b' } }),
      ['s', 'ClusterIP', '10.96.0.10', '<none>', '53/UDP,53/TCP', '120m', 'a=b,k=v'],
    ],
    ['headless', svc({ type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] }), ['s', 'ClusterIP', 'None', '<none>', '<none>', '120m', '<none>']],
    ['external IPs', svc({ type: 'ClusterIP', clusterIPs: ['10.0.0.1'], externalIPs: ['1.1.1.1', '2.2.2.2'], ports: [{ port: 80 }] }), ['s', 'ClusterIP', '10.0.0.1', '1.1.1.1,2.2.2.2', '80/TCP', '120m', '<none>']],
    ['NodePort', svc({ type: 'NodePort', clusterIPs: ['10.0.0.1'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] }), ['s', 'NodePort', '10.0.0.1', '<none>', '80:30080/TCP', '120m', '<none>']],
    ['LoadBalancer pending', svc({ type: 'LoadBalancer', clusterIPs: ['10.0.0.1'] }), ['s', 'LoadBalancer', '10.0.0.1', '<pending>', '<none>', '120m', '<none>']],
    [
      'LoadBalancer with ingress and external IPs',
      svc({ type: 'LoadBalancer', clusterIPs: ['10.0.0.1'], externalIPs: ['9.9.9.9'] }, { loadBalancer: { ingress: [{ ip: '5.5.5.5' }, { hostname: 'lb.example.com' }, { ip: '5.5.5.5' }] } }),
      ['s', 'LoadBalancer', '10.0.0.1', '5.5.5.5,lb.example.com,9.9.9.9', '<none>', '120m', '<none>'],
    ],
    ['ExternalName', svc({ type: 'ExternalName', externalName: 'db.example.com' }), ['s', 'ExternalName', '<none>', 'db.example.com', '<none>', '120m', '<none>']],
  ] as Array<[string, unknown, unknown[]]>)('%s', (_n, s, expected) => {
    expect(cells(r('', 'services'), s)).toEqual(expected);
  });

  it.each([
    ['no subsets', {}, '<none>'],
    ['ports', { subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], ports: [{ port: 80 }] }] }, '10.0.0.1:80,[fd00::1]:80'],
    ['headless without ports', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] }, '10.0.0.1'],
    [
      'more than three',
      { subsets: [{ addresses: [{ ip: 'a' }, { ip: 'b' }], ports: [{ port: 1 }, { port: 2 }, { port: 3 }] }] },
      'a:1,b:1,a:2 + 3 more...',
    ],
  ] as Array<[string, Record<string, unknown>, string]>)('endpoints: %s', (_n, ep, text) => {
    expect(cells(r('', 'endpoints'), { metadata: meta('e'), ...ep })).toEqual(['e', text, '120m']);
  });
});

describe('events', () => {
  it('core events', () => {
    const e = {
      metadata: meta('p.1'),
      involvedObject: { kind: 'Pod', name: 'p', fieldPath: 'spec.containers{app}' },
      reason: 'BackOff',
      message: ' Back-off restarting failed container \n',
      type: 'Warning',
      source: { component: 'kubelet', host: 'n1' },
      firstTimestamp: ago(30 * MIN),
      lastTimestamp: ago(2 * MIN),
      count: 7,
    };
    expect(cells(r('', 'events'), e)).toEqual(['2m', 'Warning', 'BackOff', 'pod/p', 'spec.containers{app}', 'kubelet, n1', 'Back-off restarting failed container', '30m', 7, 'p.1']);
  });

  it('new-style events use eventTime, series and the reporting controller', () => {
    const e = {
      metadata: meta('x'),
      involvedObject: { kind: 'Node' },
      reason: 'R',
      message: 'm',
      type: 'Normal',
      eventTime: ago(10 * MIN),
      reportingComponent: 'ctl',
      reportingInstance: 'ctl-1',
      series: { count: 4, lastObservedTime: ago(1 * MIN) },
    };
    expect(cells(r('', 'events'), e)).toEqual(['60s', 'Normal', 'R', 'node', '', 'ctl, ctl-1', 'm', '10m', 4, 'x']);
    const single = { ...e, series: undefined, involvedObject: { kind: 'Node', name: 'n' } };
    expect(cells(r('', 'events'), single).slice(0, 4)).toEqual(['10m', 'Normal', 'R', 'node/n']);
    expect(cells(r('', 'events'), single)[8]).toBe(1);
  });

  it('events.k8s.io events print like core ones', () => {
    const e = { metadata: meta('x'), regarding: { kind: 'Pod', name: 'p' }, note: 'hello', reason: 'R', type: 'Normal', deprecatedFirstTimestamp: ago(5 * MIN), deprecatedLastTimestamp: ago(3 * MIN), deprecatedCount: 2, deprecatedSource: { component: 'kubelet' } };
    expect(cells(r('events.k8s.io', 'events'), e)).toEqual(['3m', 'Normal', 'R', 'pod/p', '', 'kubelet', 'hello', '5m', 2, 'x']);
    const reported = { metadata: meta('y'), regarding: { kind: 'Pod', name: 'p' }, eventTime: ago(MIN), reportingController: 'ctl', reportingInstance: 'i' };
    expect(cells(r('events.k8s.io', 'events'), reported)[5]).toBe('ctl, i');
  });
});

describe('workloads', () => {
  const template = { spec: { containers: [{ name: 'web', image: 'nginx:1' }, { name: 'side', image: 'busybox' }] } };
  it('deployments', () => {
    const d = { metadata: meta('web'), spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } };
    expect(cells(r('apps', 'deployments'), d)).toEqual(['web', '2/3', 3, 2, '120m', 'web,side', 'nginx:1,busybox', 'app=web']);
    expect(cells(r('apps', 'deployments'), { metadata: meta('x') })).toEqual(['x', '0/1', 0, 0, '120m', '', '', '']);
    expect(cells(r('apps', 'deployments'), { metadata: meta('x'), spec: { selector: { matchExpressions: [{ key: 'a', operator: 'Nope' }] } } })[7]).toBe('<invalid>');
  });

  it('replica sets, replication controllers, stateful sets, daemon sets', () => {
    const sel = { matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] };
    expect(cells(r('apps', 'replicasets'), { metadata: meta('rs'), spec: { replicas: 2, selector: sel, template }, status: { replicas: 2, readyReplicas: 1 } })).toEqual(['rs', 2, 2, 1, '120m', 'web,side', 'nginx:1,busybox', 'tier in (a,b)']);
    expect(cells(r('', 'replicationcontrollers'), { metadata: meta('rc'), spec: { replicas: 0, selector: { app: 'x' } } })).toEqual(['rc', 0, 0, 0, '120m', '', '', 'app=x']);
    expect(cells(r('apps', 'statefulsets'), { metadata: meta('db'), spec: { replicas: 3, template }, status: { readyReplicas: 3 } })).toEqual(['db', '3/3', '120m', 'web,side', 'nginx:1,busybox']);
    expect(
      cells(r('apps', 'daemonsets'), {
        metadata: meta('ds'),
        spec: { selector: { matchLabels: { app: 'ds' } }, template: { spec: { nodeSelector: { 'kubernetes.io/os': 'linux' }, containers: [] } } },
        status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 },
      }),
    ).toEqual(['ds', 3, 3, 2, 3, 2, 'kubernetes.io/os=linux', '120m', '', '', 'app=ds']);
  });

  it.each([
    ['complete', { spec: { completions: 1 }, status: { succeeded: 1, startTime: ago(10 * MIN), completionTime: ago(7 * MIN), conditions: [{ type: 'Complete', status: 'True' }] } }, ['Complete', '1/1', '3m']],
    ['failed', { spec: { completions: 3 }, status: { succeeded: 1, startTime: ago(10 * MIN), conditions: [{ type: 'Failed', status: 'True' }] } }, ['Failed', '1/3', '10m']],
    ['running with parallelism', { spec: { parallelism: 4 }, status: { startTime: ago(90_000) } }, ['Running', '0/1 of 4', '90s']],
    ['not started', { spec: {} }, ['Running', '0/1', '']],
    ['suspended', { spec: {}, status: { conditions: [{ type: 'Suspended', status: 'True' }] } }, ['Suspended', '0/1', '']],
    ['failure target', { spec: {}, status: { conditions: [{ type: 'FailureTarget', status: 'True' }] } }, ['FailureTarget', '0/1', '']],
    ['terminating', { metadata: meta('j', { deletionTimestamp: ago(0) }), spec: {} }, ['Terminating', '0/1', '']],
  ] as Array<[string, Record<string, unknown>, string[]]>)('job %s', (_n, job, expected) => {
    expect(cells(r('batch', 'jobs'), { metadata: meta('j'), ...job }).slice(1, 4)).toEqual(expected);
  });

  it('cron jobs', () => {
    const cj = { metadata: meta('cj'), spec: { schedule: '*/5 * * * *', timeZone: 'Etc/UTC', suspend: true, jobTemplate: { spec: { template } } }, status: { active: [{}, {}], lastScheduleTime: ago(4 * MIN) } };
    expect(cells(r('batch', 'cronjobs'), cj)).toEqual(['cj', '*/5 * * * *', 'Etc/UTC', 'True', 2, '4m', '120m', 'web,side', 'nginx:1,busybox', '<none>']);
    expect(cells(r('batch', 'cronjobs'), { metadata: meta('c'), spec: { schedule: '@daily' } }).slice(2, 6)).toEqual(['<none>', 'False', 0, '<none>']);
  });

  it('controller revisions, pod disruption budgets, autoscalers', () => {
    const cr = { metadata: meta('web-1', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', controller: true }] }), revision: 3 };
    expect(cells(r('apps', 'controllerrevisions'), cr)).toEqual(['web-1', 'statefulset.apps/web', 3, '120m']);
    expect(cells(r('policy', 'poddisruptionbudgets'), { metadata: meta('pdb'), spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 1 } })).toEqual(['pdb', '50%', 'N/A', 1, '120m']);
    const hpa = {
      metadata: meta('h'),
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
          { type: 'Pods', pods: { target: { averageValue: '1k' } } },
          { type: 'External', external: { target: { value: '10' } } },
        ],
      },
      status: { currentReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40 } } }] },
    };
    expect(cells(r('autoscaling', 'horizontalpodautoscalers', 'v2'), hpa)).toEqual(['h', 'Deployment/web', 'cpu: 40%/80%, <unknown>/1k + 1 more...', '1', 5, 2, '120m']);
    const v1 = { metadata: meta('h'), spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 50 }, status: { currentCPUUtilizationPercentage: 12 } };
    expect(cells(r('autoscaling', 'horizontalpodautoscalers', 'v1'), v1).slice(2, 4)).toEqual(['cpu: 12%/50%', '<unset>']);
    expect(cells(r('autoscaling', 'horizontalpodautoscalers', 'v2'), { metadata: meta('h'), spec: {} })[2]).toBe('<none>');
  });
});

describe('other kinds', () => {
  it.each([
    [r('', 'configmaps'), { metadata: meta('cm'), data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }, ['cm', 3, '120m']],
    [r('', 'secrets'), { metadata: meta('s'), type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } }, ['s', 'kubernetes.io/tls', 2, '120m']],
    [r('', 'serviceaccounts'), { metadata: meta('default') }, ['default', 0, '120m']],
    [r('', 'namespaces'), { metadata: meta('kube-system'), status: { phase: 'Active' } }, ['kube-system', 'Active', '120m']],
    [r('coordination.k8s.io', 'leases'), { metadata: meta('l'), spec: { holderIdentity: 'node-1' } }, ['l', 'node-1', '120m']],
    [
      r('rbac.authorization.k8s.io', 'clusterrolebindings'),
      { metadata: meta('b'), roleRef: { kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', namespace: 'ns', name: 'sa' }, { kind: 'User', name: 'bob' }] },
      ['b', 'ClusterRole/admin', '120m', 'alice, bob', 'devs', 'ns/sa'],
    ],
    [
      r('', 'persistentvolumes'),
      { metadata: meta('pv'), spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'ns', name: 'c' }, storageClassName: 'fast' }, status: { phase: 'Bound' } },
      ['pv', '10Gi', 'RWO,RWX', 'Retain', 'Bound', 'ns/c', 'fast', '<unset>', '', '120m', '<unset>'],
    ],
    [
      r('', 'persistentvolumeclaims'),
      { metadata: meta('c', { annotations: { 'volume.beta.kubernetes.io/storage-class': 'legacy' } }), spec: { volumeName: 'pv', storageClassName: 'fast', volumeMode: 'Filesystem' }, status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } },
      ['c', 'Bound', 'pv', '1Gi', 'RWO', 'legacy', '<unset>', '120m', 'Filesystem'],
    ],
    [r('', 'persistentvolumeclaims'), { metadata: meta('c', { deletionTimestamp: ago(0) }), spec: {}, status: { phase: 'Pending' } }, ['c', 'Terminating', '', '', '', '', '<unset>', '120m', '<unset>']],
    [
      r('storage.k8s.io', 'storageclasses'),
      { metadata: meta('std', { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }), provisioner: 'csi.example.com', allowVolumeExpansion: true },
      ['std (default)', 'csi.example.com', 'Delete', 'Immediate', true, '120m'],
    ],
    [
      r('networking.k8s.io', 'ingresses'),
      { metadata: meta('ing'), spec: { ingressClassName: 'nginx', rules: [{ host: 'a.example.com' }, {}, { host: 'b.example.com' }], tls: [{}] }, status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } },
      ['ing', 'nginx', 'a.example.com,b.example.com', '1.2.3.4', '80, 443', '120m'],
    ],
    [r('networking.k8s.io', 'ingresses'), { metadata: meta('ing'), spec: {} }, ['ing', '<none>', '*', '', '80', '120m']],
    [r('networking.k8s.io', 'networkpolicies'), { metadata: meta('np'), spec: { podSelector: {} } }, ['np', '<none>', '120m']],
    [r('networking.k8s.io', 'networkpolicies'), { metadata: meta('np'), spec: { podSelector: { matchLabels: { role: 'db' } } } }, ['np', 'role=db', '120m']],
    [r('scheduling.k8s.io', 'priorityclasses'), { metadata: meta('high'), value: 1000, globalDefault: false }, ['high', 1000, false, '120m', 'PreemptLowerPriority']],
    [
      r('certificates.k8s.io', 'certificatesigningrequests'),
      { metadata: meta('csr'), spec: { signerName: 'kubernetes.io/kube-apiserver-client', username: 'alice', expirationSeconds: 86400 }, status: { conditions: [{ type: 'Approved' }], certificate: 'AAAA' } },
      ['csr', '120m', 'kubernetes.io/kube-apiserver-client', 'alice', '24h', 'Approved,Issued'],
    ],
    [r('certificates.k8s.io', 'certificatesigningrequests'), { metadata: meta('csr'), spec: {}, status: { conditions: [{ type: 'Denied' }, { type: 'Failed' }] } }, ['csr', '120m', '<none>', '', '<none>', 'Denied,Failed']],
    [r('discovery.k8s.io', 'endpointslices'), { metadata: meta('es'), addressType: 'IPv4', ports: [{ port: 80 }, { name: 'x' }, {}], endpoints: [{ addresses: ['1.1.1.1', '2.2.2.2'] }, { addresses: ['3.3.3.3', '4.4.4.4'] }] }, ['es', 'IPv4', '80,x,*', '1.1.1.1,2.2.2.2,3.3.3.3 + 1 more...', '120m']],
    [r('discovery.k8s.io', 'endpointslices'), { metadata: meta('es'), addressType: 'IPv4' }, ['es', 'IPv4', '<unset>', '<unset>', '120m']],
    [r('apiregistration.k8s.io', 'apiservices'), { metadata: meta('v1.apps'), spec: {}, status: { conditions: [{ type: 'Available', status: 'True' }] } }, ['v1.apps', 'Local', 'True', '120m']],
    [
      r('apiregistration.k8s.io', 'apiservices'),
      { metadata: meta('v1beta1.metrics.k8s.io'), spec: { service: { namespace: 'kube-system', name: 'metrics-server' } }, status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] } },
      ['v1beta1.metrics.k8s.io', 'kube-system/metrics-server', 'False (MissingEndpoints)', '120m'],
    ],
    [r('resource.k8s.io', 'resourceclaims'), { metadata: meta('c'), status: { allocation: {}, reservedFor: [{}] } }, ['c', 'allocated,reserved', '120m']],
    [r('resource.k8s.io', 'resourceclaims'), { metadata: meta('c') }, ['c', 'pending', '120m']],
  ] as Array<[TableResource, unknown, unknown[]]>)('%o %#', (res, obj, expected) => {
    expect(cells(res, obj)).toEqual(expected);
  });

  it('orders flow schemas by matching precedence, then name', () => {
    const fs = (name: string, p: number) => ({ metadata: meta(name), spec: { matchingPrecedence: p, priorityLevelConfiguration: { name: 'pl' } } });
    const rows = rowsFor(r('flowcontrol.apiserver.k8s.io', 'flowschemas'), [fs('b', 1000), fs('a', 1000), fs('z', 1)], { naming: k8s, now, includeObject: 'None' });
    expect(rows.map((x) => x.cells[0])).toEqual(['z', 'a', 'b']);
    expect(rows[0]!.cells).toEqual(['z', 'pl', 1, '<none>', '120m', '?']);
  });
});
