import { describe, expect, it } from 'vitest';
import { smdTypeOf } from '../../fieldmanager/index.js';
import { builtinTypeNode } from '../../patch/index.js';
import { compileMutatingPolicy, evaluate, fromCel, toCel, type Activation } from './compile.js';
import { applyMutation } from './mutating-policy.js';

const POD = smdTypeOf(builtinTypeNode('io.k8s.api.core.v1.Pod'));
const pod = () => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { app: 'web' }, finalizers: ['a'] },
  spec: { containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }] }], tolerations: [{ key: 'k' }] },
});

/** Compiles one mutation, evaluates it on `object` and applies it, as the plugin does. */
async function mutate(patchType: 'ApplyConfiguration' | 'JSONPatch', expression: string, object: Record<string, unknown>): Promise<Record<string, unknown>> {
  const field = patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
  const policy = compileMutatingPolicy({ metadata: { name: 'm' }, spec: { mutations: [{ patchType, [field]: { expression } }] } });
  expect(policy.errors).toEqual([]);
  const m = policy.mutations[0]!;
  const activation = { object: toCel(object), oldObject: null, request: {}, params: null, namespaceObject: null, authorizer: null, variables: {} } as Activation;
  return applyMutation(m, fromCel(await evaluate(m.expression, activation)), object, POD);
}

describe('ApplyConfiguration merged with structured-merge semantics (the Pod schema)', () => {
  it.each([
    ['a map field is merged, siblings kept', 'Object{metadata: Object.metadata{labels: {"team": "blue"}}}', (p: ReturnType<typeof pod>) => ({ ...p, metadata: { ...p.metadata, labels: { app: 'web', team: 'blue' } } })],
    [
      'a map-list (containers, key name) is merged by key: a new item added, an existing one merged',
      'Object{spec: Object.spec{containers: [Object.spec.containers{name: "web", image: "nginx:2"}, Object.spec.containers{name: "side", image: "proxy"}]}}',
      (p: ReturnType<typeof pod>) => ({ ...p, spec: { ...p.spec, containers: [{ name: 'web', image: 'nginx:2', ports: p.spec.containers[0]!.ports }, { name: 'side', image: 'proxy' }] } }),
    ],
    // Items the Object names come in its order (structured merge's rule for every associative list).
    ['a set-list (finalizers) is unioned', 'Object{metadata: Object.metadata{finalizers: ["b", "a"]}}', (p: ReturnType<typeof pod>) => ({ ...p, metadata: { ...p.metadata, finalizers: ['b', 'a'] } })],
    ['a set-list keeps items the Object does not name', 'Object{metadata: Object.metadata{finalizers: ["b"]}}', (p: ReturnType<typeof pod>) => ({ ...p, metadata: { ...p.metadata, finalizers: ['a', 'b'] } })],
    ['an atomic list (tolerations) is replaced', 'Object{spec: Object.spec{tolerations: [Object.spec.tolerations{key: "z"}]}}', (p: ReturnType<typeof pod>) => ({ ...p, spec: { ...p.spec, tolerations: [{ key: 'z' }] } })],
    ['an int from CEL is a JSON number', 'Object{spec: Object.spec{terminationGracePeriodSeconds: 5}}', (p: ReturnType<typeof pod>) => ({ ...p, spec: { ...p.spec, terminationGracePeriodSeconds: 5 } })],
  ])('%s', async (_name, expression, want) => {
    const got = await mutate('ApplyConfiguration', expression, pod());
    const expected = want(pod());
    expect(got.metadata).toEqual(expected.metadata);
    expect((got.spec as Record<string, unknown>).tolerations).toEqual(expected.spec.tolerations);
    expect(got.spec).toEqual(expected.spec);
  });
});

describe('ApplyConfiguration checked against the resource\'s schema (upstream\'s typed conversion)', () => {
  it.each([
    ['a field the schema does not declare', 'Object{spec: Object.spec{replicas: 3}}', 'failed to convert patch object to typed object: .spec.replicas: field not declared in schema'],
    ['a nested undeclared field', 'Object{spec: Object.spec{containers: [Object.spec.containers{name: "web", imag: "x"}]}}', 'failed to convert patch object to typed object: .spec.containers[name="web"].imag: field not declared in schema'],
    ['a value of the wrong type', 'Object{spec: Object.spec{terminationGracePeriodSeconds: "five"}}', 'failed to convert patch object to typed object: .spec.terminationGracePeriodSeconds: expected numeric (int or float), got string'],
  ])('refuses %s', async (_name, expression, message) => {
    await expect(mutate('ApplyConfiguration', expression, pod())).rejects.toThrow(message);
  });
});

describe('JSONPatch', () => {
  it.each([
    ['add with an escaped key', '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "c"}]', { app: 'web', 'a/b': 'c' }],
    ['replace and remove', '[JSONPatch{op: "replace", path: "/metadata/labels/app", value: "api"}, JSONPatch{op: "add", path: "/metadata/labels/x", value: "1"}, JSONPatch{op: "remove", path: "/metadata/labels/x"}]', { app: 'api' }],
    ['copy and move', '[JSONPatch{op: "copy", from: "/metadata/labels/app", path: "/metadata/labels/copy"}, JSONPatch{op: "move", from: "/metadata/labels/copy", path: "/metadata/labels/moved"}]', { app: 'web', moved: 'web' }],
  ])('%s', async (_name, expression, labels) => {
    expect(((await mutate('JSONPatch', expression, pod())).metadata as Record<string, unknown>).labels).toEqual(labels);
  });

  it.each([
    ['an unknown op', '[JSONPatch{op: "merge", path: "/a", value: 1}]', /op must be one of add, remove, replace, move, copy, test/],
    ['a failing test op', '[JSONPatch{op: "test", path: "/metadata/name", value: "other"}]', /./],
    ['a path that does not exist', '[JSONPatch{op: "replace", path: "/nope/x", value: 1}]', /./],
  ])('refuses %s', async (_name, expression, message) => {
    await expect(mutate('JSONPatch', expression, pod())).rejects.toThrow(message);
  });
});

describe('compiling mutating policies', () => {
  it.each([
    ['an ApplyConfiguration returning a list', 'ApplyConfiguration', '[1]', /must evaluate to Object, not list/],
    ['a JSONPatch returning an Object', 'JSONPatch', 'Object{metadata: Object.metadata{}}', /must evaluate to list\(JSONPatch\), not map/],
    ['a syntax error', 'ApplyConfiguration', 'Object{spec: }', /compilation failed/],
  ])('refuses %s with the mutation\'s field path', (_name, patchType, expression, message) => {
    const field = patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
    const p = compileMutatingPolicy({ metadata: { name: 'm' }, spec: { mutations: [{ patchType, [field]: { expression } }] } });
    expect(p.errors).toHaveLength(1);
    expect(p.errors[0]).toMatch(new RegExp(`^spec\\.mutations\\[0\\]\\.${field}\\.expression: `));
    expect(p.errors[0]).toMatch(message);
  });
});
