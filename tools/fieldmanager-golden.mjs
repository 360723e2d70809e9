// tools/fieldmanager-golden owns the byte-for-byte comparison of two builds' field management:
// a seeded script of server-side applies (three managers, force, nulls, bodies with
// managedFields), PUTs, merge patches and status applies on Deployments and on a custom
// resource with list-map, set and defaulted fields, through a real in-process server built at
// ROOT (dist/), with the clock faked so entry times and their order are the same every run. It
// prints every answer (status code and body, uid and resourceVersion blanked); two builds agree
// when the outputs are identical:
//   node tools/fieldmanager-golden.mjs /path/to/base-worktree 120 > base.txt
//   node tools/fieldmanager-golden.mjs . 120 > new.txt && cmp base.txt new.txt
// Imports (of ROOT's build): internal/testserver/test-server.
const ROOT = process.argv[2];
const SEEDS = Number(process.argv[3] ?? 80);
const RealDate = Date;
let fake = RealDate.UTC(2026, 10, 28, 12, 0, 0);
class FakeDate extends RealDate {
  constructor(...a) { if (a.length === 0) super(fake); else super(...a); }
  static now() { return fake; }
}
globalThis.Date = FakeDate;
const { startTestServer } = await import(`${ROOT}/dist/internal/testserver/test-server.js`);
const ts = await startTestServer({ naming: 'kubernetes' });
const c = ts.admin;
const out = [];
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const norm = (text) => text.replace(/"(uid|resourceVersion)":"[^"]*"/g, '"$1":"X"');
const rec = async (label, p) => { const r = await p; out.push(`${label} ${r.status} ${norm(r.text()).trim()}`); return r; };
function rng(seed) { let s = seed >>> 0 || 1; return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; }; }

await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'g' } });
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.ex.com' },
  spec: { group: 'ex.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', properties: {
      spec: { type: 'object', properties: {
        size: { type: 'integer', default: 3 }, color: { type: 'string' }, tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', default: 80 } } } },
        extra: { type: 'object', additionalProperties: { type: 'string' } } } },
      status: { type: 'object', properties: { ready: { type: 'boolean' }, count: { type: 'integer', default: 0 } } } } } } }] },
};
{ const cr = await c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); if (cr.status !== 201 && cr.status !== 200) { console.error(cr.status, cr.text()); process.exit(1); } }
for (let i = 0; i < 100; i++) { const r = await c.get('/apis/ex.com/v1/namespaces/g/widgets'); if (r.status === 200) break; await new Promise((res) => setTimeout(res, 100)); }

const pick = (r, a) => a[Math.floor(r() * a.length)];
function deployBody(r, name, mgr) {
  const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name } };
  const m = d.metadata;
  if (r() < 0.5) m.labels = { [`l-${mgr}`]: pick(r, ['a', 'b', '']), ...(r() < 0.3 ? { shared: mgr } : {}) };
  if (r() < 0.2) m.labels = { ...(m.labels ?? {}), gone: null };
  if (r() < 0.4) m.annotations = { [`a-${mgr}`]: pick(r, ['x', 'y']) };
  if (mgr === 'a' || r() < 0.3) {
    const containers = [{ name: 'c1', image: pick(r, ['nginx:1', 'nginx:2']) }];
    if (r() < 0.5) containers[0].env = [{ name: 'E1', value: pick(r, ['1', '2']) }, ...(r() < 0.5 ? [{ name: 'E2', value: 'v' }] : [])];
    if (r() < 0.4) containers[0].ports = [{ containerPort: pick(r, [80, 8080]), protocol: 'TCP' }];
    if (r() < 0.3) containers.push({ name: 'c2', image: 'busybox', resources: r() < 0.5 ? { limits: { cpu: '100m' } } : null });
    d.spec = { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers } } };
    if (r() < 0.6) d.spec.replicas = pick(r, [1, 2, 3]);
    if (r() < 0.2) d.spec.strategy = { type: 'Recreate' };
    if (r() < 0.15) d.spec.paused = null;
  } else if (r() < 0.5) d.spec = { replicas: pick(r, [1, 5]) };
  return d;
}
function widgetBody(r, name, mgr) {
  const w = { apiVersion: 'ex.com/v1', kind: 'Widget', metadata: { name } };
  if (r() < 0.4) w.metadata.labels = { [`l-${mgr}`]: 'v', ...(r() < 0.2 ? { n: null } : {}) };
  const spec = {};
  if (r() < 0.5) spec.size = pick(r, [1, 2, null]);
  if (r() < 0.5) spec.color = pick(r, ['red', 'blue']);
  if (r() < 0.5) spec.tags = [pick(r, ['t1', 't2']), ...(r() < 0.5 ? [`t-${mgr}`] : [])];
  if (r() < 0.5) spec.ports = [{ name: `p-${mgr}`, ...(r() < 0.5 ? { port: 81 } : {}) }, ...(r() < 0.3 ? [{ name: 'shared', port: pick(r, [1, 2]) }] : [])];
  if (r() < 0.3) spec.extra = { [mgr]: 'x', ...(r() < 0.3 ? { k: null } : {}) };
  if (Object.keys(spec).length || r() < 0.5) w.spec = spec;
  return w;
}

