// Real-client conformance: @kubernetes/client-node (the npm package, typed APIs generated from
// upstream's OpenAPI) against a real server process with upstream naming: typed CRUD on core
// and apps kinds, patches, the scale sub-resource, Watch, and makeInformer's list-then-watch
// including its relist after a 410. The server compacts every 2 s so a watch can be resumed
// from a version that is gone. Issue 7 §2.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { waitFor } from './support/wait-for.js';

const NS = 'node-client';

/** The status code and parsed Status of a failed call. */
async function failure(call: Promise<unknown>): Promise<{ code: number; status: { reason?: string; message?: string; details?: { causes?: { field?: string }[] } } }> {
  try {
    await call;
  } catch (e) {
    if (!(e instanceof k8s.ApiException)) throw e;
    const body = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as { reason?: string; message?: string };
    return { code: e.code, status: body };
  }
  throw new Error('the call succeeded');
}

const configMap = (name: string, data: Record<string, string>, labels: Record<string, string> = {}): k8s.V1ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });

describe('@kubernetes/client-node', () => {
  let server: ServerProcess;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;

  beforeAll(async () => {
    server = await startServerProcess(['--naming=kubernetes', '--compaction-interval=2s']);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    const ns = await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
    expect(ns.metadata?.name).toBe(NS);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('CoreV1Api: create, read, list by label, replace, patch three ways, delete a ConfigMap', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: NS, body: configMap('settings', { mode: 'a' }, { app: 'settings' }) });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const read = await core.readNamespacedConfigMap({ name: 'settings', namespace: NS });
    expect(read.data).toEqual({ mode: 'a' });
    expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('unrelated', {}) });
    const listed = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'app=settings' });
    expect(listed.items.map((i) => i.metadata?.name)).toEqual(['settings']);
    expect(listed.metadata?.resourceVersion).toMatch(/^\d+$/);

    read.data = { mode: 'b' };
    const replaced = await core.replaceNamespacedConfigMap({ name: 'settings', namespace: NS, body: read });
    expect(replaced.data).toEqual({ mode: 'b' });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(read.metadata?.resourceVersion));
    const stale = await failure(core.replaceNamespacedConfigMap({ name: 'settings', namespace: NS, body: { ...read, data: { mode: 'stale' } } }));
    expect(stale.code).toBe(409);
    expect(stale.status.reason).toBe('Conflict');

    const merged = await core.patchNamespacedConfigMap({ name: 'settings', namespace: NS, body: { data: { extra: '1' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    expect(merged.data).toEqual({ mode: 'b', extra: '1' });
    const jsonPatched = await core.patchNamespacedConfigMap({ name: 'settings', namespace: NS, body: [{ op: 'remove', path: '/data/extra' }] }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch));
    expect(jsonPatched.data).toEqual({ mode: 'b' });
    const strategic = await core.patchNamespacedConfigMap({ name: 'settings', namespace: NS, body: { metadata: { labels: { patched: 'yes' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch));
    expect(strategic.metadata?.labels).toEqual({ app: 'settings', patched: 'yes' });

    const duplicate = await failure(core.createNamespacedConfigMap({ namespace: NS, body: configMap('settings', {}) }));
    expect(duplicate.code).toBe(409);
    expect(duplicate.status.reason).toBe('AlreadyExists');

    const deleted = await core.deleteNamespacedConfigMap({ name: 'settings', namespace: NS });
    expect(deleted.kind).toBeDefined();
    const gone = await failure(core.readNamespacedConfigMap({ name: 'settings', namespace: NS }));
    expect(gone.code).toBe(404);
    expect(gone.status.message).toBe('configmaps "settings" not found');
  });

  // Typed clients often leave apiVersion and kind unset; upstream decodes the body with the
  // endpoint's kind as the default.
  it('CoreV1Api: a typed create without apiVersion and kind takes them from the endpoint', async () => {
    const ns = await core.createNamespace({ body: { metadata: { name: 'typed-only' } } });
    expect(ns.kind).toBe('Namespace');
    const cm = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'typed-only' }, data: { a: 'b' } } });
    expect(cm.apiVersion).toBe('v1');
    expect(cm.data).toEqual({ a: 'b' });
  });

  it('CoreV1Api: a Pod and a Service come back with the server defaults; an invalid Pod is a 422 naming the field', async () => {
    const pod = await core.createNamespacedPod({ namespace: NS, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } });
    expect(pod.spec?.restartPolicy).toBe('Always');
    expect(pod.spec?.dnsPolicy).toBe('ClusterFirst');
    expect(pod.spec?.containers[0]?.terminationMessagePath).toBe('/dev/termination-log');
    expect(pod.spec?.containers[0]?.imagePullPolicy).toBe('IfNotPresent');
    expect(pod.spec?.containers[0]?.ports?.[0]?.protocol).toBe('TCP');
    const svc = await core.createNamespacedService({ namespace: NS, body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } } });
    expect(svc.spec?.type).toBe('ClusterIP');
    expect(svc.spec?.sessionAffinity).toBe('None');
    expect(svc.spec?.ports?.[0]?.targetPort).toBe(80);
    const pods = await core.listPodForAllNamespaces({ labelSelector: 'app=web' });
    expect(pods.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual([`${NS}/web-0`]);

    const invalid = await failure(core.createNamespacedPod({ namespace: NS, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'broken' }, spec: { containers: [{ name: 'nameless-image' }] } } as k8s.V1Pod }));
    expect(invalid.code).toBe(422);
    expect(invalid.status.reason).toBe('Invalid');
    expect(invalid.status.details?.causes?.map((c) => c.field)).toContain('spec.containers[0].image');
  });

  it('AppsV1Api: Deployment CRUD with defaults, the scale sub-resource, strategic patch, list across namespaces', async () => {
    const body: k8s.V1Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'registry.example/api:1' }] } } },
    };
    const created = await apps.createNamespacedDeployment({ namespace: NS, body });
    expect(created.spec?.strategy?.type).toBe('RollingUpdate');
    expect(created.spec?.strategy?.rollingUpdate?.maxSurge).toBe('25%');
    expect(created.spec?.revisionHistoryLimit).toBe(10);
    expect(created.spec?.progressDeadlineSeconds).toBe(600);
    expect(created.metadata?.generation).toBe(1);

    const scale = await apps.readNamespacedDeploymentScale({ name: 'api', namespace: NS });
    expect(scale.kind).toBe('Scale');
    expect(scale.spec?.replicas).toBe(2);
    scale.spec = { replicas: 5 };
    const scaled = await apps.replaceNamespacedDeploymentScale({ name: 'api', namespace: NS, body: scale });
    expect(scaled.spec?.replicas).toBe(5);
    expect((await apps.readNamespacedDeployment({ name: 'api', namespace: NS })).spec?.replicas).toBe(5);

    const patched = await apps.patchNamespacedDeployment(
      { name: 'api', namespace: NS, body: { spec: { template: { spec: { containers: [{ name: 'api', image: 'registry.example/api:2' }] } } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    expect(patched.spec?.template.spec?.containers.map((c) => c.image)).toEqual(['registry.example/api:2']);
    expect(patched.metadata?.generation).toBe(3);

    const immutable = await failure(apps.patchNamespacedDeployment({ name: 'api', namespace: NS, body: { spec: { selector: { matchLabels: { app: 'other' } } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)));
    expect(immutable.code).toBe(422);

    const all = await apps.listDeploymentForAllNamespaces({});
    expect(all.items.map((d) => d.metadata?.name)).toContain('api');
    await apps.deleteNamespacedDeployment({ name: 'api', namespace: NS });
    expect((await failure(apps.readNamespacedDeployment({ name: 'api', namespace: NS }))).code).toBe(404);
  });

  it('Watch streams ADDED, MODIFIED and DELETED from a resourceVersion', async () => {
    const from = (await core.listNamespacedConfigMap({ namespace: NS, limit: 1 })).metadata!.resourceVersion!;
    const events: string[] = [];
    let ended: unknown = 'open';
    const watch = new k8s.Watch(kc);
    const controller = await watch.watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: from, labelSelector: 'watched=yes' },
      (type: string, obj: k8s.V1ConfigMap) => events.push(`${type} ${obj.metadata?.name} ${obj.data?.v ?? ''}`),
      (err: unknown) => (ended = err),
    );
    try {
      await core.createNamespacedConfigMap({ namespace: NS, body: configMap('w', { v: '1' }, { watched: 'yes' }) });
      await core.createNamespacedConfigMap({ namespace: NS, body: configMap('not-watched', { v: '1' }) });
      await core.patchNamespacedConfigMap({ name: 'w', namespace: NS, body: { data: { v: '2' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
      await core.deleteNamespacedConfigMap({ name: 'w', namespace: NS });
      await waitFor('three watch events', () => events.length >= 3);
      expect(events).toEqual(['ADDED w 1', 'MODIFIED w 2', 'DELETED w 2']);
      expect(ended).toBe('open');
    } finally {
      controller.abort();
    }
  });

  it('makeInformer lists, then watches: add, update and delete reach the handlers and the cache', async () => {
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('before', { v: '1' }, { informed: 'yes' }) });
    let lists = 0;
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${NS}/configmaps`,
      () => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'informed=yes' });
      },
      'informed=yes',
    );
    const seen: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.data?.v}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    try {
      expect(lists).toBe(1);
      expect(seen).toEqual(['add before']);
      await core.createNamespacedConfigMap({ namespace: NS, body: configMap('after', { v: '1' }, { informed: 'yes' }) });
      await core.patchNamespacedConfigMap({ name: 'before', namespace: NS, body: { data: { v: '2' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
      await core.deleteNamespacedConfigMap({ name: 'after', namespace: NS });
      await waitFor('the informer to see the changes', () => seen.length >= 4);
      expect(seen).toEqual(['add before', 'add after', 'update before 2', 'delete after']);
      expect(informer.list(NS).map((o) => `${o.metadata?.name}=${o.data?.v}`)).toEqual(['before=2']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('makeInformer relists when its watch resumes from a compacted version (410)', async () => {
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('r-0', { v: '1' }, { relist: 'yes' }) });
    let lists = 0;
    // makeInformer's result is a ListWatch, which also tells the version it watches from.
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${NS}/configmaps`,
      () => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'relist=yes' });
      },
      'relist=yes',
    ) as k8s.ListWatch<k8s.V1ConfigMap>;
    const seen: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    try {
      expect(lists).toBe(1);
      const held = informer.latestResourceVersion();
      // Hold the watch off (stopping aborts it, which client-node reports as an error) while
      // the collection changes and the server compacts past the informer's version.
      await informer.stop();
      errors.length = 0;
      await core.createNamespacedConfigMap({ namespace: NS, body: configMap('r-1', { v: '1' }, { relist: 'yes' }) });
      await core.deleteNamespacedConfigMap({ name: 'r-0', namespace: NS });
      await waitFor(
        `version ${held} to be compacted`,
        async () => {
          const first = await firstWatchLine(server, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${held}&labelSelector=relist%3Dyes&timeoutSeconds=1`);
          return /"code":410/.test(first) || first.startsWith('HTTP 410');
        },
        30_000,
        250,
      );
      await informer.start();
      await waitFor('the informer to relist', () => lists >= 2 && seen.length >= 3);
      expect(lists).toBe(2);
      expect(seen).toEqual(['add r-0', 'delete r-0', 'add r-1']);
      expect(informer.list(NS).map((o) => o.metadata?.name)).toEqual(['r-1']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});

/** The first line a watch request answers (or `HTTP <status>` when it is refused). */
async function firstWatchLine(server: ServerProcess, path: string): Promise<string> {
  let first = '';
  const w = server.admin.watch(path, (line) => {
    if (!first) first = line;
    w.stop();
  });
  const { status } = await w.done;
  return status !== 200 && status !== 0 ? `HTTP ${status}` : first;
}
