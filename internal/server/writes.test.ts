// Writes (spec §2.7, §2.9, §4.7, §4.8, §4.9) against a real server: patches, server-side
// apply with field ownership, dry run, field validation.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const deployment = (name: string, replicas = 1): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1' }, { name: 'side', image: 'busybox' }] } },
  },
});
const patch = (path: string, type: string, body: unknown, query = '') =>
  t.admin.request('PATCH', `${path}${query}`, { body: typeof body === 'string' ? body : JSON.stringify(body), raw: true, headers: { 'content-type': type } });
const apply = (path: string, body: Obj | string, manager: string, extra = '') =>
  patch(path, 'application/apply-patch+yaml', typeof body === 'string' ? body : JSON.stringify(body), `?fieldManager=${manager}${extra}`);

describe('patches (§4.9)', () => {
  it('JSON patch: every op, and a failing test stores nothing', async () => {
    await t.admin.post(DEPLOYS, deployment('jp'));
    const ok = await patch(`${DEPLOYS}/jp`, 'application/json-patch+json', [
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'add', path: '/metadata/labels', value: { a: 'b' } },
      { op: 'copy', from: '/metadata/labels/a', path: '/metadata/labels/c' },
      { op: 'move', from: '/metadata/labels/c', path: '/metadata/labels/d' },
      { op: 'remove', path: '/metadata/labels/a' },
    ]);
    expect(ok.status).toBe(200);
    expect(ok.json<Obj>().spec.replicas).toBe(3);
    expect(ok.json<Obj>().metadata.labels).toEqual({ d: 'b' });
    const rv = ok.json<Obj>().metadata.resourceVersion;
    const failed = await patch(`${DEPLOYS}/jp`, 'application/json-patch+json', [
      { op: 'replace', path: '/spec/replicas', value: 9 },
      { op: 'test', path: '/spec/replicas', value: 1 },
    ]);
    expect(failed.status).toBe(422);
    const after = (await t.admin.get(`${DEPLOYS}/jp`)).json<Obj>();
    expect(after.spec.replicas).toBe(3);
    expect(after.metadata.resourceVersion).toBe(rv);
    expect((await patch(`${DEPLOYS}/jp`, 'application/json-patch+json', [{ op: 'remove', path: '/nope/x' }])).status).toBe(422);
    expect((await patch(`${DEPLOYS}/jp`, 'application/json-patch+json', '{"not":"a list"}')).status).toBe(400);
  });

  it('merge patch replaces lists; strategic merge patch merges containers by name and honours directives', async () => {
    await t.admin.post(DEPLOYS, deployment('mp'));
    const merged = await patch(`${DEPLOYS}/mp`, 'application/merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'only', image: 'x' }] } } }, metadata: { labels: { k: 'v' } } });
    expect(merged.json<Obj>().spec.template.spec.containers.map((c: Obj) => c.name)).toEqual(['only']);
    await t.admin.post(DEPLOYS, deployment('smp'));
    const smp = await patch(`${DEPLOYS}/smp`, 'application/strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2' }] } } } });
    const containers = smp.json<Obj>().spec.template.spec.containers;
    expect(containers.map((c: Obj) => `${c.name}=${c.image}`)).toEqual(['main=nginx:2', 'side=busybox']);
    const deleted = await patch(`${DEPLOYS}/smp`, 'application/strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'side', $patch: 'delete' }] } } } });
    expect(deleted.json<Obj>().spec.template.spec.containers.map((c: Obj) => c.name)).toEqual(['main']);
    expect((await patch(`${DEPLOYS}/smp`, 'application/strategic-merge-patch+json', { spec: { $patch: 'explode' } })).status).toBe(400);
  });

  it('rejects unknown patch types with 415 and missing objects with 404', async () => {
    expect((await patch(`${DEPLOYS}/mp`, 'application/xml', '<x/>')).status).toBe(415);
    expect((await patch(`${DEPLOYS}/ghost`, 'application/merge-patch+json', { spec: {} })).status).toBe(404);
  });

  it('conditional patches: a stale resourceVersion in the body or If-Match is 409', async () => {
    const created = (await t.admin.post(DEPLOYS, deployment('cond'))).json<Obj>();
    await patch(`${DEPLOYS}/cond`, 'application/merge-patch+json', { spec: { replicas: 2 } });
    const stale = await patch(`${DEPLOYS}/cond`, 'application/merge-patch+json', { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { replicas: 5 } });
    expect(stale.status).toBe(409);
    const current = (await t.admin.get(`${DEPLOYS}/cond`)).json<Obj>().metadata.resourceVersion;
    const ifMatchStale = await t.admin.request('PATCH', `${DEPLOYS}/cond`, { body: '{"spec":{"replicas":6}}', raw: true, headers: { 'content-type': 'application/merge-patch+json', 'if-match': created.metadata.resourceVersion } });
    expect(ifMatchStale.status).toBe(409);
    const ifMatchOk = await t.admin.request('PATCH', `${DEPLOYS}/cond`, { body: '{"spec":{"replicas":7}}', raw: true, headers: { 'content-type': 'application/merge-patch+json', 'if-match': current } });
    expect(ifMatchOk.status).toBe(200);
  });

  it('patches that change immutable fields fail validation (422)', async () => {
    await t.admin.post(DEPLOYS, deployment('imm'));
    const res = await patch(`${DEPLOYS}/imm`, 'application/merge-patch+json', { spec: { selector: { matchLabels: { app: 'other' } }, template: { metadata: { labels: { app: 'other' } } } } });
    expect(res.status).toBe(422);
    expect(res.json<Obj>().details.causes.map((c: Obj) => c.field)).toContain('spec.selector');
  });
});

