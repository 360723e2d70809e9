// Custom resources served from CustomResourceDefinitions, against a real server.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

export const widgetCrd = {
  apiVersion: 'apiextensions.cluster.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  size: { type: 'integer', minimum: 1 },
                  color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
                  replicas: { type: 'integer' },
                  tags: { type: 'array', items: { type: 'string' } },
                },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' }, replicas: { type: 'integer' }, selector: { type: 'string' } } },
            },
          },
        },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Color', type: 'string', jsonPath: '.spec.color' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
  },
};

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const widget = (name: string, spec: Obj = { size: 3 }): Obj => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec });

describe('custom resources', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-crd-'));
    t = await startTestServer({ storage: 'leveldb', dataDir: dir });
    expect((await t.admin.post(CRDS, widgetCrd)).status).toBe(200);
    await waitFor(async () => {
      const crd = (await t.admin.get(`${CRDS}/widgets.example.com`)).json<Obj>();
      return (crd.status?.conditions ?? []).some((c: Obj) => c.type === 'Established' && c.status === 'True');
    });
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports the definition Established with its accepted names and stored versions', async () => {
    const crd = (await t.admin.get(`${CRDS}/widgets.example.com`)).json<Obj>();
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(crd.status.conditions.map((c: Obj) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
    expect(crd.metadata.finalizers).toContain('customresourcecleanup.apiextensions.cluster.io');
  });

  it('appears in discovery with its scope, names, verbs and sub-resources', async () => {
    const groups = (await t.admin.get('/apis')).json<Obj>();
    expect(groups.groups.find((g: Obj) => g.name === 'example.com')).toMatchObject({ preferredVersion: { groupVersion: 'example.com/v1' } });
    const list = (await t.admin.get('/apis/example.com/v1')).json<Obj>();
    expect(list.resources).toContainEqual(expect.objectContaining({ name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'], categories: ['all'] }));
    expect(list.resources.map((r: Obj) => r.name)).toEqual(['widgets', 'widgets/status', 'widgets/scale']);
  });

  it('keeps empty lists and maps as sent (only built-in kinds drop what Go omits)', async () => {
    const res = await t.admin.post(WIDGETS, { ...widget('empties'), metadata: { name: 'empties', labels: {} }, spec: { size: 1, tags: [] } });
    expect(res.status).toBe(200);
    expect(res.json<Obj>().spec.tags).toEqual([]);
    expect((await t.admin.get(`${WIDGETS}/empties`)).json<Obj>().spec.tags).toEqual([]);
  });

  it('defaults, prunes unknown fields with a warning, validates types and enums', async () => {
    const created = await t.admin.post(WIDGETS, { ...widget('w1'), spec: { size: 2, extra: 'x' } });
    expect(created.status).toBe(200);
    expect(created.json<Obj>().spec).toEqual({ size: 2, color: 'red' });
    expect(String(created.headers.warning)).toContain('unknown field \\"spec.extra\\"');
    const bad = await t.admin.post(WIDGETS, widget('w2', { size: 'big', color: 'green' }));
    expect(bad.status).toBe(422);
    expect(bad.json<Obj>().details.causes.map((c: Obj) => c.field).sort()).toEqual(['spec.color', 'spec.size']);
    // Custom resources decode as unstructured: a wrong type is the schema's 422, on PUT too.
    const badPut = await t.admin.put(`${WIDGETS}/w1`, { ...created.json<Obj>(), spec: { size: 'big' } });
    expect(badPut.status).toBe(422);
    expect(badPut.json<Obj>().details.causes.map((c: Obj) => c.field)).toEqual(['spec.size']);
    const strict = await t.admin.post(`${WIDGETS}?fieldValidation=Strict`, { ...widget('w3'), spec: { size: 1, extra: 1 } });
    expect(strict.status).toBe(400);
  });

  it('serves get, list with selectors, watch, tables from printer columns and metadata-only views', async () => {
    await t.admin.post(WIDGETS, { ...widget('w4', { size: 7, color: 'blue' }), metadata: { name: 'w4', labels: { tier: 'x' } } });
    const list = (await t.admin.get(`${WIDGETS}?labelSelector=tier%3Dx`)).json<Obj>();
    expect(list).toMatchObject({ kind: 'WidgetList', apiVersion: 'example.com/v1' });
    expect(list.items.map((i: Obj) => i.metadata.name)).toEqual(['w4']);
    const table = (await t.admin.get(WIDGETS, { accept: 'application/json;as=Table;g=meta.cluster.io;v=v1' })).json<Obj>();
    expect(table.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Size', 'Color', 'Age']);
    expect(table.rows.find((r: Obj) => r.cells[0] === 'w4').cells.slice(0, 3)).toEqual(['w4', 7, 'blue']);
    const partial = (await t.admin.get(`${WIDGETS}/w4`, { accept: 'application/json;as=PartialObjectMetadata;g=meta.cluster.io;v=v1' })).json<Obj>();
    expect(partial).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'w4' } });
    const lines: string[] = [];
    const w = t.admin.watch(`${WIDGETS}?watch=1&resourceVersion=${list.metadata.resourceVersion}`, (l) => lines.push(l));
    await t.admin.post(WIDGETS, widget('w5'));
    await waitFor(async () => lines.length > 0);
    w.stop();
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'ADDED', object: { kind: 'Widget', metadata: { name: 'w5' } } });
  });

  it('refuses protobuf and strategic merge patches, takes merge patches and server-side apply', async () => {
    expect((await t.admin.get(`${WIDGETS}/w1`, { accept: 'application/vnd.cluster.protobuf' })).status).toBe(406);
    expect((await t.admin.get(`${WIDGETS}/w1`, { accept: 'application/vnd.cluster.protobuf, application/json' })).status).toBe(200);
    const proto = await t.admin.request('POST', WIDGETS, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), raw: true, headers: { 'content-type': 'application/vnd.cluster.protobuf' } });
    expect(proto.status).toBe(415);
    const smp = await t.admin.request('PATCH', `${WIDGETS}/w1`, { body: '{"spec":{"size":5}}', raw: true, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    expect(smp.status).toBe(415);
    const merge = await t.admin.request('PATCH', `${WIDGETS}/w1`, { body: '{"spec":{"size":5}}', raw: true, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(merge.json<Obj>().spec.size).toBe(5);
    const applied = await t.admin.request('PATCH', `${WIDGETS}/w6?fieldManager=ssa`, { body: JSON.stringify(widget('w6', { size: 1, tags: ['a', 'b'] })), raw: true, headers: { 'content-type': 'application/apply-patch+yaml' } });
    expect(applied.status).toBe(201);
    const mf = applied.json<Obj>().metadata.managedFields.find((m: Obj) => m.manager === 'ssa');
    // Unstructured: lists are atomic, so the whole tags list is one field.
    expect(mf.fieldsV1['f:spec']['f:tags']).toEqual({});
  });

  it('splits status from spec and serves the scale sub-resource from the definition paths', async () => {
    const w = (await t.admin.get(`${WIDGETS}/w1`)).json<Obj>();
    const status = await t.admin.put(`${WIDGETS}/w1/status`, { ...w, spec: { size: 99 }, status: { ready: true, replicas: 2, selector: 'app=w' } });
    expect(status.json<Obj>()).toMatchObject({ spec: { size: 5 }, status: { ready: true } });
    const main = await t.admin.put(`${WIDGETS}/w1`, { ...status.json<Obj>(), spec: { size: 6, replicas: 1 }, status: { ready: false } });
    expect(main.json<Obj>()).toMatchObject({ spec: { size: 6 }, status: { ready: true } });
    expect(main.json<Obj>().metadata.generation).toBe(3);
    const scale = (await t.admin.get(`${WIDGETS}/w1/scale`)).json<Obj>();
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 1 }, status: { replicas: 2, selector: 'app=w' } });
    const scaled = await t.admin.put(`${WIDGETS}/w1/scale`, { ...scale, spec: { replicas: 4 } });
    expect(scaled.json<Obj>().spec.replicas).toBe(4);
    expect((await t.admin.get(`${WIDGETS}/w1`)).json<Obj>().spec.replicas).toBe(4);
  });

  // Upstream decodes a custom resource's metadata into ObjectMeta: wrong types are a 400 with
  // encoding/json's message; they were stored (a number label, finalizers as a string).
  it.each([
    ['a number label', { labels: { a: 5 } }, 'json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string'],
    ['labels as a list', { labels: ['a'] }, 'json: cannot unmarshal array into Go struct field ObjectMeta.labels of type map[string]string'],
    ['finalizers as a string', { finalizers: 'x' }, 'json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string'],
    ['ownerReferences as an object', { ownerReferences: { a: 1 } }, 'json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference'],
  ])('refuses metadata with %s (400, nothing stored)', async (_label, meta, error) => {
    const res = await t.admin.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'badmeta', ...meta } });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message: `Widget in version "v1" cannot be handled as a Widget: ${error}` });
    expect((await t.admin.get(`${WIDGETS}/badmeta`)).status).toBe(404);
  });

  it('takes a null label as "" (as Go decodes it)', async () => {
    const res = await t.admin.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'nulllabel', labels: { a: null } } });
    expect(res.status).toBeLessThan(300);
    expect((await t.admin.get(`${WIDGETS}/nulllabel`)).json<Obj>().metadata.labels).toEqual({ a: '' });
    expect((await t.admin.delete(`${WIDGETS}/nulllabel`)).status).toBe(200);
  });

  // The scale sub-resource takes an autoscaling/v1 Scale (a built-in type, validated by
  // upstream's ValidateScale); a bad one must leave the custom resource untouched.
  it.each([
    ['a negative replica count (PUT)', 'PUT', { spec: { replicas: -1 } }, 422, 'Invalid', 'Scale.autoscaling "w1" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
    ['a negative replica count (merge patch)', 'PATCH', { spec: { replicas: -3 } }, 422, 'Invalid', 'Scale.autoscaling "w1" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0'],
    ['a string replica count (PUT)', 'PUT', { spec: { replicas: 'x' } }, 400, 'BadRequest', 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32'],
  ])('refuses a scale with %s and keeps the custom resource', async (_label, method, change, code, reason, message) => {
    const before = (await t.admin.get(`${WIDGETS}/w1`)).json<Obj>();
    const scale = (await t.admin.get(`${WIDGETS}/w1/scale`)).json<Obj>();
    const res =
      method === 'PUT'
        ? await t.admin.put(`${WIDGETS}/w1/scale`, { ...scale, ...change })
        : await t.admin.request('PATCH', `${WIDGETS}/w1/scale`, { body: change, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(res.status).toBe(code);
    expect(res.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
    const after = (await t.admin.get(`${WIDGETS}/w1`)).json<Obj>();
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.replicas).toBe(before.spec.replicas);
  });

  it('refuses a definition with bad selectable fields and serves field selectors from a good one', async () => {
    // Its own group, so the group list checks of the other cases are unaffected.
    const gadgets = (selectableFields: string[]): Obj => ({
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.sel.example.org' },
      spec: {
        group: 'sel.example.org',
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
                properties: { spec: { type: 'object', properties: { color: { type: 'string' }, parts: { type: 'array', items: { type: 'string' } } } } },
              },
            },
            selectableFields: selectableFields.map((jsonPath) => ({ jsonPath })),
          },
        ],
      },
    });
    const bad = await t.admin.post(CRDS, gadgets(['.spec.color', 'spec.color', '.spec', '.spec.parts[0]', '.spec.color']));
    expect(bad.status).toBe(422);
    const body = bad.json<Obj>();
    expect(body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.selectableFields[1].jsonPath', message: 'Invalid value: "spec.color": is an invalid path: expected [ or . but got: spec' },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.selectableFields[2].jsonPath',
        message: 'Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      },
      { reason: 'FieldValueInvalid', field: 'spec.selectableFields[3].jsonPath', message: 'Invalid value: ".spec.parts[0]": is an invalid path: array notation is not allowed' },
      { reason: 'FieldValueDuplicate', field: 'spec.selectableFields[4].jsonPath', message: 'Duplicate value: ".spec.color"' },
    ]);
    expect((await t.admin.get(`${CRDS}/gadgets.sel.example.org`)).status).toBe(404);

    expect((await t.admin.post(CRDS, gadgets(['.spec.color']))).status).toBe(200);
    const GADGETS = '/apis/sel.example.org/v1/namespaces/default/gadgets';
    await waitFor(async () => (await t.admin.get(GADGETS)).status === 200);
    for (const [name, color] of [['g1', 'red'], ['g2', 'blue']]) {
      const created = await t.admin.post(GADGETS, { apiVersion: 'sel.example.org/v1', kind: 'Gadget', metadata: { name }, spec: { color } });
      expect(created.status).toBe(200);
    }
    const selected = (await t.admin.get(`${GADGETS}?fieldSelector=spec.color%3Dblue`)).json<Obj>();
    expect(selected.items.map((i: Obj) => i.metadata.name)).toEqual(['g2']);
    // After a restart the gadgets load (from the attributes stored with them) before their
    // definition is served again, and are selected by the same field.
    await t.stop();
    t = await startTestServer({ storage: 'leveldb', dataDir: dir });
    await waitFor(async () => (await t.admin.get(GADGETS)).status === 200);
    const again = (await t.admin.get(`${GADGETS}?fieldSelector=spec.color%3Dred`)).json<Obj>();
    expect(again.items.map((i: Obj) => i.metadata.name)).toEqual(['g1']);

    // Updates are held to the same rules.
    const current = (await t.admin.get(`${CRDS}/gadgets.sel.example.org`)).json<Obj>();
    current.spec.versions[0].selectableFields = [{ jsonPath: '.spec.parts' }];
    const update = await t.admin.put(`${CRDS}/gadgets.sel.example.org`, current);
    expect(update.status).toBe(422);
    expect(update.json<Obj>().details.causes.map((c: Obj) => c.field)).toEqual(['spec.selectableFields[0].jsonPath']);

    expect((await t.admin.delete(`${CRDS}/gadgets.sel.example.org`)).status).toBe(200);
    await waitFor(async () => (await t.admin.get(`${CRDS}/gadgets.sel.example.org`)).status === 404);
  });

  it('enforces value validations on create, update and patch, and refuses a CRD whose pattern is not RE2', async () => {
    const thingsCrd = (pattern: string): Obj => ({
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.values.example.org' },
      spec: {
        group: 'values.example.org',
        scope: 'Namespaced',
        names: { plural: 'things', singular: 'thing', kind: 'Thing' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      name: { type: 'string', maxLength: 5, pattern },
                      count: { type: 'integer', minimum: 1, maximum: 10 },
                      tags: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 2, 'x-cluster-list-type': 'set' },
                      ports: {
                        type: 'array',
                        items: { type: 'object', required: ['port'], properties: { port: { type: 'integer', multipleOf: 10 }, name: { type: 'string' } } },
                        'x-cluster-list-type': 'map',
                        'x-cluster-list-map-keys': ['port'],
                      },
                      labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 },
                      mode: { type: 'string', oneOf: [{ pattern: '^a' }, { pattern: 'z$' }] },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    });
    for (const [pattern, message] of [
      ['(', "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[name].pattern: Invalid value: \"(\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(`"],
      ['^(?=a)', "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[name].pattern: Invalid value: \"^(?=a)\": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
    ] as const) {
      const refused = await t.admin.post(CRDS, thingsCrd(pattern));
      expect(refused.status).toBe(422);
      expect(refused.json<Obj>().message).toContain(message);
    }

    expect((await t.admin.post(CRDS, thingsCrd('^[a-z]+$'))).status).toBe(200);
    const THINGS = '/apis/values.example.org/v1/namespaces/default/things';
    await waitFor(async () => (await t.admin.get(THINGS)).status === 200);
    const thing = (name: string, spec: Obj): Obj => ({ apiVersion: 'values.example.org/v1', kind: 'Thing', metadata: { name }, spec });

    const bad = await t.admin.post(
      THINGS,
      thing('t1', { name: 'abcdef', count: 0, tags: ['a', 'a', ''], ports: [{ port: 15 }, { port: 15 }], labels: { a: 'x', b: 'y' }, mode: 'b' }),
    );
    expect(bad.status).toBe(422);
    const causes = (r: typeof bad): string[] => r.json<Obj>().details.causes.map((c: Obj) => `${c.reason} ${c.field}: ${c.message}`).sort();
    expect(causes(bad)).toEqual(
      [
        'FieldValueTooLong spec.name: Too long: may not be more than 5 bytes',
        'FieldValueInvalid spec.count: Invalid value: 0: spec.count in body should be greater than or equal to 1',
        'FieldValueTooMany spec.tags: Too many: 3: must have at most 2 items',
        'FieldValueInvalid spec.tags[2]: Invalid value: "": spec.tags[2] in body should be at least 1 chars long',
        'FieldValueDuplicate spec.tags[1]: Duplicate value: "a"',
        'FieldValueInvalid spec.ports[0].port: Invalid value: 15: spec.ports[0].port in body should be a multiple of 10',
        'FieldValueInvalid spec.ports[1].port: Invalid value: 15: spec.ports[1].port in body should be a multiple of 10',
        'FieldValueDuplicate spec.ports[1]: Duplicate value: {"port":15}',
        'FieldValueTooMany spec.labels: Too many: 2: must have at most 1 item',
        'FieldValueInvalid <nil>: Invalid value: "": "spec.mode" must validate one and only one schema (oneOf). Found none valid',
        `FieldValueInvalid spec.mode: Invalid value: "b": spec.mode in body should match '^a'`,
      ].sort(),
    );
    expect((await t.admin.get(`${THINGS}/t1`)).status).toBe(404);

    const good = await t.admin.post(THINGS, thing('t1', { name: 'abc', count: 10, tags: ['a', 'b'], ports: [{ port: 10 }, { port: 20 }], labels: { a: 'x' }, mode: 'abc' }));
    expect(good.status).toBe(200);

    // A hostile value against a pattern returns at once (RE2, not backtracking).
    const started = Date.now();
    const hostile = await t.admin.post(THINGS, thing('t2', { mode: `${'a'.repeat(20_000)}!` }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(hostile.status).toBe(200);

    const put = await t.admin.put(`${THINGS}/t1`, { ...good.json<Obj>(), spec: { ...good.json<Obj>().spec, name: 'ABC' } });
    expect(put.status).toBe(422);
    expect(causes(put)).toEqual([`FieldValueInvalid spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`]);

    const merge = await t.admin.request('PATCH', `${THINGS}/t1`, {
      body: JSON.stringify({ spec: { count: 11, mode: 'az' } }),
      raw: true,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(merge.status).toBe(422);
    expect(causes(merge)).toEqual([
      '<nil>: Invalid value: "": "spec.mode" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      'spec.count: Invalid value: 11: spec.count in body should be less than or equal to 10',
    ].map((m) => `FieldValueInvalid ${m}`).sort());
    expect((await t.admin.get(`${THINGS}/t1`)).json<Obj>().spec.count).toBe(10);

    const okPatch = await t.admin.request('PATCH', `${THINGS}/t1`, {
      body: JSON.stringify({ spec: { count: 5 } }),
      raw: true,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(okPatch.status).toBe(200);

    expect((await t.admin.delete(`${CRDS}/things.values.example.org`)).status).toBe(200);
    await waitFor(async () => (await t.admin.get(`${CRDS}/things.values.example.org`)).status === 404);
  });

  it('keeps serving after a restart', async () => {
    await t.stop();
    t = await startTestServer({ storage: 'leveldb', dataDir: dir });
    expect((await t.admin.get(`${WIDGETS}/w1`)).json<Obj>().spec.size).toBe(6);
  });

  it('deletes the custom resources with their definition, then stops serving them', async () => {
    const del = await t.admin.delete(`${CRDS}/widgets.example.com`);
    expect(del.status).toBe(200);
    await waitFor(async () => (await t.admin.get(`${CRDS}/widgets.example.com`)).status === 404);
    expect((await t.admin.get(WIDGETS)).status).toBe(404);
    expect((await t.admin.get('/apis')).json<Obj>().groups.map((g: Obj) => g.name)).not.toContain('example.com');
    // Recreating the definition serves an empty collection: the old objects went with it.
    await t.admin.post(CRDS, widgetCrd);
    await waitFor(async () => (await t.admin.get(WIDGETS)).status === 200);
    expect((await t.admin.get(WIDGETS)).json<Obj>().items).toEqual([]);
  });
});

describe('custom resources after the storage version changed', () => {
  let t: TestServer;
  const GADGETS = (v: string) => `/apis/example.com/${v}/namespaces/default/gadgets`;
  const version = (name: string, storage: boolean): Obj => ({ name, served: true, storage, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } });
  const crd = (versions: Obj[]): Obj => ({
    apiVersion: 'apiextensions.cluster.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' }, versions },
  });
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('serves objects written in the old storage version in the version asked for (get, list, watch)', async () => {
    expect((await t.admin.post(CRDS, crd([version('v1', true)]))).status).toBe(200);
    await waitFor(async () => (await t.admin.get(GADGETS('v1'))).status === 200);
    expect((await t.admin.post(GADGETS('v1'), { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'old' }, spec: { size: 1 } })).status).toBe(200);
    // v2 becomes the storage version; v1 stays served.
    const current = (await t.admin.get(`${CRDS}/gadgets.example.com`)).json<Obj>();
    expect((await t.admin.put(`${CRDS}/gadgets.example.com`, { ...crd([version('v1', false), version('v2', true)]), metadata: current.metadata })).status).toBe(200);
    await waitFor(async () => (await t.admin.get(GADGETS('v2'))).status === 200);
    expect((await t.admin.post(GADGETS('v2'), { apiVersion: 'example.com/v2', kind: 'Gadget', metadata: { name: 'new' }, spec: { size: 2 } })).status).toBe(200);

    for (const v of ['v1', 'v2']) {
      expect((await t.admin.get(`${GADGETS(v)}/old`)).json<Obj>().apiVersion, v).toBe(`example.com/${v}`);
      expect((await t.admin.get(`${GADGETS(v)}/new`)).json<Obj>().apiVersion, v).toBe(`example.com/${v}`);
      const list = (await t.admin.get(GADGETS(v))).json<Obj>();
      expect(list.items.map((i: Obj) => `${i.metadata.name}:${i.apiVersion}`), v).toEqual([`new:example.com/${v}`, `old:example.com/${v}`]);
      const lines: string[] = [];
      const w = t.admin.watch(`${GADGETS(v)}?watch=1&resourceVersion=0`, (l) => lines.push(l));
      await waitFor(async () => lines.length >= 2);
      w.stop();
      const watched = lines.map((l) => JSON.parse(l) as Obj);
      expect(watched.map((e) => `${e.object.metadata.name}:${e.object.apiVersion}`).sort(), v).toEqual([`new:example.com/${v}`, `old:example.com/${v}`]);
    }
  });
});
