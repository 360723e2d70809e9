// Real-client conformance: the kubectl installed on the machine against a real server process,
// under both --naming values (Tables and explain too under cluster naming: the server answers
// kubectl's `g=meta.k8s.io` and publishes upstream's x-kubernetes-group-version-kind marker
// under both, issue 17 §6). Every scenario asserts on what kubectl printed. Issue 7 §2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, kubectlAvailable } from '../support/kubectl.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startStreaming } from './support/streaming-process.js';

const NS = 'conformance';

const configMap = (name: string, labels: Record<string, string>, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels: ${JSON.stringify(labels)}\ndata: ${JSON.stringify(data)}\n`;

for (const naming of ['cluster', 'kubernetes'] as const) {
  const domain = naming === 'cluster' ? 'cluster.io' : 'k8s.io';

  describe.skipIf(!kubectlAvailable())(`kubectl conformance (--naming=${naming})`, () => {
    let server: ServerProcess;
    /** kubectl in the suite's namespace; `input` goes to stdin. */
    const k = (args: string[], input?: string) => kubectl(server.kubeconfig, ['-n', NS, ...args], input);
    const jsonpath = async (what: string[], path: string) => (await k(['get', ...what, '-o', `jsonpath=${path}`])).stdout;

    beforeAll(async () => {
      server = await startServerProcess([`--naming=${naming}`]);
      expect((await kubectl(server.kubeconfig, ['create', 'namespace', NS])).stdout).toBe(`namespace/${NS} created\n`);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
    });

    it('version prints the server version next to the client version', async () => {
      const r = await k(['version', '-o', 'json']);
      const v = JSON.parse(r.stdout) as { clientVersion: { major: string }; serverVersion: { major: string; minor: string; gitVersion: string; platform: string } };
      expect(v.serverVersion.major).toBe('1');
      expect(v.serverVersion.gitVersion).toMatch(/^v1\.\d+\.\d+/);
      expect(v.serverVersion.gitVersion).toContain(`.${v.serverVersion.minor}.`);
      expect(v.serverVersion.platform).toMatch(/^[a-z0-9]+\/[a-z0-9]+$/);
    });

    it('api-versions lists the legacy and named groups in this naming', async () => {
      const versions = (await k(['api-versions'])).stdout.trim().split('\n');
      expect(versions).toContain('v1');
      expect(versions).toContain('apps/v1');
      expect(versions).toContain('batch/v1');
      expect(versions).toContain(`rbac.authorization.${domain}/v1`);
      expect(versions).toContain(`coordination.${domain}/v1`);
      const other = naming === 'cluster' ? 'k8s.io' : 'cluster.io';
      expect(versions.filter((v) => v.includes(other))).toEqual([]);
    });

    it('api-resources filters by group and scope', async () => {
      const apps = (await k(['api-resources', '--api-group=apps', '--no-headers', '-o', 'name'])).stdout.trim().split('\n');
      expect(apps).toEqual(expect.arrayContaining(['deployments.apps', 'replicasets.apps', 'statefulsets.apps', 'daemonsets.apps', 'controllerrevisions.apps']));
      const clusterScoped = await k(['api-resources', '--namespaced=false', '--no-headers']);
      expect(clusterScoped.stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
      expect(clusterScoped.stdout).not.toMatch(/^configmaps\s/m);
      const wide = await k(['api-resources', '-o', 'wide', '--api-group=']);
      expect(wide.stdout).toMatch(/^configmaps\s+cm\s+v1\s+true\s+ConfigMap\s+create,delete,deletecollection,get,list,patch,update,watch/m);
    });

    it('create (manifest and imperative) and get -o name|json|yaml', async () => {
      expect((await k(['create', '-f', '-'], configMap('alpha', { app: 'alpha' }, { greeting: 'hello' }))).stdout).toBe('configmap/alpha created\n');
      expect((await k(['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2'])).stdout).toBe('deployment.apps/web created\n');
      const again = await k(['create', '-f', '-'], configMap('alpha', {}, {}));
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('configmaps "alpha" already exists');

      expect((await k(['get', 'configmap', 'alpha', '-o', 'name'])).stdout).toBe('configmap/alpha\n');
      expect((await k(['get', 'deploy', '-o', 'name'])).stdout).toBe('deployment.apps/web\n');
      const json = JSON.parse((await k(['get', 'configmap', 'alpha', '-o', 'json'])).stdout) as { kind: string; apiVersion: string; metadata: Record<string, unknown>; data: Record<string, string> };
      expect(json.kind).toBe('ConfigMap');
      expect(json.apiVersion).toBe('v1');
      expect(json.data).toEqual({ greeting: 'hello' });
      expect(json.metadata).toMatchObject({ name: 'alpha', namespace: NS, labels: { app: 'alpha' } });
      expect(json.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(json.metadata.resourceVersion).toMatch(/^\d+$/);
      const yaml = (await k(['get', 'deploy', 'web', '-o', 'yaml'])).stdout;
      expect(yaml).toMatch(/^apiVersion: apps\/v1$/m);
      expect(yaml).toMatch(/^kind: Deployment$/m);
      expect(yaml).toMatch(/^  replicas: 2$/m);
      expect(yaml).toMatch(/^      - image: nginx:1\.27$/m);
      // Defaults the server applied are visible to the client.
      expect(yaml).toMatch(/^  revisionHistoryLimit: 10$/m);
      const list = JSON.parse((await k(['get', 'configmaps,deployments', '-o', 'json'])).stdout) as { kind: string; items: { kind: string; metadata: { name: string } }[] };
      expect(list.kind).toBe('List');
      expect(list.items.map((i) => `${i.kind}/${i.metadata.name}`)).toEqual(expect.arrayContaining(['ConfigMap/alpha', 'Deployment/web']));
    });

    it('get -o wide prints the server-side table columns', async () => {
      const r = await k(['get', 'deploy', 'web', '-o', 'wide']);
      const [header, row] = r.stdout.trim().split('\n');
      // kubectl asks for Tables in group meta.k8s.io only, answered under both namings.
      expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
      expect(row).toMatch(/^web\s+0\/2\s+0\s+0\s+\S+\s+nginx\s+nginx:1\.27\s+app=web$/);
    });

    it('-l selects with equality, inequality, set and existence requirements', async () => {
      const items = [
        configMap('sel-a', { env: 'prod', tier: 'web' }, {}),
        configMap('sel-b', { env: 'staging', tier: 'web' }, {}),
        configMap('sel-c', { env: 'prod', tier: 'db' }, {}),
        configMap('sel-d', { other: 'x' }, {}),
      ].join('---\n');
      expect((await k(['create', '-f', '-'], items)).stdout.trim().split('\n')).toHaveLength(4);
      const select = async (selector: string) =>
        (await k(['get', 'configmaps', '-l', selector, '-o', 'name'])).stdout
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('configmap/sel-'))
          .map((l) => l.slice('configmap/'.length));
      expect(await select('env=prod')).toEqual(['sel-a', 'sel-c']);
      expect(await select('env==prod,tier=web')).toEqual(['sel-a']);
      expect(await select('env!=prod,other')).toEqual(['sel-d']);
      expect(await select('env in (prod,staging),tier notin (db)')).toEqual(['sel-a', 'sel-b']);
      expect(await select('tier')).toEqual(['sel-a', 'sel-b', 'sel-c']);
      expect(await select('!tier,other')).toEqual(['sel-d']);
      const none = await k(['get', 'configmaps', '-l', 'env=nowhere']);
      expect(none.stdout).toBe('');
      expect(none.stderr).toBe(`No resources found in ${NS} namespace.\n`);
      const bad = await k(['get', 'configmaps', '-l', 'env in prod']);
      expect(bad.code).not.toBe(0);
    });

    it('--chunk-size pages with limit and continue and prints every object once', async () => {
      const items = Array.from({ length: 25 }, (_, i) => configMap(`chunk-${String(i).padStart(2, '0')}`, { chunk: 'yes' }, {})).join('---\n');
      await k(['create', '-f', '-'], items);
      const r = await k(['get', 'configmaps', '-l', 'chunk=yes', '--chunk-size=10', '-o', 'name', '-v=6']);
      const names = r.stdout.trim().split('\n');
      expect(names).toEqual(Array.from({ length: 25 }, (_, i) => `configmap/chunk-${String(i).padStart(2, '0')}`));
      const requests = r.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/api\/v1\/namespaces\/conformance\/configmaps\?\S*limit=10\S* 200 OK/.test(l));
      expect(requests).toHaveLength(3);
      expect(requests[0]).not.toContain('continue=');
      expect(requests.slice(1).every((l) => /[?&]continue=/.test(l))).toBe(true);
    });

    it('label and annotate: add, refuse to overwrite, overwrite, remove', async () => {
      expect((await k(['label', 'configmap', 'alpha', 'team=a'])).stdout).toBe('configmap/alpha labeled\n');
      const refused = await k(['label', 'configmap', 'alpha', 'team=b']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("'team' already has a value (a)");
      expect((await k(['label', 'configmap', 'alpha', 'team=b', '--overwrite'])).stdout).toBe('configmap/alpha labeled\n');
      const shown = (await k(['get', 'configmap', 'alpha', '-L', 'team'])).stdout.trim().split('\n');
      expect(shown[0]!.split(/\s{2,}/).at(-1)).toBe('TEAM');
      expect(shown[1]!.split(/\s+/)).toEqual(expect.arrayContaining(['alpha', 'b']));
      expect(shown[1]!.split(/\s+/).at(-1)).toBe('b');
      expect((await k(['label', 'configmap', 'alpha', 'team-'])).stdout).toBe('configmap/alpha unlabeled\n');
      expect(await jsonpath(['configmap', 'alpha'], '{.metadata.labels}')).toBe('{"app":"alpha"}');

      expect((await k(['annotate', 'configmap', 'alpha', 'note=first'])).stdout).toBe('configmap/alpha annotated\n');
      expect((await k(['annotate', 'configmap', 'alpha', 'note=second', '--overwrite'])).stdout).toBe('configmap/alpha annotated\n');
      expect(await jsonpath(['configmap', 'alpha'], '{.metadata.annotations.note}')).toBe('second');
      expect((await k(['annotate', 'configmap', 'alpha', 'note-'])).stdout).toBe('configmap/alpha annotated\n');
      expect(await jsonpath(['configmap', 'alpha'], '{.metadata.annotations.note}')).toBe('');
    });

    it('patch --type=merge|json|strategic, and a failing json test op changes nothing', async () => {
      expect((await k(['patch', 'deploy', 'web', '--type=merge', '-p', '{"spec":{"replicas":3}}'])).stdout).toBe('deployment.apps/web patched\n');
      expect(await jsonpath(['deploy', 'web'], '{.spec.replicas}')).toBe('3');
      expect((await k(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":4},{"op":"add","path":"/metadata/labels/patched","value":"json"}]'])).stdout).toBe('deployment.apps/web patched\n');
      expect(await jsonpath(['deploy', 'web'], '{.spec.replicas} {.metadata.labels.patched}')).toBe('4 json');
      // Strategic merge: containers merge by name, so nginx stays and the sidecar joins.
      const strategic = '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"},{"name":"nginx","image":"nginx:1.28"}]}}}}';
      expect((await k(['patch', 'deploy', 'web', '--type=strategic', '-p', strategic])).stdout).toBe('deployment.apps/web patched\n');
      expect(await jsonpath(['deploy', 'web'], '{range .spec.template.spec.containers[*]}{.name}={.image} {end}')).toMatch(/^(nginx=nginx:1\.28 sidecar=busybox:1\.36|sidecar=busybox:1\.36 nginx=nginx:1\.28) $/);
      const rv = await jsonpath(['deploy', 'web'], '{.metadata.resourceVersion}');
      const failed = await k(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":99},{"op":"replace","path":"/spec/replicas","value":1}]']);
      expect(failed.code).not.toBe(0);
      // kubectl's wording for a 422 Invalid answer, then the server's message.
      expect(failed.stderr).toMatch(/^The request is invalid: .*test/);
      expect(await jsonpath(['deploy', 'web'], '{.spec.replicas} {.metadata.resourceVersion}')).toBe(`4 ${rv}`);
      const noop = await k(['patch', 'configmap', 'alpha', '--type=merge', '-p', '{"data":{"greeting":"hello"}}']);
      expect(noop.stdout).toBe('configmap/alpha patched (no change)\n');
    });

    it('replace sends the edited object back; a stale resourceVersion conflicts', async () => {
      const obj = JSON.parse((await k(['get', 'configmap', 'alpha', '-o', 'json'])).stdout) as { data: Record<string, string>; metadata: { resourceVersion: string } };
      const stale = structuredClone(obj);
      obj.data.greeting = 'replaced';
      expect((await k(['replace', '-f', '-'], JSON.stringify(obj))).stdout).toBe('configmap/alpha replaced\n');
      expect(await jsonpath(['configmap', 'alpha'], '{.data.greeting}')).toBe('replaced');
      stale.data.greeting = 'lost update';
      const conflict = await k(['replace', '-f', '-'], JSON.stringify(stale));
      expect(conflict.code).not.toBe(0);
      expect(conflict.stderr).toContain('Operation cannot be fulfilled on configmaps "alpha": the object has been modified; please apply your changes to the latest version and try again');
      expect(await jsonpath(['configmap', 'alpha'], '{.data.greeting}')).toBe('replaced');
    });

    it('apply (client-side): created, configured, unchanged', async () => {
      const manifest = (value: string) => configMap('applied', { via: 'apply' }, { value });
      expect((await k(['apply', '-f', '-'], manifest('1'))).stdout).toBe('configmap/applied created\n');
      expect((await k(['apply', '-f', '-'], manifest('2'))).stdout).toBe('configmap/applied configured\n');
      expect((await k(['apply', '-f', '-'], manifest('2'))).stdout).toBe('configmap/applied unchanged\n');
      expect(await jsonpath(['configmap', 'applied'], '{.data.value}')).toBe('2');
      expect(await jsonpath(['configmap', 'applied'], '{.metadata.annotations}')).toContain('kubectl.kubernetes.io/last-applied-configuration');
    });

    it('apply --server-side: a second manager conflicts, --force-conflicts takes the field', async () => {
      const cm = (value: string) => configMap('shared', {}, { key: value });
      expect((await k(['apply', '--server-side', '--field-manager=alice', '-f', '-'], cm('a'))).stdout).toBe('configmap/shared serverside-applied\n');
      const conflict = await k(['apply', '--server-side', '--field-manager=bob', '-f', '-'], cm('b'));
      expect(conflict.code).not.toBe(0);
      expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "alice": .data.key');
      expect(await jsonpath(['configmap', 'shared'], '{.data.key}')).toBe('a');
      // The same value is shared without conflict.
      expect((await k(['apply', '--server-side', '--field-manager=carol', '-f', '-'], cm('a'))).stdout).toBe('configmap/shared serverside-applied\n');
      expect((await k(['apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', '-'], cm('b'))).stdout).toBe('configmap/shared serverside-applied\n');
      expect(await jsonpath(['configmap', 'shared'], '{.data.key}')).toBe('b');
      const managers = JSON.parse(await jsonpath(['configmap', 'shared'], '{.metadata.managedFields}')) as { manager: string; operation: string; fieldsV1?: Record<string, unknown> }[];
      const owners = managers.filter((m) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:key"')).map((m) => `${m.manager}/${m.operation}`);
      expect(owners).toEqual(['bob/Apply']);
    });

    it('--dry-run=server answers as the real request would and stores nothing', async () => {
      const created = await k(['create', 'configmap', 'dry', '--from-literal=a=b', '--dry-run=server', '-o', 'yaml']);
      expect(created.stdout).toMatch(/^  name: dry$/m);
      expect(created.stdout).toMatch(/^  a: b$/m);
      expect(created.stdout).toMatch(/^  uid: [0-9a-f-]{36}$/m);
      const gone = await k(['get', 'configmap', 'dry']);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toContain('configmaps "dry" not found');
      expect((await k(['delete', 'configmap', 'alpha', '--dry-run=server'])).stdout).toBe('configmap "alpha" deleted (server dry run)\n');
      expect((await k(['get', 'configmap', 'alpha', '-o', 'name'])).stdout).toBe('configmap/alpha\n');
      expect((await k(['scale', 'deploy', 'web', '--replicas=7', '--dry-run=server'])).stdout).toBe('deployment.apps/web scaled (server dry run)\n');
      expect(await jsonpath(['deploy', 'web'], '{.spec.replicas}')).toBe('4');
    });

    it('get --watch prints what another process changes', async () => {
      await k(['create', '-f', '-'], configMap('watched-0', { watched: 'yes' }, { v: '1' }));
      const watcher = startStreaming('kubectl', [`--kubeconfig=${server.kubeconfig}`, '-n', NS, 'get', 'configmaps', '-l', 'watched=yes', '--watch', '--output-watch-events', '-o', 'jsonpath={.type} {.object.metadata.name} {.object.data.v}{"\\n"}'], { ...process.env, KUBECACHEDIR: `${server.kubeconfig}.cache` });
      try {
        // The initial list is printed first; the watch then starts from the list's version, so
        // nothing written after this line can be missed.
        await watcher.waitForOutput(/^ADDED watched-0 1$/m);
        await k(['create', '-f', '-'], configMap('watched-1', { watched: 'yes' }, { v: '1' }));
        await k(['patch', 'configmap', 'watched-0', '--type=merge', '-p', '{"data":{"v":"2"}}']);
        await k(['label', 'configmap', 'watched-1', 'watched-']);
        await k(['delete', 'configmap', 'watched-0']);
        await watcher.waitForOutput(/^DELETED watched-0 2$/m);
        expect(watcher.stdout().trim().split('\n')).toEqual(['ADDED watched-0 1', 'ADDED watched-1 1', 'MODIFIED watched-0 2', 'DELETED watched-1 1', 'DELETED watched-0 2']);
      } finally {
        await watcher.stop();
      }
    });

    it('explain reads field docs from the served OpenAPI', async () => {
      const r = await k(['explain', 'pods.spec.containers.resources']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('KIND:       Pod');
      expect(r.stdout).toContain('VERSION:    v1');
      expect(r.stdout).toMatch(/FIELD: resources <ResourceRequirements>/);
      expect(r.stdout).toMatch(/^\s+limits\s+<map\[string\]Quantity>$/m);
      const recursive = await k(['explain', 'deployment.spec.strategy', '--recursive']);
      expect(recursive.stdout).toMatch(/^\s+rollingUpdate\s+<RollingUpdateDeployment>$/m);
      expect(recursive.stdout).toMatch(/^\s+maxSurge\s+<IntOrString>$/m);
    });

    it('delete by name and by label selector; the objects are gone', async () => {
      expect((await k(['delete', 'configmap', 'alpha'])).stdout).toBe('configmap "alpha" deleted\n');
      // --wait=false: waiting polls each object, and kubectl throttles itself to 5 requests/s.
      const byLabel = await k(['delete', 'configmaps', '-l', 'chunk=yes', '--wait=false']);
      expect(byLabel.stdout.trim().split('\n')).toHaveLength(25);
      expect(byLabel.stdout).toContain('configmap "chunk-07" deleted');
      const gone = await k(['get', 'configmap', 'alpha']);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toBe('Error from server (NotFound): configmaps "alpha" not found\n');
      expect((await k(['get', 'configmaps', '-l', 'chunk=yes'])).stderr).toBe(`No resources found in ${NS} namespace.\n`);
      expect((await k(['delete', 'deploy', 'web'])).stdout).toBe('deployment.apps "web" deleted\n');
    });
  });
}