describe('server-side apply (§2.7)', () => {
  const path = `${DEPLOYS}/ssa`;
  const cfg = (replicas: number, extra: Obj = {}): Obj => ({ ...deployment('ssa', replicas), ...extra });

  it('creates a missing object, records Apply ownership with upstream fieldsV1 keys', async () => {
    const created = await apply(path, cfg(2), 'alice');
    expect(created.status).toBe(201);
    const mf = created.json<Obj>().metadata.managedFields;
    expect(mf).toHaveLength(1);
    expect(mf[0]).toMatchObject({ manager: 'alice', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' });
    expect(mf[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(mf[0].fieldsV1['f:spec']['f:replicas']).toEqual({});
    expect(mf[0].fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"main"}']).toMatchObject({ '.': {}, 'f:name': {}, 'f:image': {} });
  });

  it('shares a field two appliers set to the same value; a later change by one conflicts, naming the other', async () => {
    const shared = await apply(path, cfg(2), 'bob');
    expect(shared.status).toBe(200);
    const owners = shared.json<Obj>().metadata.managedFields.filter((m: Obj) => m.fieldsV1?.['f:spec']?.['f:replicas']).map((m: Obj) => m.manager);
    expect(owners.sort()).toEqual(['alice', 'bob']);
    const conflict = await apply(path, cfg(5), 'bob');
    expect(conflict.status).toBe(409);
    const status = conflict.json<Obj>();
    expect(status.reason).toBe('Conflict');
    expect(status.message).toContain('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
    expect(status.details.causes).toEqual([expect.objectContaining({ reason: 'FieldManagerConflict', field: '.spec.replicas' })]);
  });

  it('force takes the field; the loser keeps no ownership of it', async () => {
    const forced = await apply(path, cfg(5), 'bob', '&force=true');
    expect(forced.status).toBe(200);
    const obj = forced.json<Obj>();
    expect(obj.spec.replicas).toBe(5);
    const alice = obj.metadata.managedFields.find((m: Obj) => m.manager === 'alice');
    expect(alice.fieldsV1['f:spec']['f:replicas']).toBeUndefined();
  });

  it('omitting a field relinquishes it; a field nobody owns any more is removed', async () => {
    const withLabel = await apply(path, cfg(5, { metadata: { name: 'ssa', labels: { team: 'x' } } }), 'bob');
    expect(withLabel.json<Obj>().metadata.labels).toEqual({ team: 'x' });
    const without = await apply(path, cfg(5), 'bob');
    expect(without.json<Obj>().metadata.labels).toBeUndefined();
  });

  it('updates never conflict and take ownership of what they change', async () => {
    const current = (await t.admin.get(path)).json<Obj>();
    const updated = await t.admin.put(`${path}?fieldManager=carol`, { ...current, spec: { ...current.spec, replicas: 9 } });
    expect(updated.status).toBe(200);
    const carol = updated.json<Obj>().metadata.managedFields.find((m: Obj) => m.manager === 'carol');
    expect(carol).toMatchObject({ operation: 'Update' });
    expect(carol.fieldsV1['f:spec']['f:replicas']).toEqual({});
    const conflict = await apply(path, cfg(5), 'bob');
    expect(conflict.status).toBe(409);
    expect(conflict.json<Obj>().message).toContain('conflict with "carol"');
  });

  it('records User-Agent program names for updates without fieldManager', async () => {
    const res = await t.admin.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ua' }, data: { k: 'v' } }, headers: { 'user-agent': 'my-controller/v1.2 (linux/amd64)' } });
    expect(res.json<Obj>().metadata.managedFields[0]).toMatchObject({ manager: 'my-controller', operation: 'Update' });
  });

  it('resets managedFields with exactly one empty entry, not with an empty list', async () => {
    const current = (await t.admin.get(path)).json<Obj>();
    const emptyList = await t.admin.put(`${path}?fieldManager=dave`, { ...current, metadata: { ...current.metadata, managedFields: [] } });
    expect(emptyList.json<Obj>().metadata.managedFields.length).toBeGreaterThan(1);
    const again = (await t.admin.get(path)).json<Obj>();
    const reset = await t.admin.put(`${path}?fieldManager=dave`, { ...again, metadata: { ...again.metadata, managedFields: [{}] } });
    const mf = reset.json<Obj>().metadata.managedFields;
    expect(mf.map((m: Obj) => m.manager)).toEqual(['dave']);
  });

  it('rejects applies without fieldManager, with managedFields, or without metadata', async () => {
    expect((await patch(path, 'application/apply-patch+yaml', JSON.stringify(cfg(1)))).status).toBe(400);
    expect((await apply(path, { ...cfg(1), metadata: { name: 'ssa', managedFields: [{ manager: 'x' }] } }, 'eve')).status).toBe(400);
    expect((await apply(path, { apiVersion: 'apps/v1', kind: 'Deployment' }, 'eve')).status).toBe(400);
  });

  it('accepts YAML apply bodies', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-applied\ndata:\n  key: value\n';
    const res = await apply('/api/v1/namespaces/default/configmaps/yaml-applied', yaml, 'yamler');
    expect(res.status).toBe(201);
    expect(res.json<Obj>().data).toEqual({ key: 'value' });
  });
});

describe('what a create records as the creator\'s', () => {
  // Upstream records the creator's fields after defaulting and before mutating admission and
  // the kind's create preparation: what those add belongs to no manager, so a later apply by
  // the creator (kubectl's client-side to server-side migration turns the Update entry into
  // an Apply one) does not remove it.
  const owned = (obj: Obj, manager: string): Obj => obj.metadata.managedFields.find((m: Obj) => m.manager === manager).fieldsV1;

  it('a pod: defaults are the creator\'s, the service account admission\'s token volume and tolerations are not', async () => {
    const res = await t.admin.post('/api/v1/namespaces/default/pods?fieldManager=creator', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'owned-pod' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    expect(res.status, res.text()).toBe(200);
    const pod = res.json<Obj>();
    // Admission did add them.
    expect(pod.spec.volumes.map((v: Obj) => v.name)).toEqual([expect.stringMatching(/^kube-api-access-/)]);
    expect(pod.spec.containers[0].volumeMounts).toHaveLength(1);
    expect(pod.spec.tolerations.length).toBeGreaterThan(0);
    const f = owned(pod, 'creator');
    expect(f['f:spec']['f:dnsPolicy']).toEqual({});
    expect(f['f:spec']['f:containers']['k:{"name":"c"}']['f:imagePullPolicy']).toEqual({});
    expect(f['f:spec']['f:volumes']).toBeUndefined();
    expect(f['f:spec']['f:tolerations']).toBeUndefined();
    expect(f['f:spec']['f:serviceAccountName']).toBeUndefined();
    expect(f['f:spec']['f:containers']['k:{"name":"c"}']['f:volumeMounts']).toBeUndefined();
    expect(pod.metadata.managedFields).toHaveLength(1);
  });

  it('a namespace: the name label default is the creator\'s, the finalizer added at create is not', async () => {
    const res = await t.admin.post('/api/v1/namespaces?fieldManager=creator', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owned-ns' } });
    expect(res.status, res.text()).toBe(200);
    const ns = res.json<Obj>();
    // The names follow the server's naming (kubernetes or cluster.io).
    expect(ns.spec.finalizers).toHaveLength(1);
    const f = owned(ns, 'creator');
    expect(Object.keys(f['f:metadata']['f:labels']).sort()).toEqual(['.', expect.stringMatching(/^f:[a-z.]+\/metadata\.name$/)]);
    expect(f['f:spec']).toBeUndefined();
  });

  it('a job: its generated selector and controller labels are not the creator\'s, its template labels are', async () => {
    const job = (name: string, labels?: Record<string, string>) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: { template: { ...(labels ? { metadata: { labels } } : {}), spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
    });
    const generatedKeys = (labels: Obj) => Object.keys(labels).filter((k) => k !== 'app').sort();
    const labelled = await t.admin.post('/apis/batch/v1/namespaces/default/jobs?fieldManager=creator', job('owned-job', { app: 'a' }));
    expect(labelled.status, labelled.text()).toBe(200);
    const j = labelled.json<Obj>();
    // Both label sets carry the generated labels (upstream's job labels default as one map
    // with the template's), and the selector is generated.
    expect(generatedKeys(j.spec.template.metadata.labels)).toHaveLength(4);
    expect(j.metadata.labels).toEqual(j.spec.template.metadata.labels);
    expect(Object.values(j.spec.selector.matchLabels)).toEqual([j.metadata.uid]);
    const f = owned(j, 'creator');
    expect(Object.keys(f['f:metadata']['f:labels']).sort()).toEqual(['.', 'f:app']);
    expect(Object.keys(f['f:spec']['f:template']['f:metadata']['f:labels']).sort()).toEqual(['.', 'f:app']);
    expect(f['f:spec']['f:selector']).toBeUndefined();
    expect(f['f:spec']['f:backoffLimit']).toEqual({});

    const bare = (await t.admin.post('/apis/batch/v1/namespaces/default/jobs?fieldManager=creator', job('owned-job-bare'))).json<Obj>();
    expect(generatedKeys(bare.metadata.labels)).toHaveLength(4);
    const g = owned(bare, 'creator');
    expect(g['f:metadata']?.['f:labels']).toBeUndefined();
    expect(g['f:spec']['f:template']['f:metadata']).toBeUndefined();
    expect(g['f:spec']['f:selector']).toBeUndefined();

    // Job labels of their own are left as they are.
    const own = (await t.admin.post('/apis/batch/v1/namespaces/default/jobs', { ...job('owned-job-own', { app: 'a' }), metadata: { name: 'owned-job-own', labels: { team: 't' } } })).json<Obj>();
    expect(own.metadata.labels).toEqual({ team: 't' });
  });
});

describe('dry run (§4.7)', () => {
  it('runs every stage but persistence on POST, PUT, PATCH, DELETE and deletecollection', async () => {
    await t.admin.post(DEPLOYS, deployment('dry'));
    const before = t.server.store.currentRevision();
    const events: string[] = [];
    const w = t.admin.watch(`${DEPLOYS}?watch=1&resourceVersion=${before}`, (l) => events.push(l));
    const created = await t.admin.post(`${DEPLOYS}?dryRun=All`, { ...deployment('dry-new'), metadata: { generateName: 'dry-' } });
    expect(created.status).toBe(200);
    const obj = created.json<Obj>();
    expect(obj.metadata.name).toMatch(/^dry-[a-z0-9]{5}$/);
    expect(obj.metadata.uid).toBeDefined();
    expect(obj.metadata.creationTimestamp).toBeDefined();
    expect(obj.spec.revisionHistoryLimit).toBe(10);
    const current = (await t.admin.get(`${DEPLOYS}/dry`)).json<Obj>();
    expect((await t.admin.put(`${DEPLOYS}/dry?dryRun=All`, { ...current, spec: { ...current.spec, replicas: 4 } })).json<Obj>().spec.replicas).toBe(4);
    expect((await patch(`${DEPLOYS}/dry`, 'application/merge-patch+json', { spec: { replicas: 8 } }, '?dryRun=All')).json<Obj>().spec.replicas).toBe(8);
    expect((await apply(`${DEPLOYS}/dry`, deployment('dry', 3), 'x', '&dryRun=All&force=true')).json<Obj>().spec.replicas).toBe(3);
    expect((await t.admin.delete(`${DEPLOYS}/dry?dryRun=All`)).status).toBe(200);
    expect((await t.admin.delete(`${DEPLOYS}?dryRun=All`)).status).toBe(200);
    expect((await t.admin.post(`${DEPLOYS}?dryRun=Partial`, deployment('x'))).status).toBe(400);
    await new Promise((r) => setTimeout(r, 100));
    w.stop();
    expect(t.server.store.currentRevision()).toBe(before);
    expect(events).toEqual([]);
    expect((await t.admin.get(`${DEPLOYS}/dry`)).json<Obj>().spec.replicas).toBe(1);
    // `?dryRun` without a value is a normal request.
    expect((await t.admin.post(`${DEPLOYS}?dryRun`, deployment('not-dry'))).status).toBe(200);
    expect((await t.admin.get(`${DEPLOYS}/not-dry`)).status).toBe(200);
  });
});

describe('field validation of duplicate fields (§4.8)', () => {
  const json = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME","name":"NAME"},"data":{"a":"1","a":"2"}}';
  const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\ndata:\n  a: "1"\n  a: "2"\n';
  it.each([
    ['json', 'application/json', json],
    ['yaml', 'application/yaml', yaml],
  ])('%s: Strict rejects listing all, Warn warns, Ignore stays silent', async (label, type, body) => {
    const post = (name: string, mode: string) =>
      t.admin.request('POST', `/api/v1/namespaces/default/configmaps?fieldValidation=${mode}`, { body: body.replaceAll('NAME', name), raw: true, headers: { 'content-type': type } });
    const strict = await post(`${label}-strict`, 'Strict');
    expect(strict.status).toBe(400);
    expect(strict.json<Obj>().message).toContain('duplicate field "data.a"');
    const warn = await post(`${label}-warn`, 'Warn');
    expect(warn.status).toBe(200);
    expect(String(warn.headers.warning)).toContain('duplicate field');
    const ignore = await post(`${label}-ignore`, 'Ignore');
    expect(ignore.status).toBe(200);
    expect(ignore.headers.warning).toBeUndefined();
  });
});

describe('service addresses are held only by stored services', () => {
  const SVCS = '/api/v1/namespaces/default/services';
  const service = (name: string, ip: string, nodePort: number, extra: Obj = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { type: 'NodePort', clusterIP: ip, ports: [{ port: 80, nodePort }], ...extra },
  });
  // Each case first makes a write that reserves 10.96.7.<n> and node port 3070<n> but is not
  // stored; the same addresses must then be free for a real create.
  it.each([
    ['a dry-run create (kubectl diff before apply)', 1, (s: Obj) => t.admin.post(`${SVCS}?dryRun=All`, s)],
    ['a create that fails validation', 2, (s: Obj) => t.admin.post(SVCS, { ...s, spec: { ...s.spec, sessionAffinity: 'Bogus' } })],
    ['a create of a name that exists', 3, async (s: Obj) => {
      await t.admin.post(SVCS, service(s.metadata.name, '', 0, { type: 'ClusterIP', ports: [{ port: 80 }] }));
      return t.admin.post(SVCS, s);
    }],
    ['a dry-run update', 4, async (s: Obj) => {
      const created = (await t.admin.post(SVCS, service(`${s.metadata.name}-u`, '', 0, { type: 'ClusterIP', clusterIP: undefined, ports: [{ port: 80 }] }))).json<Obj>();
      return patch(`${SVCS}/${created.metadata.name}`, 'application/merge-patch+json', { spec: { type: 'NodePort', ports: [{ port: 80, nodePort: s.spec.ports[0].nodePort }] } }, '?dryRun=All');
    }],
  ])('%s leaves its addresses free', async (_label, n, first) => {
    const ip = `10.96.7.${n}`;
    const port = 30700 + n;
    await first(service(`held-${n}`, ip, port));
    const real = await t.admin.post(SVCS, service(`real-${n}`, ip, port));
    expect(real.status).toBe(200);
    expect(real.json<Obj>().spec.clusterIPs).toEqual([ip]);
    expect(real.json<Obj>().spec.ports[0].nodePort).toBe(port);
    // Stored, they are taken.
    const again = await t.admin.post(SVCS, service(`again-${n}`, ip, 0));
    expect(again.status).toBe(422);
  });
});

describe('field ownership through the scale sub-resource', () => {
  it('is recorded with subresource "scale", and an applier that set replicas then conflicts with it', async () => {
    const path = `${DEPLOYS}/scaled`;
    expect((await apply(path, deployment('scaled', 1), 'applier')).status).toBe(201);
    const scaled = await patch(`${path}/scale`, 'application/merge-patch+json', { spec: { replicas: 5 } }, '?fieldManager=scaler');
    expect(scaled.status).toBe(200);
    const put = await t.admin.put(`${path}/scale?fieldManager=replacer`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: 6 } });
    expect(put.status).toBe(200);
    const obj = (await t.admin.get(path)).json<Obj>();
    expect(obj.spec.replicas).toBe(6);
    expect(obj.metadata.generation).toBe(3);
    const owners = (obj.metadata.managedFields as Obj[]).filter((m) => m.fieldsV1?.['f:spec']?.['f:replicas']);
    expect(owners.map((m) => [m.manager, m.operation, m.subresource])).toEqual([['replacer', 'Update', 'scale']]);
    const conflict = await apply(path, deployment('scaled', 1), 'applier');
    expect(conflict.status).toBe(409);
    expect(conflict.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "replacer" with subresource "scale" using apps/v1: .spec.replicas');
  });
});

describe('server-side apply on the scale sub-resource', () => {
  const scaleBody = (name: string, replicas: number): Obj => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace: 'default' }, spec: { replicas } });
  const replicasOwners = (obj: Obj) =>
    (obj.metadata.managedFields as Obj[]).filter((m) => m.fieldsV1?.['f:spec']?.['f:replicas']).map((m) => [m.manager, m.operation, m.apiVersion, m.subresource]);

  it('records the Scale applier as the owner of spec.replicas with subresource "scale", and answers the Scale', async () => {
    const path = `${DEPLOYS}/sa-own`;
    expect((await apply(path, deployment('sa-own', 1), 'deployer')).status).toBe(201);
    // deployer owns replicas: the Scale applier meets it as upstream names it.
    const conflict = await apply(`${path}/scale`, scaleBody('sa-own', 3), 'hpa');
    expect(conflict.status).toBe(409);
    expect(conflict.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "deployer": .spec.replicas');
    const forced = await apply(`${path}/scale`, scaleBody('sa-own', 3), 'hpa', '&force=true');
    expect(forced.status).toBe(200);
    expect(forced.json<Obj>()).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { selector: 'app=sa-own' } });
    expect(forced.json<Obj>().metadata.managedFields).toBeUndefined();
    const obj = (await t.admin.get(path)).json<Obj>();
    expect(obj.spec.replicas).toBe(3);
    expect(replicasOwners(obj)).toEqual([['hpa', 'Apply', 'apps/v1', 'scale']]);
    const deployer = (obj.metadata.managedFields as Obj[]).find((m) => m.manager === 'deployer')!;
    expect(deployer.fieldsV1['f:spec']['f:selector']).toEqual({});
    expect(deployer.subresource).toBeUndefined();
    // Applying the same value again is no change; a new value is owned by hpa alone.
    expect((await apply(`${path}/scale`, scaleBody('sa-own', 4), 'hpa')).status).toBe(200);
    expect((await t.admin.get(path)).json<Obj>().spec.replicas).toBe(4);
  });

  it('an apply of the workload that changes replicas conflicts with the Scale applier, and force takes them back', async () => {
    const path = `${DEPLOYS}/sa-back`;
    const withoutReplicas = deployment('sa-back');
    delete withoutReplicas.spec.replicas;
    expect((await apply(path, withoutReplicas, 'deployer')).status).toBe(201);
    // Nobody owns the defaulted replicas, so the Scale has no owners: like upstream, apply first
    // records what the Scale has under "before-first-apply", which a new value conflicts with.
    const first = await apply(`${path}/scale`, scaleBody('sa-back', 2), 'hpa');
    expect(first.status).toBe(409);
    expect(first.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "before-first-apply" with subresource "scale" using autoscaling/v1: .spec.replicas');
    expect((await apply(`${path}/scale`, scaleBody('sa-back', 2), 'hpa', '&force=true')).status).toBe(200);
    expect(replicasOwners((await t.admin.get(path)).json<Obj>())).toEqual([['hpa', 'Apply', 'apps/v1', 'scale']]);
    const conflict = await apply(path, deployment('sa-back', 5), 'deployer');
    expect(conflict.status).toBe(409);
    expect(conflict.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "hpa" with subresource "scale": .spec.replicas');
    // Same value: no conflict, both own it (in the workload and through the Scale).
    expect((await apply(path, deployment('sa-back', 2), 'co-owner')).status).toBe(200);
    expect(replicasOwners((await t.admin.get(path)).json<Obj>())).toEqual([
      ['co-owner', 'Apply', 'apps/v1', undefined],
      ['hpa', 'Apply', 'apps/v1', 'scale'],
    ]);
    // The Scale applier moving replicas now conflicts with the workload's co-owner.
    const scaleConflict = await apply(`${path}/scale`, scaleBody('sa-back', 7), 'hpa');
    expect(scaleConflict.status).toBe(409);
    expect(scaleConflict.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "co-owner": .spec.replicas');
    const forced = await apply(path, deployment('sa-back', 5), 'deployer', '&force=true');
    expect(forced.status).toBe(200);
    const obj = (await t.admin.get(path)).json<Obj>();
    expect(obj.spec.replicas).toBe(5);
    expect(replicasOwners(obj)).toEqual([['deployer', 'Apply', 'apps/v1', undefined]]);
  });

  it('conflicts with an Update through the Scale name the manager with subresource "scale"', async () => {
    const path = `${DEPLOYS}/sa-upd`;
    expect((await apply(path, deployment('sa-upd', 1), 'deployer')).status).toBe(201);
    expect((await patch(`${path}/scale`, 'application/merge-patch+json', { spec: { replicas: 5 } }, '?fieldManager=scaler')).status).toBe(200);
    const conflict = await apply(`${path}/scale`, scaleBody('sa-upd', 6), 'hpa');
    expect(conflict.status).toBe(409);
    expect(conflict.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using autoscaling/v1: .spec.replicas');
    // Co-owning the current value leaves the Update entry in place.
    expect((await apply(`${path}/scale`, scaleBody('sa-upd', 5), 'hpa')).status).toBe(200);
    expect(replicasOwners((await t.admin.get(path)).json<Obj>())).toEqual([
      ['hpa', 'Apply', 'apps/v1', 'scale'],
      ['scaler', 'Update', 'apps/v1', 'scale'],
    ]);
  });

  it('dryRun stores nothing, fieldValidation applies to the Scale body, fieldManager is required', async () => {
    const path = `${DEPLOYS}/sa-dry`;
    expect((await apply(path, deployment('sa-dry', 1), 'deployer')).status).toBe(201);
    const before = (await t.admin.get(path)).json<Obj>();
    const dry = await apply(`${path}/scale`, scaleBody('sa-dry', 9), 'hpa', '&force=true&dryRun=All');
    expect(dry.status).toBe(200);
    expect(dry.json<Obj>().spec.replicas).toBe(9);
    const after = (await t.admin.get(path)).json<Obj>();
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.replicas).toBe(1);

    const unknown = { ...scaleBody('sa-dry', 1), spec: { replicas: 1, bogus: true } };
    const strict = await apply(`${path}/scale`, unknown, 'hpa', '&fieldValidation=Strict');
    expect(strict.status).toBe(400);
    expect(strict.json<Obj>().message).toBe('strict decoding error: unknown field "spec.bogus"');
    const warn = await apply(`${path}/scale`, unknown, 'hpa', '&fieldValidation=Warn');
    expect(warn.status).toBe(200);
    expect(String(warn.headers.warning)).toContain('unknown field \\"spec.bogus\\"');

    const noManager = await patch(`${path}/scale`, 'application/apply-patch+yaml', scaleBody('sa-dry', 2));
    expect(noManager.status).toBe(400);
    expect(noManager.json<Obj>().message).toBe('PATCH, application/apply-patch+yaml requires fieldManager to be specified');
    expect((await apply(`${DEPLOYS}/sa-missing/scale`, scaleBody('sa-missing', 2), 'hpa')).status).toBe(404);
  });

  it.each([
    ['statefulsets', '/apis/apps/v1/namespaces/default/statefulsets', 'apps/v1', 'StatefulSet'],
    ['replicasets', '/apis/apps/v1/namespaces/default/replicasets', 'apps/v1', 'ReplicaSet'],
    ['replicationcontrollers', '/api/v1/namespaces/default/replicationcontrollers', 'v1', 'ReplicationController'],
  ])('works on %s', async (resource, base, apiVersion, kind) => {
    const name = `sa-${resource}`;
    const body = deployment(name, 1);
    body.apiVersion = apiVersion;
    body.kind = kind;
    if (kind === 'ReplicationController') body.spec.selector = { app: name };
    if (kind === 'StatefulSet') body.spec.serviceName = name;
    expect((await apply(`${base}/${name}`, body, 'deployer')).status).toBe(201);
    expect((await apply(`${base}/${name}/scale`, scaleBody(name, 3), 'hpa')).status).toBe(409);
    expect((await apply(`${base}/${name}/scale`, scaleBody(name, 3), 'hpa', '&force=true')).status).toBe(200);
    const obj = (await t.admin.get(`${base}/${name}`)).json<Obj>();
    expect(obj.spec.replicas).toBe(3);
    expect(replicasOwners(obj)).toEqual([['hpa', 'Apply', apiVersion, 'scale']]);
    expect((await apply(`${base}/${name}`, body, 'deployer')).status).toBe(409);
  });

  it('works on a custom resource, at the definition\'s specReplicasPath', async () => {
    const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
    const GADGETS = '/apis/scale.example.com/v1/namespaces/default/gadgets';
    const crd = {
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.scale.example.com' },
      spec: {
        group: 'scale.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' }, scaling: { type: 'object', properties: { count: { type: 'integer' } } } } },
                  status: { type: 'object', properties: { count: { type: 'integer' } } },
                },
              },
            },
            subresources: { status: {}, scale: { specReplicasPath: '.spec.scaling.count', statusReplicasPath: '.status.count' } },
          },
        ],
      },
    };
    expect((await t.admin.post(CRDS, crd)).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while ((await t.admin.get(`${GADGETS}`)).status !== 200) {
      if (Date.now() > deadline) throw new Error('gadgets never served');
      await new Promise((r) => setTimeout(r, 50));
    }
    const gadget = (count: number): Obj => ({ apiVersion: 'scale.example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 1, scaling: { count } } });
    expect((await apply(`${GADGETS}/g1`, gadget(1), 'deployer')).status).toBe(201);
    const conflict = await apply(`${GADGETS}/g1/scale`, scaleBody('g1', 4), 'hpa');
    expect(conflict.status).toBe(409);
    expect(conflict.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "deployer": .spec.replicas');
    const forced = await apply(`${GADGETS}/g1/scale`, scaleBody('g1', 4), 'hpa', '&force=true');
    expect(forced.status).toBe(200);
    expect(forced.json<Obj>().spec.replicas).toBe(4);
    const obj = (await t.admin.get(`${GADGETS}/g1`)).json<Obj>();
    expect(obj.spec.scaling.count).toBe(4);
    const hpa = (obj.metadata.managedFields as Obj[]).find((m) => m.manager === 'hpa')!;
    expect(hpa).toMatchObject({ operation: 'Apply', apiVersion: 'scale.example.com/v1', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:scaling': { 'f:count': {} } } } });
    const deployer = (obj.metadata.managedFields as Obj[]).find((m) => m.manager === 'deployer')!;
    expect(deployer.fieldsV1['f:spec']['f:scaling']).toBeUndefined();
    const back = await apply(`${GADGETS}/g1`, gadget(2), 'deployer');
    expect(back.status).toBe(409);
    expect(back.json<Obj>().message).toBe('Apply failed with 1 conflict: conflict with "hpa" with subresource "scale": .spec.scaling.count');
  });
});

describe('bodies of built-in kinds that do not decode into the Go type', () => {
  const PODS = '/api/v1/namespaces/default/pods';
  const badRequest = (message: string) => ({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message });

  it('POST answers 400 with encoding/json wording and stores nothing (JSON and YAML bodies)', async () => {
    const body = deployment('typed-post');
    body.spec.replicas = 'three';
    const res = await t.admin.post(DEPLOYS, body);
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject(
      badRequest('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'),
    );
    expect((await t.admin.get(`${DEPLOYS}/typed-post`)).status).toBe(404);

    const yaml = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: typed-yaml\n  labels: x\nspec:\n  replicas: 1.5\n';
    const fromYaml = await t.admin.request('POST', DEPLOYS, { body: yaml, raw: true, headers: { 'content-type': 'application/yaml' } });
    expect(fromYaml.status).toBe(400);
    expect(fromYaml.json<Obj>().message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    );
    expect((await t.admin.get(`${DEPLOYS}/typed-yaml`)).status).toBe(404);

    const pod = await t.admin.post(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'typed-pod' }, spec: { containers: {} } });
    expect(pod.status).toBe(400);
    expect(pod.json<Obj>().message).toBe('Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container');
  });

  it('PUT answers 400 and leaves the stored object alone; a bad quantity is a decode error too', async () => {
    const created = await t.admin.post(DEPLOYS, deployment('typed-put'));
    expect(created.status).toBe(200);
    const next = created.json<Obj>();
    next.spec.template.spec.containers[0].image = 5;
    const res = await t.admin.put(`${DEPLOYS}/typed-put`, next);
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject(
      badRequest('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string'),
    );
    const quantity = created.json<Obj>();
    quantity.spec.template.spec.containers[0].resources = { limits: { cpu: 'lots' } };
    const q = await t.admin.put(`${DEPLOYS}/typed-put`, quantity);
    expect(q.status).toBe(400);
    expect(q.json<Obj>().message).toBe(
      "Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    const stored = (await t.admin.get(`${DEPLOYS}/typed-put`)).json<Obj>();
    expect(stored.metadata.resourceVersion).toBe(created.json<Obj>().metadata.resourceVersion);
    expect(stored.spec.template.spec.containers[0].image).toBe('nginx:1');
  });

  it('PUT of the scale sub-resource names the Scale type', async () => {
    expect((await t.admin.post(DEPLOYS, deployment('typed-scale'))).status).toBe(200);
    const res = await t.admin.put(`${DEPLOYS}/typed-scale/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'typed-scale', namespace: 'default' }, spec: { replicas: '2' } });
    expect(res.status).toBe(400);
    expect(res.json<Obj>().message).toBe('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32');
  });

  it('a type error wins over strict field validation, as upstream reports strict errors only for bodies that decode', async () => {
    const body: Obj = { ...deployment('typed-strict'), extra: 1 };
    body.spec.replicas = true;
    const res = await t.admin.post(`${DEPLOYS}?fieldValidation=Strict`, body);
    expect(res.status).toBe(400);
    expect(res.json<Obj>().message).toBe('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field DeploymentSpec.spec.replicas of type int32');
  });

  it('patches keep reporting a wrong type as 422 Invalid', async () => {
    expect((await t.admin.post(DEPLOYS, deployment('typed-patch'))).status).toBe(200);
    const res = await patch(`${DEPLOYS}/typed-patch`, 'application/merge-patch+json', { spec: { replicas: 'three' } });
    expect(res.status).toBe(422);
  });
});

describe('a POST body that carries a resourceVersion', () => {
  // Upstream's storage refuses it (an unclassified error: 500, no reason), after validation and
  // not on a dry run; kubectl prints the message as it is.
  it('is refused with upstream\'s message and stores nothing; a dry run passes', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'with-rv', resourceVersion: '7' } };
    const res = await t.admin.post(path, body);
    expect(res.status).toBe(500);
    const status = res.json<Obj>();
    expect(status.message).toBe('resourceVersion should not be set on objects to be created');
    expect(status).not.toHaveProperty('reason');
    expect((await t.admin.get(`${path}/with-rv`)).status).toBe(404);
    expect((await t.admin.post(`${path}?dryRun=All`, body)).status).toBe(200);
    expect((await t.admin.post(path, { ...body, metadata: { name: 'with-rv', resourceVersion: '' } })).status).toBe(200);
  });
});

describe('empty lists and maps of built-in kinds, as Go omits them', () => {
  const CMS = '/api/v1/namespaces/default/configmaps';
  it('a create stores and returns none of them; structs and required lists stay', async () => {
    const res = await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'empties', labels: {}, annotations: {}, finalizers: [], ownerReferences: [] }, data: {} });
    expect(res.status).toBe(200);
    for (const got of [res.json<Obj>(), (await t.admin.get(`${CMS}/empties`)).json<Obj>()]) {
      expect(Object.keys(got.metadata).filter((k) => ['labels', 'annotations', 'finalizers', 'ownerReferences'].includes(k))).toEqual([]);
      expect(got).not.toHaveProperty('data');
    }
    const pod = await t.admin.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'empties' },
      spec: { nodeSelector: {}, containers: [{ name: 'c', image: 'x', args: [], env: [], resources: {} }] },
    });
    expect(pod.status).toBe(200);
    const spec = pod.json<Obj>().spec;
    expect(spec).not.toHaveProperty('nodeSelector');
    expect(spec.containers[0]).not.toHaveProperty('args');
    expect(spec.containers[0]).not.toHaveProperty('env');
    expect(spec.containers[0].resources).toEqual({});
    expect(spec.securityContext).toEqual({});
  });

  // kubectl diff sends its client-side apply patch as a dry run with "annotations": {}; kept,
  // that empty map made every object created by kubectl create read as changed (exit code 1).
  it('a patch that only adds an empty map changes nothing, dry run or not', async () => {
    const created = await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'diffed' }, data: { a: 'b' } });
    const rv = created.json<Obj>().metadata.resourceVersion;
    for (const query of ['?dryRun=All&fieldManager=kubectl-client-side-apply', '']) {
      const res = await patch(`${CMS}/diffed`, 'application/strategic-merge-patch+json', { metadata: { annotations: {} } }, query);
      expect(res.status).toBe(200);
      expect(res.json<Obj>().metadata).not.toHaveProperty('annotations');
      expect(res.json<Obj>().metadata.resourceVersion).toBe(rv);
    }
  });

  it('an update with empty labels removes them', async () => {
    const created = (await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'relabel', labels: { a: 'b' } } })).json<Obj>();
    const res = await t.admin.put(`${CMS}/relabel`, { ...created, metadata: { ...created.metadata, labels: {} } });
    expect(res.status).toBe(200);
    expect(res.json<Obj>().metadata).not.toHaveProperty('labels');
    expect((await t.admin.get(`${CMS}/relabel`)).json<Obj>().metadata).not.toHaveProperty('labels');
  });
});
