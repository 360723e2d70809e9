// Encodings and representations (spec §1, §2.5, §2.8, §4.4) against a real server.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { request } from 'node:https';
import { decodeCbor, decodeCborSeq, encodeCbor, ProtobufCodec } from '../codec/index.js';
import { FeatureGates } from '../config/feature-gates.js';
import { createNaming } from '../naming/naming.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const PROTO = 'application/vnd.cluster.protobuf';
const TABLE = 'application/json;as=Table;g=meta.cluster.io;v=v1';
const CMS = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const codec = new ProtobufCodec(createNaming('cluster'));

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', labels: { a: 'b' } }, data: { k: 'v' } });
  await t.admin.post(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
});
afterAll(() => t.stop());

describe('negotiation (§4.4)', () => {
  it.each([
    [undefined, 200, 'application/json'],
    ['*/*', 200, 'application/json'],
    ['application/*', 200, 'application/json'],
    ['application/yaml', 200, 'application/yaml'],
    ['application/json;q=0.5, application/yaml', 200, 'application/yaml'],
    ['text/html, application/yaml;q=0.8, application/json;q=0.9', 200, 'application/json'],
    [`${PROTO}, application/json`, 200, PROTO],
    [`${TABLE}, application/json`, 200, 'application/json'],
    ['application/json;as=Table;g=meta.other.io;v=v1, application/json', 200, 'application/json'],
    ['application/cbor', 406, undefined],
    ['text/html', 406, undefined],
    ['application/json;q=0', 406, undefined],
    ['application/json;as=Table;g=meta.cluster.io;v=v1;q=0, text/plain', 406, undefined],
  ])('GET with Accept %j → %i %s', async (accept, status, type) => {
    const res = await t.admin.get(`${CMS}/c1`, accept === undefined ? undefined : { accept });
    expect(res.status).toBe(status);
    if (type) expect(String(res.headers['content-type'])).toContain(type);
    else expect(res.json()).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
  });

  it('rejects request bodies in unsupported media types with 415 and CBOR while its gate is off', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/cbor']) {
      const res = await t.admin.request('POST', CMS, { body: 'x', raw: true, headers: { 'content-type': type } });
      expect(res.status, type).toBe(415);
      expect(res.json()).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType' });
    }
  });
});

