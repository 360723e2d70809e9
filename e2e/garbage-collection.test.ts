// Garbage collection through real clients against a real server process, under both namings:
// `kubectl delete --cascade=foreground|background|orphan` on a Deployment-like chain (a
// ConfigMap owner, its "replica set", its "pods"), a raw DeleteOptions body over HTTPS for each
// policy and for the legacy orphanDependents, a chain of three levels, a custom resource as
// owner, and a dependent whose owner never existed. No controller here creates dependents: the
// tests write their ownerReferences themselves. Then three replicas: the collector runs on the
// leader only, a delete through a follower cascades, and after the leader is killed the new
// leader's collector finishes what is left and takes new work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const haveKubectl = kubectlAvailable();
if (!haveKubectl && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const naming of ['cluster', 'kubernetes'] as const) {
  describe.skipIf(!haveKubectl)(`garbage collection (--naming=${naming})`, () => {
    let server: ServerProcess;
    const k = async (...args: string[]) => {
      const r = await kubectl(server.kubeconfig, ['-n', 'gc', ...args]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    const CM = '/api/v1/namespaces/gc/configmaps';
    const create = async (path: string, body: Obj): Promise<Obj> => {
      const res = await server.admin.post(path, body);
      expect(res.status, res.text()).toBeLessThan(300);
      return res.json<Obj>();
    };
    const ref = (owner: Obj, extra: Obj = {}) => ({ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, ...extra });
    const cm = (name: string, owners: Obj[] = []) => create(CM, { metadata: { name, ownerReferences: owners.length ? owners : undefined } });
    /** owner ← rs ← pod-0, pod-1, each reference blocking (as a Deployment's controllers write them). */
    const deploymentLike = async (prefix: string) => {
      const owner = await cm(`${prefix}-deploy`);
      const rs = await cm(`${prefix}-rs`, [ref(owner, { controller: true, blockOwnerDeletion: true })]);
      for (const i of [0, 1]) await cm(`${prefix}-pod-${i}`, [ref(rs, { controller: true, blockOwnerDeletion: true })]);
      return { owner, rs };
    };
    const names = async () => (await k('get', 'configmaps', '-o', 'jsonpath={.items[*].metadata.name}')).split(' ').filter(Boolean);
    const status = async (path: string) => (await server.admin.get(path)).status;
    const until = async (what: string, probe: () => Promise<boolean>) => {
      for (let i = 0; i < 300; i++) {
        if (await probe()) return;
        await sleep(50);
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    const gone = (path: string) => until(`${path} to be gone`, async () => (await status(path)) === 404);

    beforeAll(async () => {
      server = await startServerProcess([`--naming=${naming}`]);
      await create('/api/v1/namespaces', { metadata: { name: 'gc' } });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('kubectl delete --cascade=foreground returns once the whole chain is gone', async () => {
      await deploymentLike('fg');
      expect(await k('delete', 'configmap', 'fg-deploy', '--cascade=foreground')).toBe('configmap "fg-deploy" deleted\n');
      // kubectl waited for the owner, which waited for its blocking dependents and theirs.
      expect((await names()).filter((n) => n.startsWith('fg-'))).toEqual([]);
    });

    it('kubectl delete --cascade=background removes the owner at once, the collector the rest', async () => {
      await deploymentLike('bg');
      expect(await k('delete', 'configmap', 'bg-deploy', '--cascade=background')).toBe('configmap "bg-deploy" deleted\n');
      await until('the chain to go', async () => (await names()).filter((n) => n.startsWith('bg-')).length === 0);
    });

    it('kubectl delete --cascade=orphan leaves the dependents without the reference', async () => {
      const { rs } = await deploymentLike('or');
      expect(await k('delete', 'configmap', 'or-deploy', '--cascade=orphan')).toBe('configmap "or-deploy" deleted\n');
      expect((await names()).filter((n) => n.startsWith('or-')).sort()).toEqual(['or-pod-0', 'or-pod-1', 'or-rs']);
      expect(await k('get', 'configmap', 'or-rs', '-o', 'jsonpath={.metadata.ownerReferences}')).toBe('');
      // The next level still belongs to the orphaned middle.
      expect(await k('get', 'configmap', 'or-pod-0', '-o', 'jsonpath={.metadata.ownerReferences[0].uid}')).toBe(rs.metadata.uid);
    });

    it.each([
      ['Foreground', { propagationPolicy: 'Foreground' }, ['foregroundDeletion'], 200],
      ['Background', { propagationPolicy: 'Background' }, undefined, 200],
      ['Orphan', { propagationPolicy: 'Orphan' }, ['orphan'], 200],
      ['orphanDependents=true', { orphanDependents: true }, ['orphan'], 200],
      ['orphanDependents=false', { orphanDependents: false }, undefined, 200],
    ])('a raw DeleteOptions body over HTTPS: %s', async (label, options, finalizers, code) => {
      const prefix = `raw-${label.toLowerCase().replace(/[^a-z]/g, '')}`;
      const { rs } = await deploymentLike(prefix);
      const res = await server.admin.delete(`${CM}/${prefix}-deploy`, { kind: 'DeleteOptions', apiVersion: 'v1', ...options });
      expect(res.status).toBe(code);
      const body = res.json<Obj>();
      if (finalizers) expect(body.metadata.finalizers).toEqual(finalizers);
      else expect(body.kind).toBe('Status');
      await gone(`${CM}/${prefix}-deploy`);
      if (label === 'Orphan' || label === 'orphanDependents=true') {
        await until('the orphaned reference to go', async () => (await server.admin.get(`${CM}/${prefix}-rs`)).json<Obj>().metadata.ownerReferences === undefined);
        await sleep(300);
        expect(await status(`${CM}/${prefix}-rs`)).toBe(200);
        expect(await status(`${CM}/${prefix}-pod-0`)).toBe(200);
      } else {
        await gone(`${CM}/${prefix}-rs`);
        for (const i of [0, 1]) await gone(`${CM}/${prefix}-pod-${i}`);
      }
      expect(rs.metadata.uid).toBeTruthy();
    });

    it('three levels under a custom resource (App ← ConfigMap ← ConfigMap): kubectl deletes it in the foreground', async () => {
      const group = naming === 'cluster' ? 'apiextensions.cluster.io' : 'apiextensions.k8s.io';
      const preserve = naming === 'cluster' ? 'x-cluster-preserve-unknown-fields' : 'x-kubernetes-preserve-unknown-fields';
      await create(`/apis/${group}/v1/customresourcedefinitions`, {
        apiVersion: `${group}/v1`,
        kind: 'CustomResourceDefinition',
        metadata: { name: 'apps.gc.example.com' },
        spec: {
          group: 'gc.example.com',
          scope: 'Namespaced',
          names: { plural: 'apps', singular: 'app', kind: 'App' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', [preserve]: true } } }],
        },
      });
      expect(await k('wait', '--for=condition=Established', 'crd/apps.gc.example.com', '--timeout=20s')).toContain('condition met');
      const apps = '/apis/gc.example.com/v1/namespaces/gc/apps';
      const app = await create(apps, { apiVersion: 'gc.example.com/v1', kind: 'App', metadata: { name: 'shop' } });
      const part = await cm('shop-part', [ref(app, { blockOwnerDeletion: true })]);
      await cm('shop-leaf', [ref(part, { blockOwnerDeletion: true })]);
      expect(await k('delete', 'apps.gc.example.com', 'shop', '--cascade=foreground')).toBe('app.gc.example.com "shop" deleted\n');
      expect((await names()).filter((n) => n.startsWith('shop-'))).toEqual([]);
    });

    it('a dependent whose owner never existed is deleted; one with a live owner too loses only that reference', async () => {
      const ghost = { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '5f0e3c1a-0000-4000-8000-00000000dead' };
      const live = await cm('live');
      await cm('haunted', [ghost]);
      await cm('half', [ghost, ref(live)]);
      await gone(`${CM}/haunted`);
      await until('the dead reference to go', async () => ((await server.admin.get(`${CM}/half`)).json<Obj>().metadata.ownerReferences as Obj[]).length === 1);
      expect(await k('get', 'configmap', 'half', '-o', 'jsonpath={.metadata.ownerReferences[*].name}')).toBe('live');
    });
  });
}

describe.skipIf(!haveKubectl)('garbage collection on three replicas (leader-only collector)', () => {
  let cluster: ClusterProcess;
  const k = async (replica: string, ...args: string[]) => {
    const r = await kubectl(cluster.kubeconfig(replica), ['-n', 'default', ...args]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  const json = async (replica: string, ...args: string[]) => JSON.parse(await k(replica, ...args, '-o', 'json')) as Obj;
  const apply = async (replica: string, name: string, owners: Obj[] = []) => {
    const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ownerReferences: owners.length ? owners : undefined } });
    const r = await kubectl(cluster.kubeconfig(replica), ['-n', 'default', 'create', '-f', '-', '-o', 'json'], manifest);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Obj;
  };
  const ref = (owner: Obj) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: true });
  const names = async (replica: string) => ((await json(replica, 'get', 'configmaps')).items as Obj[]).map((o) => o.metadata.name as string);

  beforeAll(async () => {
    // Info logs name what the collector deletes: they show on which replica it runs.
    cluster = await ClusterProcess.started({ extraArgs: ['--log-level=info'] });
  });
  afterAll(async () => {
    await cluster?.destroy();
  });
  const collected = (replica: string, name: string) => cluster.logs(replica).split('\n').filter((l) => l.includes('garbage collector: deleting object') && l.includes(`"${name}"`)).length;

  it('a foreground delete through a follower cascades; after the leader dies the new leader collects', async () => {
    const leader = await cluster.waitForLeader();
    const follower = cluster.names.find((n) => n !== leader)!;
    const owner = await apply(follower, 'c-owner');
    const mid = await apply(follower, 'c-mid', [ref(owner)]);
    await apply(follower, 'c-leaf', [ref(mid)]);
    expect(await k(follower, 'delete', 'configmap', 'c-owner', '--cascade=foreground')).toBe('configmap "c-owner" deleted\n');
    expect((await names(follower)).filter((n) => n.startsWith('c-'))).toEqual([]);
    // Only the leader's collector deleted the dependents.
    expect(cluster.names.map((n) => collected(n, 'c-mid'))).toEqual(cluster.names.map((n) => (n === leader ? 1 : 0)));

    const second = await apply(follower, 'd-owner');
    await apply(follower, 'd-dep', [ref(second)]);
    await cluster.kill(leader);
    const next = await cluster.waitForLeader(30_000, leader);
    const via = cluster.names.find((n) => n !== leader)!;
    expect(next).not.toBe(leader);
    expect(await k(via, 'delete', 'configmap', 'd-owner', '--cascade=foreground', '--timeout=60s')).toBe('configmap "d-owner" deleted\n');
    expect((await names(via)).filter((n) => n.startsWith('d-'))).toEqual([]);
    expect(cluster.names.filter((n) => collected(n, 'd-dep') > 0)).toEqual([next]);
  });
});
