// CRD validation rules (x-kubernetes-validations, x-cluster-validations under --naming=cluster)
// against a real server under both namings: a fixture CRD with every rule kind, transition rules,
// optionalOldSelf, status writes, ratcheting after the CRD gains a rule, and CRDs refused for
// compile errors, cost and uniqueItems.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const GROUP = 'rules.example.com';
const NAME = `gadgets.${GROUP}`;

export function gadgetCrd(naming: 'cluster' | 'kubernetes', extraSpecRules: Obj[] = []): Obj {
  const x = naming === 'cluster' ? 'x-cluster-' : 'x-kubernetes-';
  return {
    apiVersion: `apiextensions.${naming === 'cluster' ? 'cluster.io' : 'k8s.io'}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: NAME },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  [`${x}validations`]: [
                    { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
                    { rule: "self.name.startsWith('app-')", messageExpression: "'name ' + self.name + ' must start with app-'", fieldPath: '.name', reason: 'FieldValueForbidden' },
                    { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable' },
                    { rule: '!oldSelf.hasValue() || self.size >= oldSelf.value().size', message: 'size may not shrink', optionalOldSelf: true },
                    { rule: 'has(self.owner)', reason: 'FieldValueRequired', message: 'owner is required' },
                    ...extraSpecRules,
                  ],
                  properties: {
                    name: { type: 'string', maxLength: 64 },
                    mode: { type: 'string', maxLength: 16 },
                    owner: { type: 'string', maxLength: 16 },
                    size: { type: 'integer' },
                    minReplicas: { type: 'integer' },
                    maxReplicas: { type: 'integer' },
                    cidr: { type: 'string', maxLength: 64, [`${x}validations`]: [{ rule: "isCIDR(self) && cidr(self).prefixLength() >= 16", message: 'must be a CIDR of /16 or smaller' }] },
                    memory: { type: 'string', maxLength: 32, [`${x}validations`]: [{ rule: "quantity(self).isLessThan(quantity('1Gi'))", message: 'memory must be below 1Gi' }] },
                    tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 32 } },
                  },
                },
                status: {
                  type: 'object',
                  properties: { phase: { type: 'string', maxLength: 16, [`${x}validations`]: [{ rule: "self in ['Pending', 'Ready']", message: 'phase must be Pending or Ready' }] } },
                },
              },
            },
          },
        },
      ],
    },
  };
}

const goodSpec = { name: 'app-a', mode: 'fast', owner: 'me', size: 2, minReplicas: 1, maxReplicas: 3, cidr: '10.0.0.0/16', memory: '512Mi', tags: ['a'] };
const gadget = (name: string, spec: Obj = goodSpec): Obj => ({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name }, spec });
const PATH = `/apis/${GROUP}/v1/namespaces/default/gadgets`;

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(['cluster', 'kubernetes'] as const)('CRD validation rules (--naming=%s)', (naming) => {
  let t: TestServer;
  const crds = `/apis/apiextensions.${naming === 'cluster' ? 'cluster.io' : 'k8s.io'}/v1/customresourcedefinitions`;
  const messageOf = (r: { json<T>(): T }) => r.json<Obj>().message as string;

  beforeAll(async () => {
    t = await startTestServer({ naming });
    const r = await t.admin.post(crds, gadgetCrd(naming));
    expect(r.status, r.body.toString()).toBeLessThan(300);
    await waitFor(async () => (await t.admin.get(`${PATH}`)).status === 200);
  });
  afterAll(async () => {
    await t.stop();
  });

  it('creates a valid object', async () => {
    expect((await t.admin.post(PATH, gadget('ok'))).status).toBeLessThan(300);
  });

  it.each<[string, Obj, string, string]>([
    ['message', { minReplicas: 5 }, 'spec: Invalid value: "object": minReplicas must not exceed maxReplicas', 'FieldValueInvalid'],
    ['messageExpression, fieldPath, reason', { name: 'x' }, 'spec.name: Forbidden: name x must start with app-', 'FieldValueForbidden'],
    ['reason Required', { owner: undefined }, 'spec: Required value: owner is required', 'FieldValueRequired'],
    ['a cidr library rule', { cidr: '10.0.0.0/8' }, 'spec.cidr: Invalid value: "string": must be a CIDR of /16 or smaller', 'FieldValueInvalid'],
    ['a quantity library rule', { memory: '2Gi' }, 'spec.memory: Invalid value: "string": memory must be below 1Gi', 'FieldValueInvalid'],
  ])('refuses a create failing a rule (%s) with 422 and upstream wording', async (_what, over, want, reason) => {
    const r = await t.admin.post(PATH, gadget(`bad-${over.name ?? Object.keys(over)[0]!.toLowerCase()}`, { ...goodSpec, ...over }));
    expect(r.status).toBe(422);
    const status = r.json<Obj>();
    expect(status.reason).toBe('Invalid');
    expect(status.message).toContain(want);
    expect(status.details.causes).toContainEqual(expect.objectContaining({ reason: reason }));
  });

  it('runs transition rules and optionalOldSelf rules on update, and rules on status writes', async () => {
    await t.admin.post(PATH, gadget('tr'));
    const current = (await t.admin.get(`${PATH}/tr`)).json<Obj>();
    const mode = await t.admin.put(`${PATH}/tr`, { ...current, spec: { ...current.spec, mode: 'slow' } });
    expect(mode.status).toBe(422);
    expect(messageOf(mode)).toContain('spec: Invalid value: "object": mode is immutable');
    const shrink = await t.admin.put(`${PATH}/tr`, { ...current, spec: { ...current.spec, size: 1 } });
    expect(shrink.status).toBe(422);
    expect(messageOf(shrink)).toContain('size may not shrink');
    expect((await t.admin.put(`${PATH}/tr`, { ...current, spec: { ...current.spec, size: 4 } })).status).toBe(200);
    const fresh = (await t.admin.get(`${PATH}/tr`)).json<Obj>();
    const status = await t.admin.put(`${PATH}/tr/status`, { ...fresh, status: { phase: 'Broken' } });
    expect(status.status).toBe(422);
    expect(messageOf(status)).toContain('status.phase: Invalid value: "string": phase must be Pending or Ready');
    expect((await t.admin.put(`${PATH}/tr/status`, { ...fresh, status: { phase: 'Ready' } })).status).toBe(200);
  });

  it('ratchets: after the CRD gains a rule an existing object that fails it can still be updated elsewhere', async () => {
    expect((await t.admin.post(PATH, gadget('old', { ...goodSpec, tags: ['UPPER'] }))).status).toBeLessThan(300);
    const crd = (await t.admin.get(`${crds}/${NAME}`)).json<Obj>();
    // The new rule sits on spec.tags: ratcheting is judged at the rule's node (upstream's too).
    const updated = gadgetCrd(naming);
    const x = naming === 'cluster' ? 'x-cluster-' : 'x-kubernetes-';
    updated.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags[`${x}validations`] = [{ rule: 'self.all(t, t.lowerAscii() == t)', message: 'tags must be lowercase' }];
    updated.metadata.resourceVersion = crd.metadata.resourceVersion;
    expect((await t.admin.put(`${crds}/${NAME}`, updated)).status).toBe(200);
    await waitFor(async () => (await t.admin.post(PATH, gadget('probe', { ...goodSpec, tags: ['NEW'] }))).status === 422);
    const current = (await t.admin.get(`${PATH}/old`)).json<Obj>();
    const unchangedTags = await t.admin.put(`${PATH}/old`, { ...current, spec: { ...current.spec, size: 9 } });
    expect(unchangedTags.status, unchangedTags.body.toString()).toBe(200);
    const again = (await t.admin.get(`${PATH}/old`)).json<Obj>();
    const changedTags = await t.admin.put(`${PATH}/old`, { ...again, spec: { ...again.spec, tags: ['STILL-UPPER'] } });
    expect(changedTags.status).toBe(422);
    expect(messageOf(changedTags)).toContain('spec.tags: Invalid value: "array": tags must be lowercase');
  });

  it.each<[string, Obj, RegExp]>([
    ['a rule that does not compile', { rule: 'self.nope(' }, /x-(kubernetes|cluster)-validations\[5\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.nope\(".*compilation failed/],
    ['an over-budget rule', { rule: "self.tags.all(t, t.matches('^[a-z]+$')) && self.extra.all(e, e.matches('^[a-z]+$'))" }, /rule: Forbidden: estimated rule cost exceeds budget by factor of/],
  ])('refuses a CRD with %s', async (_what, rule, message) => {
    const crd = gadgetCrd(naming, [rule]);
    crd.metadata.name = `others.${GROUP}`;
    crd.spec.names = { plural: 'others', singular: 'other', kind: 'Other' };
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra = { type: 'array', items: { type: 'string' } };
    const r = await t.admin.post(crds, crd);
    expect(r.status).toBe(422);
    expect(messageOf(r)).toMatch(message);
  });

  it('refuses uniqueItems and a default that fails its schema', async () => {
    const crd = gadgetCrd(naming);
    crd.metadata.name = `others.${GROUP}`;
    crd.spec.names = { plural: 'others', singular: 'other', kind: 'Other' };
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra = { type: 'array', uniqueItems: true, items: { type: 'string' } };
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.count = { type: 'integer', maximum: 10, default: 20 };
    const r = await t.admin.post(crds, crd);
    expect(r.status).toBe(422);
    expect(messageOf(r)).toContain('properties[extra].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic');
    expect(messageOf(r)).toMatch(/properties\[count\]\.default: Invalid value: 20: .*less than or equal to 10/);
  });
});
