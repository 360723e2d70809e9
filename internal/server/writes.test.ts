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