describe('pretty JSON, as upstream isPrettyPrint', () => {
  const indented = /^\{\n {2}"kind": "/;
  it.each([
    ['an object with ?pretty=true', `${CMS}/c1?pretty=true`, {}, true],
    ['an object with ?pretty=1', `${CMS}/c1?pretty=1`, {}, true],
    ['an object for curl', `${CMS}/c1`, { 'user-agent': 'curl/8.5.0' }, true],
    ['an object for a browser', `${CMS}/c1`, { 'user-agent': 'Mozilla/5.0 (X11)' }, true],
    ['an object for curl with ?pretty=false', `${CMS}/c1?pretty=false`, { 'user-agent': 'curl/8.5.0' }, false],
    ['an object with an unparsable ?pretty', `${CMS}/c1?pretty=yes`, { 'user-agent': 'curl/8.5.0' }, false],
    ['an object for a program', `${CMS}/c1`, { 'user-agent': 'kubectl/v1.32.4' }, false],
    ['a list', `${CMS}?pretty=true`, {}, true],
    ['a Table', `${CMS}?pretty=true`, { accept: TABLE }, true],
    ['an error', `${CMS}/nope?pretty=true`, {}, true],
    ['legacy discovery', '/apis/apps/v1?pretty=true', {}, true],
    ['YAML (no pretty form)', `${CMS}/c1?pretty=true`, { accept: 'application/yaml' }, false],
  ])('indents %s: %s', async (_name, path, headers, pretty) => {
    const res = await t.admin.get(path, headers as Record<string, string>);
    expect(indented.test(res.text())).toBe(pretty);
    if (pretty) expect(res.text().endsWith('}')).toBe(true);
  });
});

describe('YAML', () => {
  it('creates from YAML and answers YAML for objects and lists', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  on: "yes"\n  count: "3"\n';
    const created = await t.admin.request('POST', CMS, { body: yaml, raw: true, headers: { 'content-type': 'application/yaml', accept: 'application/yaml' } });
    expect(created.status).toBe(200);
    expect(created.headers['content-type']).toBe('application/yaml');
    expect(created.text()).toMatch(/^apiVersion: v1\n/);
    expect(created.text()).toContain('  name: from-yaml\n');
    const list = await t.admin.get(CMS, { accept: 'application/yaml' });
    expect(list.text()).toMatch(/^apiVersion: v1\nitems:\n/m);
    expect(list.text()).toContain('kind: ConfigMapList');
  });

  it('answers malformed YAML with 400 naming line and column, storing nothing', async () => {
    const res = await t.admin.request('POST', CMS, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [broken\n', raw: true, headers: { 'content-type': 'application/yaml' } });
    expect(res.status).toBe(400);
    expect(res.json<Obj>().message).toMatch(/line \d+/);
    expect((await t.admin.get(`${CMS}/broken`)).status).toBe(404);
  });
});

describe('protobuf (§2.8)', () => {
  it('reads and writes enveloped objects and lists', async () => {
    const body = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-proto' }, data: { a: '1' } }, 'io.k8s.api.core.v1.ConfigMap');
    const created = await t.admin.request('POST', CMS, { body, raw: true, headers: { 'content-type': PROTO, accept: PROTO } });
    expect(created.status).toBe(200);
    expect(created.headers['content-type']).toBe(PROTO);
    expect([...created.body.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
    const obj = codec.decode(created.body);
    expect(obj).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-proto', namespace: 'default' }, data: { a: '1' } });
    const json = (await t.admin.get(`${CMS}/from-proto`)).json<Obj>();
    expect((obj as Obj).metadata.uid).toBe(json.metadata.uid);
    const list = codec.decode((await t.admin.get(CMS, { accept: PROTO })).body) as Obj;
    expect(list.kind).toBe('ConfigMapList');
    expect(list.items.map((i: Obj) => i.metadata.name)).toEqual(expect.arrayContaining(['c1', 'from-proto']));
  });

  it('rejects truncated or hostile protobuf bodies with 400, storing nothing', async () => {
    const good = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'trunc' } }, 'io.k8s.api.core.v1.ConfigMap');
    for (const bad of [good.subarray(0, good.length - 3), Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.from('not protobuf')]) {
      const res = await t.admin.request('POST', CMS, { body: bad, raw: true, headers: { 'content-type': PROTO } });
      expect(res.status).toBe(400);
    }
    expect((await t.admin.get(`${CMS}/trunc`)).status).toBe(404);
  });

  it('streams watch events as length-prefixed frames whose objects are enveloped', async () => {
    const frames = await new Promise<Buffer[]>((resolve, reject) => {
      const creds = (t.admin as unknown as { creds: { caPem: string; certPem: string; keyPem: string } }).creds;
      const req = request(`${t.server.url}${CMS}?watch=1&fieldSelector=metadata.name%3Dc1`, { ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, headers: { accept: PROTO } }, (res) => {
        expect(res.headers['content-type']).toBe(`${PROTO};stream=watch`);
        let buf = Buffer.alloc(0);
        res.on('data', (d: Buffer) => {
          buf = Buffer.concat([buf, d]);
          if (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
            req.destroy();
            resolve([buf.subarray(4, 4 + buf.readUInt32BE(0))]);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    const event = codec.decodeWatchEvent(frames[0]!) as Obj;
    expect(event.type).toBe('ADDED');
    expect(event.object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'c1' } });
  });
});

describe('Table (§2.5)', () => {
  it('renders pods with the columns kubectl shows, and the object as metadata by default', async () => {
    const table = (await t.admin.get(PODS, { accept: TABLE })).json<Obj>();
    expect(table).toMatchObject({ kind: 'Table', apiVersion: 'meta.cluster.io/v1' });
    expect(table.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    expect(table.columnDefinitions[0]).toMatchObject({ type: 'string', format: 'name', priority: 0 });
    expect(table.rows[0].cells.slice(0, 4)).toEqual(['p1', '0/1', 'Pending', '0']);
    expect(table.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.cluster.io/v1', metadata: { name: 'p1' } });
    expect(table.metadata.resourceVersion).toBeDefined();
  });

  it.each([
    ['None', (o: unknown) => expect(o).toBeUndefined()],
    ['Object', (o: unknown) => expect(o).toMatchObject({ kind: 'Pod', spec: { containers: [{ name: 'c' }] } })],
  ])('includeObject=%s', async (mode, check) => {
    const table = (await t.admin.get(`${PODS}?includeObject=${mode}`, { accept: TABLE })).json<Obj>();
    check(table.rows[0].object);
  });

  it('gives kinds without a definition exactly Name and Created At', async () => {
    await t.admin.post('/apis/rbac.authorization.cluster.io/v1/namespaces/default/roles', { apiVersion: 'rbac.authorization.cluster.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [] });
    const table = (await t.admin.get('/apis/rbac.authorization.cluster.io/v1/namespaces/default/roles', { accept: TABLE })).json<Obj>();
    expect(table.columnDefinitions.map((c: Obj) => [c.name, c.type])).toEqual([['Name', 'string'], ['Created At', 'date']]);
  });

  it('pages with limit/continue and renders single objects', async () => {
    const first = (await t.admin.get(`${CMS}?limit=1`, { accept: TABLE })).json<Obj>();
    expect(first.rows).toHaveLength(1);
    expect(first.metadata.continue).toBeTruthy();
    const rest = (await t.admin.get(`${CMS}?limit=100&continue=${first.metadata.continue}`, { accept: TABLE })).json<Obj>();
    expect(rest.rows.length).toBeGreaterThan(0);
    const one = (await t.admin.get(`${CMS}/c1`, { accept: TABLE })).json<Obj>();
    expect(one.rows.map((r: Obj) => r.cells[0])).toEqual(['c1']);
  });

  it('refuses an unknown includeObject with upstream\'s message', async () => {
    const res = await t.admin.get(`${CMS}/c1?includeObject=bogus`, { accept: TABLE });
    expect(res.status).toBe(400);
    expect(res.json<Obj>().message).toBe('Unable to convert to Table as requested: includeObject: Unsupported value: "bogus": supported values: "Metadata", "None", "Object"');
  });

  it('renders a built-in scale sub-resource as a Scale table (Name, Desired, Available, Age), as upstream printScale', async () => {
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'scaled' },
      spec: { replicas: 3, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    };
    expect((await t.admin.post('/apis/apps/v1/namespaces/default/deployments', deploy)).status).toBe(200);
    const path = '/apis/apps/v1/namespaces/default/deployments/scaled/scale';
    const table = (await t.admin.get(path, { accept: `${TABLE}, application/json` })).json<Obj>();
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c: Obj) => [c.name, c.type, c.format])).toEqual([
      ['Name', 'string', ''],
      ['Desired', 'integer', ''],
      ['Available', 'integer', ''],
      ['Age', 'string', ''],
    ]);
    expect(table.rows[0].cells.slice(0, 3)).toEqual(['scaled', 3, 0]);
    const partial = (await t.admin.get(path, { accept: 'application/json;as=PartialObjectMetadata;g=meta.cluster.io;v=v1' })).json<Obj>();
    expect(partial).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'scaled' } });
    expect((await t.admin.get(path)).json<Obj>()).toMatchObject({ kind: 'Scale', spec: { replicas: 3 } });
  });

  it('watches as rows, with column definitions in the first event only', async () => {
    const creds = (t.admin as unknown as { creds: { caPem: string; certPem: string; keyPem: string } }).creds;
    const lines = await new Promise<string[]>((resolve, reject) => {
      const req = request(`${t.server.url}${CMS}?watch=1`, { ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, headers: { accept: TABLE } }, (res) => {
        // Upstream's watch Content-Type is the stream's media type alone, without as=Table.
        expect(res.headers['content-type']).toBe('application/json');
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          const ls = text.split('\n').filter(Boolean);
          if (ls.length >= 2) {
            req.destroy();
            resolve(ls);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    const [e1, e2] = lines.map((l) => JSON.parse(l) as Obj);
    expect(e1!.type).toBe('ADDED');
    expect(e1!.object.kind).toBe('Table');
    expect(e1!.object.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(e1!.object.rows).toHaveLength(1);
    expect(e2!.object.columnDefinitions).toEqual([]);
  });
});

describe('metadata-only', () => {
  it.each([
    ['a Table of one object', `${CMS}/c1`, TABLE, 'application/json'],
    ['a Table of a list', CMS, TABLE, 'application/json'],
    ['a Table in YAML', CMS, 'application/yaml;as=Table;g=meta.cluster.io;v=v1', 'application/yaml'],
    ['PartialObjectMetadata', `${CMS}/c1`, 'application/json;as=PartialObjectMetadata;g=meta.cluster.io;v=v1', 'application/json'],
    ['PartialObjectMetadataList', CMS, 'application/json;as=PartialObjectMetadataList;g=meta.cluster.io;v=v1', 'application/json'],
    ['PartialObjectMetadataList in protobuf', CMS, `${PROTO};as=PartialObjectMetadataList;g=meta.cluster.io;v=v1`, PROTO],
  ])('labels %s with the serializer media type alone, as upstream', async (_name, path, accept, type) => {
    const res = await t.admin.get(path, { accept });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
  });

  it('serves PartialObjectMetadata and PartialObjectMetadataList', async () => {
    const one = (await t.admin.get(`${CMS}/c1`, { accept: 'application/json;as=PartialObjectMetadata;g=meta.cluster.io;v=v1' })).json<Obj>();
    expect(one).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.cluster.io/v1', metadata: expect.objectContaining({ name: 'c1', labels: { a: 'b' } }) });
    const list = (await t.admin.get(CMS, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.cluster.io;v=v1' })).json<Obj>();
    expect(list.kind).toBe('PartialObjectMetadataList');
    expect(list.items[0]).toMatchObject({ kind: 'PartialObjectMetadata' });
    expect(list.items[0].data).toBeUndefined();
  });

  it('watches as PartialObjectMetadata, bookmarks included, in JSON and protobuf', async () => {
    const creds = (t.admin as unknown as { creds: { caPem: string; certPem: string; keyPem: string } }).creds;
    const rv = t.server.store.currentRevision();
    const watch = (accept: string) =>
      new Promise<{ contentType: string | undefined; body: Buffer }>((resolve, reject) => {
        const q = `watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`;
        const req = request(`${t.server.url}${CMS}?${q}`, { ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, headers: { accept } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ contentType: res.headers['content-type'], body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end();
      });
    const json = await watch('application/json;as=PartialObjectMetadata;g=meta.cluster.io;v=v1');
    expect(json.contentType).toBe('application/json');
    const events = json.body.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj);
    expect(events.at(-1)).toEqual({ type: 'BOOKMARK', object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.cluster.io/v1', metadata: { resourceVersion: expect.any(String) } } });
    const proto = await watch(`${PROTO};as=PartialObjectMetadata;g=meta.cluster.io;v=v1`);
    expect(proto.contentType).toBe(`${PROTO};stream=watch`);
    const frames: Buffer[] = [];
    for (let at = 0; at + 4 <= proto.body.length; at += 4 + proto.body.readUInt32BE(at)) frames.push(proto.body.subarray(at + 4, at + 4 + proto.body.readUInt32BE(at)));
    const last = codec.decodeWatchEvent(frames.at(-1)!) as Obj;
    expect(last.type).toBe('BOOKMARK');
    expect(last.object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.cluster.io/v1', metadata: { resourceVersion: expect.any(String) } });
  });
});

describe("upstream's meta group under --naming=cluster (stock clients hard-code meta.k8s.io)", () => {
  it.each([
    ['a Table v1 of a list', CMS, 'application/json;as=Table;v=v1;g=meta.k8s.io', 'Table', 'meta.k8s.io/v1'],
    ['a Table v1beta1 of one object', `${CMS}/c1`, 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'Table', 'meta.k8s.io/v1beta1'],
    ['the naming\'s own Table v1beta1', CMS, 'application/json;as=Table;v=v1beta1;g=meta.cluster.io', 'Table', 'meta.cluster.io/v1beta1'],
    ['PartialObjectMetadata', `${CMS}/c1`, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', 'PartialObjectMetadata', 'meta.k8s.io/v1'],
    ['PartialObjectMetadataList', CMS, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', 'PartialObjectMetadataList', 'meta.k8s.io/v1'],
  ])('answers %s in the group and version asked for', async (_name, path, accept, kind, apiVersion) => {
    const res = await t.admin.get(path, { accept: `${accept}, application/json` });
    expect(res.status).toBe(200);
    const body = res.json<Obj>();
    expect(body).toMatchObject({ kind, apiVersion });
    if (kind === 'Table') {
      expect(body.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Data', 'Age']);
      expect(body.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: `${apiVersion.split('/')[0]}/v1` });
    }
    if (kind === 'PartialObjectMetadataList') expect(body.items[0]).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion });
  });

  it('still refuses a meta group that is neither the naming\'s nor upstream\'s', async () => {
    const res = await t.admin.get(CMS, { accept: 'application/json;as=Table;v=v1;g=meta.example.io' });
    expect(res.status).toBe(406);
  });
});

describe('compression (§4.4 item 7)', () => {
  it('gzips get and list responses over 128 KiB when asked, and not when the gate is off', async () => {
    await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { blob: 'x'.repeat(200 * 1024) } });
    const zipped = await t.admin.get(`${CMS}/big`, { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(zipped.body).toString()).metadata.name).toBe('big');
    const small = await t.admin.get(`${CMS}/c1`, { 'accept-encoding': 'gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
    const off = await startTestServer({ featureGates: FeatureGates.parse('APIResponseCompression=false') });
    try {
      await off.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { blob: 'x'.repeat(200 * 1024) } });
      expect((await off.admin.get(`${CMS}/big`, { 'accept-encoding': 'gzip' })).headers['content-encoding']).toBeUndefined();
    } finally {
      await off.stop();
    }
  });
});

describe('CBOR (gate CBORServingAndStorage)', () => {
  it('reads and writes CBOR with the self-described prefix, and watches as cbor-seq', async () => {
    const on = await startTestServer({ featureGates: FeatureGates.parse('CBORServingAndStorage=true') });
    try {
      const body = encodeCbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cb' }, data: { a: '1' } });
      const created = await on.admin.request('POST', CMS, { body, raw: true, headers: { 'content-type': 'application/cbor', accept: 'application/cbor' } });
      expect(created.status).toBe(200);
      expect([...created.body.subarray(0, 3)]).toEqual([0xd9, 0xd9, 0xf7]);
      expect(decodeCbor(created.body).value).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'cb' } });
      const list = decodeCbor((await on.admin.get(CMS, { accept: 'application/cbor' })).body).value as Obj;
      expect(list.kind).toBe('ConfigMapList');
      const creds = (on.admin as unknown as { creds: { caPem: string; certPem: string; keyPem: string } }).creds;
      const chunk = await new Promise<Buffer>((resolve, reject) => {
        const req = request(`${on.server.url}${CMS}?watch=1`, { ca: creds.caPem, cert: creds.certPem, key: creds.keyPem, headers: { accept: 'application/cbor' } }, (res) => {
          expect(res.headers['content-type']).toBe('application/cbor-seq');
          res.once('data', (d: Buffer) => {
            req.destroy();
            resolve(d);
          });
        });
        req.on('error', reject);
        req.end();
      });
      const [event] = decodeCborSeq(chunk) as Obj[];
      expect(event).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap' } });
    } finally {
      await on.stop();
    }
  });
});

describe('large lists', () => {
  it('stream in chunks, plain and gzipped, with the same content as a small list would have', async () => {
    const blob = 'y'.repeat(100 * 1024);
    for (let i = 0; i < 15; i++) {
      await t.admin.post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${String(i).padStart(2, '0')}` }, stringData: { k: blob } });
    }
    const plain = await t.admin.get('/api/v1/namespaces/default/secrets');
    expect(plain.status).toBe(200);
    expect(plain.body.length).toBeGreaterThan(1024 * 1024);
    const list = plain.json<Obj>();
    expect(list.kind).toBe('SecretList');
    expect(list.items.map((i: Obj) => i.metadata.name)).toEqual(Array.from({ length: 15 }, (_, i) => `s${String(i).padStart(2, '0')}`));
    const zipped = await t.admin.get('/api/v1/namespaces/default/secrets', { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(zipped.body).toString())).toEqual(list);
    // Protobuf, written from pooled chunks: twice (the second from chunks the first gave back).
    for (let round = 0; round < 2; round++) {
      const proto = await t.admin.get('/api/v1/namespaces/default/secrets', { accept: PROTO });
      expect(proto.body.length).toBeGreaterThan(1024 * 1024);
      const decoded = codec.decode(proto.body) as Obj;
      expect(decoded.items.map((i: Obj) => [i.metadata.name, Buffer.from(i.data.k, 'base64').toString()])).toEqual(list.items.map((i: Obj) => [i.metadata.name, blob]));
    }
  });
});