for (let seed = 1; seed <= SEEDS; seed++) {
  const r = rng(seed * 7919);
  const isWidget = seed % 3 === 0;
  const name = `o${seed}`;
  const base = isWidget ? '/apis/ex.com/v1/namespaces/g/widgets' : '/apis/apps/v1/namespaces/g/deployments';
  const body = isWidget ? widgetBody : deployBody;
  if (r() < 0.3) {
    const b = body(r, name, 'creator');
    for (const [k, v] of Object.entries(b.metadata.labels ?? {})) if (v === null) delete b.metadata.labels[k];
    if (b.spec?.template?.spec?.containers) for (const ct of b.spec.template.spec.containers) if (ct.resources === null) delete ct.resources;
    if (!isWidget && !b.spec?.template) continue;
    if (b.spec) for (const [k, v] of Object.entries(b.spec)) if (v === null) delete b.spec[k];
    await rec(`${name} create`, c.post(base, b));
  }
  for (let step = 0; step < 14; step++) {
    fake += pick(r, [0, 1000, 1000, 61000]);
    const mgr = pick(r, ['a', 'b', 'c', 'a']);
    const op = r();
    if (op < 0.6) {
      const force = r() < 0.3;
      await rec(`${name} s${step} apply ${mgr}${force ? ' force' : ''}`, c.request('PATCH', `${base}/${name}?fieldManager=${mgr}${force ? '&force=true' : ''}`, { body: body(r, name, mgr), headers: APPLY }));
    } else if (op < 0.7) {
      const g = await c.get(`${base}/${name}`);
      if (g.status !== 200) continue;
      const o = g.json();
      o.metadata.labels = { ...(o.metadata.labels ?? {}), put: String(step) };
      if (r() < 0.5) delete o.metadata.managedFields;
      if (o.spec && r() < 0.5) { if (isWidget) o.spec.color = 'green'; else o.spec.replicas = 7; }
      await rec(`${name} s${step} put ${mgr}`, c.request('PUT', `${base}/${name}?fieldManager=put-${mgr}`, { body: o }));
    } else if (op < 0.8) {
      const patch = isWidget ? { spec: { color: pick(r, ['m1', null]) } } : { spec: { replicas: pick(r, [4, null]) }, metadata: { annotations: { mp: String(step) } } };
      await rec(`${name} s${step} merge ${mgr}`, c.request('PATCH', `${base}/${name}?fieldManager=mp-${mgr}`, { body: patch, headers: MERGE }));
    } else if (op < 0.9) {
      const status = isWidget ? { ready: r() < 0.5, ...(r() < 0.5 ? { count: 2 } : {}) } : { replicas: pick(r, [0, 1]), observedGeneration: 1 };
      const b = { apiVersion: isWidget ? 'ex.com/v1' : 'apps/v1', kind: isWidget ? 'Widget' : 'Deployment', metadata: { name }, status };
      await rec(`${name} s${step} status-apply ${mgr}`, c.request('PATCH', `${base}/${name}/status?fieldManager=st-${mgr}${r() < 0.5 ? '&force=true' : ''}`, { body: b, headers: APPLY }));
    } else {
      const b = body(r, name, mgr);
      b.metadata.managedFields = [{ manager: 'x', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }];
      await rec(`${name} s${step} bad-apply ${mgr}`, c.request('PATCH', `${base}/${name}?fieldManager=${mgr}`, { body: b, headers: APPLY }));
    }
  }
  await rec(`${name} final`, c.get(`${base}/${name}`));
}
await ts.stop();
process.stdout.write(out.join('\n') + '\n');
process.exit(0);
