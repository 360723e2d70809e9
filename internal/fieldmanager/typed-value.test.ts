import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../patch/json-value.js';
import { SchemaIndex, type SchemaNode } from '../schema/openapi-index.js';
import { builtinTypeNode, customResourceTypeNode } from '../patch/type-node.js';
import { FieldSet } from './field-set.js';
import { decodeFieldsV1 } from './fields-v1.js';
import { fieldElement as f, keyElement, pathString, type Path } from './path-element.js';
import { DEDUCED, smdTypeOf, type SmdType } from './smd-type.js';
import {
  diffValues,
  ensureNamedFieldsAreMembers,
  mergeValues,
  reconcileWithSchema,
  removeItems,
  toFieldSet,
  typeErrorsText,
  validate,
} from './typed-value.js';

const paths = (s: FieldSet) => s.paths().map(pathString);
const deployment = smdTypeOf(builtinTypeNode('io.k8s.api.apps.v1.Deployment'));
const pod = smdTypeOf(builtinTypeNode('io.k8s.api.core.v1.Pod'));

/** The type of a custom resource whose schema declares only `spec`, with these properties. */
const customResourceWithSpec = (properties: Record<string, unknown>): SmdType =>
  smdTypeOf(customResourceTypeNode({ type: 'object', properties: { spec: { type: 'object', properties } } } as Parameters<typeof customResourceTypeNode>[0]));

const at = (t: SmdType, ...names: string[]): SmdType => {
  let cur = t;
  for (const n of names) {
    if (n === '[]') cur = cur.list!.element();
    else cur = cur.map!.field(n) ?? cur.map!.element()!;
  }
  return cur;
};

describe('schema view (§2.9 markers)', () => {
  it('reads list-type map with its keys, and key defaults', () => {
    const containers = at(pod, 'spec', 'containers');
    expect(containers.list).toMatchObject({ atomic: false, associative: true, keys: ['name'] });
    const ports = at(pod, 'spec', 'containers', '[]', 'ports');
    expect(ports.list?.keys).toEqual(['containerPort', 'protocol']);
    expect(ports.list?.keyDefault('protocol')).toBe('TCP');
  });

  it('reads list-type set, atomic lists and unmarked lists', () => {
    expect(at(pod, 'metadata', 'finalizers').list).toMatchObject({ associative: true, keys: [] });
    expect(at(pod, 'metadata', 'managedFields').list?.atomic).toBe(true);
    expect(at(pod, 'spec', 'containers', '[]', 'args').list?.atomic).toBe(true);
  });

  it('reads map-type atomic on the referenced type and granular maps', () => {
    expect(at(deployment, 'spec', 'selector').map?.atomic).toBe(true);
    expect(at(deployment, 'metadata', 'labels').map?.atomic).toBe(false);
    expect(at(deployment, 'spec', 'template').map?.atomic).toBe(false);
  });

  const index = new SchemaIndex(() => ({
    'test.T': {
      type: 'object',
      properties: {
        keyed: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'id' },
        keyedRetain: { type: 'array', items: { type: 'object' }, 'x-kubernetes-patch-strategy': 'merge,retainKeys', 'x-kubernetes-patch-merge-key': 'id' },
        scalars: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
        retain: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'retainKeys' },
        explicit: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-list-type': 'atomic' },
        free: { type: 'object' },
        quantity: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity' },
      },
    },
    'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string' },
  }));
  const t = smdTypeOf(builtinTypeNode('test.T', index));

  it.each([
    ['keyed', { associative: true, keys: ['id'] }],
    ['keyedRetain', { associative: true, keys: ['id'] }],
    ['scalars', { associative: true, keys: [] }],
    ['retain', { associative: false }],
    ['explicit', { associative: false }],
  ])('falls back from patchStrategy for %s', (name, want) => {
    expect(at(t, name).list).toMatchObject(want);
  });

  it('treats an object without properties as free-form (deduced)', () => {
    expect(at(t, 'free').map?.element()).toBe(DEDUCED);
  });

  it('reads custom resources as unstructured unless marked: lists atomic, metadata is ObjectMeta', () => {
    const schema: SchemaNode = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
            keyed: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' } } } },
            bag: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      },
    };
    const cr = smdTypeOf(customResourceTypeNode(schema));
    expect(at(cr, 'spec', 'items').list?.atomic).toBe(true);
    expect(at(cr, 'spec', 'keyed').list?.keys).toEqual(['name']);
    expect(at(cr, 'spec', 'bag').map?.element()).toBe(DEDUCED);
    expect(at(cr, 'metadata', 'labels').map?.atomic).toBe(false);
  });
});

describe('toFieldSet', () => {
  it('records leaves, list items (with their key fields) and map keys; atomic values whole', () => {
    const obj: JsonObject = {
      apiVersion: 'apps/v1',
      metadata: { labels: { app: 'x' }, finalizers: ['a'] },
      spec: {
        selector: { matchLabels: { app: 'x' } },
        template: { spec: { containers: [{ name: 'c', image: 'i', args: ['1'], ports: [{ containerPort: 80 }] }] } },
      },
    };
    expect(paths(toFieldSet(obj, deployment))).toEqual([
      '.apiVersion',
      '.metadata.finalizers[="a"]',
      '.metadata.labels.app',
      '.spec.selector',
      '.spec.template.spec.containers[name="c"]',
      '.spec.template.spec.containers[name="c"].args',
      '.spec.template.spec.containers[name="c"].image',
      '.spec.template.spec.containers[name="c"].name',
      '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
      '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort',
    ]);
  });

  it('treats every key of schemaless data as a field and lists as atomic', () => {
    expect(paths(toFieldSet({ spec: { a: { b: 1 }, l: [{ x: 1 }] } }, DEDUCED))).toEqual(['.spec', '.spec.a', '.spec.l', '.spec.a.b']);
  });
});

describe('validate (apply bodies)', () => {
  const cases: Array<[string, JsonValue, string]> = [
    ['an undeclared field', { spec: { replicaz: 1 } }, '.spec.replicaz: field not declared in schema'],
    ['a string for a number', { spec: { replicas: 'x' } }, '.spec.replicas: expected numeric (int or float), got string'],
    ['a list for a map', { spec: { template: [] } }, '.spec.template: expected map, got []'],
    [
      'duplicate keys',
      { spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } } },
      '.spec.template.spec.containers: duplicate entries for key [name="a"]',
    ],
  ];
  it.each(cases)('reports %s', (_name, obj, text) => {
    expect(typeErrorsText(validate(obj, deployment))).toBe(text);
  });

  // Paths are shown only for errors (a segment stack while walking); these texts are the ones
  // the walker gave when it built a path text for every value.
  const nested: Array<[string, JsonValue, string]> = [
    ["a field of a keyed list item in a keyed list item", { spec: { template: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP', hostPort: 'x' }] }] } } } }, ".spec.template.spec.containers[name=\"a\"].ports[containerPort=80,protocol=\"TCP\"].hostPort: expected numeric (int or float), got string"],
    ["a set-list item, an atomic-list index", { spec: { template: { spec: { containers: [{ name: 'a', env: [{ name: 'E', valueFrom: { fieldRef: { fieldPath: 1 } } }] }, { name: 'b', args: [1] }] } } } }, "errors:\n  .spec.template.spec.containers[name=\"a\"].env[name=\"E\"].valueFrom.fieldRef.fieldPath: expected string, got 1\n  .spec.template.spec.containers[name=\"b\"].args[0]: expected string, got 1"],
    ["map values and the first undeclared field of an item", { metadata: { labels: { a: 1 } }, spec: { template: { metadata: { annotations: { b: [] } }, spec: { volumes: [{ name: 'v', bogus: 1 }] } } } }, "errors:\n  .metadata.labels.a: expected string, got 1\n  .spec.template.metadata.annotations.b: expected string, got []\n  .spec.template.spec.volumes[name=\"v\"].bogus: field not declared in schema"],
    ["a bad item of an atomic list, duplicate defaulted keys", { spec: { template: { spec: { tolerations: [{ key: 'k' }, 3], containers: [{ name: 'c', ports: [{ containerPort: 1 }, { containerPort: 1 }] }] } } } }, "errors:\n  .spec.template.spec.tolerations[1]: expected map, got 3\n  .spec.template.spec.containers[name=\"c\"].ports: duplicate entries for key [containerPort=1,protocol=\"TCP\"]"],
    ["an any-scalar and an int-or-string", { spec: { template: { spec: { containers: [{ name: 'a', resources: { limits: { cpu: {} } } }] } }, strategy: { rollingUpdate: { maxSurge: [] } } } }, ".spec.template.spec.containers[name=\"a\"].resources.limits.cpu: expected any scalar, got {}"],
  ];
  it.each(nested)('names the path of %s', (_name, obj, text) => {
    expect(typeErrorsText(validate(obj, deployment))).toBe(text);
  });

  it('reports a list-map item without its key (built-in keys have schema defaults, so a CRD)', () => {
    const cr = customResourceWithSpec({
      rules: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
      },
    });
    expect(typeErrorsText(validate({ spec: { rules: [{ port: 1 }] } }, cr))).toBe(
      '.spec.rules: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    );
  });

  it('uses the schema default of a key field an item omits (built-in kinds)', () => {
    expect(validate({ spec: { template: { spec: { containers: [{ image: 'x' }] } } } }, deployment)).toEqual([]);
  });

  it('lists several problems the way upstream does', () => {
    const errs = validate({ spec: { replicas: 'x', paused: 'y' } }, deployment);
    expect(typeErrorsText(errs)).toBe(
      'errors:\n  .spec.replicas: expected numeric (int or float), got string\n  .spec.paused: expected boolean, got "y"',
    );
  });

  it('accepts duplicates in stored objects when asked to', () => {
    expect(validate({ spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } } }, deployment, true)).toEqual([]);
  });
});

describe('diffValues', () => {
  it('splits changes into added, modified and removed', () => {
    const before: JsonObject = { spec: { replicas: 1, paused: true, template: { spec: { containers: [{ name: 'a', image: '1' }] } } } };
    const after: JsonObject = {
      spec: { replicas: 2, minReadySeconds: 5, template: { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '2' }] } } },
    };
    const cmp = diffValues(before, after, deployment);
    expect(paths(cmp.modified)).toEqual(['.spec.replicas']);
    expect(paths(cmp.removed)).toEqual(['.spec.paused']);
    expect(paths(cmp.added)).toEqual([
      '.spec.minReadySeconds',
      '.spec.template.spec.containers[name="b"]',
      '.spec.template.spec.containers[name="b"].image',
      '.spec.template.spec.containers[name="b"].name',
    ]);
  });

  // What is added where the left side is missing is built bottom-up (addedBelow); these rows'
  // answers are those of the path-by-path insertion it replaced (same on the old code).
  const cr = customResourceWithSpec({
    size: { type: 'integer' },
    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } } },
    extra: { type: 'object', additionalProperties: { type: 'string' } },
  });
  it.each<[string, SmdType, JsonValue | undefined, JsonValue, string[], string[], string[]]>([
    ["a whole pod (a create)", pod, {}, {"metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x", "y"]}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}], "env": [{"name": "E", "value": "v"}], "args": ["a"]}], "securityContext": {}, "tolerations": [{"operator": "Exists"}]}}, [".metadata", ".spec", ".metadata.finalizers", ".metadata.labels", ".metadata.name", ".metadata.finalizers[=\"x\"]", ".metadata.finalizers[=\"y\"]", ".metadata.labels.a", ".spec.containers", ".spec.securityContext", ".spec.tolerations", ".spec.containers[name=\"c\"]", ".spec.containers[name=\"c\"].args", ".spec.containers[name=\"c\"].env", ".spec.containers[name=\"c\"].image", ".spec.containers[name=\"c\"].name", ".spec.containers[name=\"c\"].ports", ".spec.containers[name=\"c\"].env[name=\"E\"]", ".spec.containers[name=\"c\"].env[name=\"E\"].name", ".spec.containers[name=\"c\"].env[name=\"E\"].value", ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"]", ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"UDP\"]", ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"].containerPort", ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"UDP\"].containerPort", ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"UDP\"].protocol"], [], []],
    ["the root itself missing (a custom resource create)", cr, undefined, {"apiVersion": "ex.com/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"size": 3, "tags": ["t1"], "ports": [{"name": "a", "port": 1}], "extra": {"k": "v"}}}, [".apiVersion", ".kind", ".metadata", ".spec", ".metadata.name", ".spec.extra", ".spec.ports", ".spec.size", ".spec.tags", ".spec.extra.k", ".spec.ports[name=\"a\"]", ".spec.ports[name=\"a\"].name", ".spec.ports[name=\"a\"].port", ".spec.tags[=\"t1\"]"], [], []],
    ["repeated set values and keyed items are added once, without what is below them", cr, undefined, {"spec": {"tags": ["a", "a", "b"], "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "b"}]}}, [".spec", ".spec.ports", ".spec.tags", ".spec.ports[name=\"a\"]", ".spec.ports[name=\"b\"]", ".spec.ports[name=\"b\"].name", ".spec.tags[=\"a\"]", ".spec.tags[=\"b\"]"], [], []],
    ["empty maps and lists are leaves", pod, {}, {"metadata": {"labels": {}, "finalizers": []}, "spec": {"containers": [], "nodeSelector": {}}}, [".metadata", ".spec", ".metadata.finalizers", ".metadata.labels", ".spec.containers", ".spec.nodeSelector"], [], []],
    ["a container added to a live list", pod, {"spec": {"containers": [{"name": "a", "image": "1"}]}}, {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2", "resources": {"limits": {"cpu": "1"}}, "volumeMounts": [{"mountPath": "/m", "name": "v"}]}]}}, [".spec.containers[name=\"b\"]", ".spec.containers[name=\"b\"].image", ".spec.containers[name=\"b\"].name", ".spec.containers[name=\"b\"].resources", ".spec.containers[name=\"b\"].volumeMounts", ".spec.containers[name=\"b\"].resources.limits", ".spec.containers[name=\"b\"].resources.limits.cpu", ".spec.containers[name=\"b\"].volumeMounts[mountPath=\"/m\"]", ".spec.containers[name=\"b\"].volumeMounts[mountPath=\"/m\"].mountPath", ".spec.containers[name=\"b\"].volumeMounts[mountPath=\"/m\"].name"], [], []],
    ["a scalar replaced by a map", pod, {"spec": {"securityContext": 5}}, {"spec": {"securityContext": {"runAsUser": 1, "sysctls": [{"name": "a", "value": "b"}]}}}, [".spec.securityContext.runAsUser", ".spec.securityContext.sysctls"], [], []],
    ["items without their key are left out", pod, {}, {"spec": {"containers": [{"image": "x"}, {"name": "ok"}]}}, [".spec", ".spec.containers", ".spec.containers[name=\"\"]", ".spec.containers[name=\"ok\"]", ".spec.containers[name=\"\"].image", ".spec.containers[name=\"ok\"].name"], [], []],
    ['members holding undefined are skipped, with the left side missing or not', pod, { spec: {} }, { spec: { hostname: undefined, subdomain: 's', nodeSelector: { a: undefined } } } as unknown as JsonValue, ['.spec.nodeSelector', '.spec.subdomain'], [], []],
    ['members holding undefined under a missing parent', pod, {}, { spec: { hostname: undefined, subdomain: 's', nodeSelector: { a: undefined } } } as unknown as JsonValue, ['.spec', '.spec.nodeSelector', '.spec.subdomain'], [], []],
  ])('added subtrees: %s', (_name, t, lhs, rhs, added, modified, removed) => {
    const cmp = diffValues(lhs, rhs, t);
    expect([paths(cmp.added), paths(cmp.modified), paths(cmp.removed)]).toEqual([added, modified, removed]);
  });

  it('compares atomic values whole', () => {
    const cmp = diffValues({ spec: { selector: { matchLabels: { a: '1' } } } }, { spec: { selector: { matchLabels: { a: '2' } } } }, deployment);
    expect(paths(cmp.modified)).toEqual(['.spec.selector']);
  });
});

describe('mergeValues (apply)', () => {
  const containers = (...names: string[]) => ({ spec: { template: { spec: { containers: names.map((name) => ({ name })) } } } });
  const order = (v: JsonValue | undefined) =>
    ((v as { spec: { template: { spec: { containers: Array<{ name: string }> } } } }).spec.template.spec.containers).map((c) => c.name);

  it.each([
    ['appends new items after the live ones', ['a', 'b'], ['c'], ['a', 'b', 'c']],
    ['keeps live order for items the body names in the same order', ['a', 'b', 'c'], ['a', 'c'], ['a', 'b', 'c']],
    ['uses the body order for the items it names', ['a', 'b', 'c'], ['c', 'a'], ['b', 'c', 'a']],
    ['inserts new items where the body puts them', ['a', 'b'], ['a', 'x', 'b'], ['a', 'x', 'b']],
  ])('%s', (_name, live, body, want) => {
    expect(order(mergeValues(containers(...live), containers(...body), deployment))).toEqual(want);
  });

  it('merges items by key, replaces atomic values and keeps what the body does not mention', () => {
    const live: JsonObject = {
      metadata: { labels: { a: '1', b: '2' } },
      spec: { replicas: 1, selector: { matchLabels: { a: '1' }, matchExpressions: [] }, template: { spec: { containers: [{ name: 'c', image: 'old', args: ['x'] }] } } },
    };
    const body: JsonObject = {
      metadata: { labels: { b: '3' } },
      spec: { selector: { matchLabels: { a: '1' } }, template: { spec: { containers: [{ name: 'c', image: 'new' }] } } },
    };
    expect(mergeValues(live, body, deployment)).toEqual({
      metadata: { labels: { a: '1', b: '3' } },
      spec: { replicas: 1, selector: { matchLabels: { a: '1' } }, template: { spec: { containers: [{ name: 'c', image: 'new', args: ['x'] }] } } },
    });
  });
});

describe('mergeValues carries live subtrees the body does not touch', () => {
  const live = (containers: JsonValue[]): JsonObject => ({
    metadata: { labels: { a: '1' } },
    spec: { replicas: 1, template: { spec: { containers } } },
    status: { replicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
  });
  const body: JsonObject = { spec: { replicas: 2 } };
  const containersOf = (v: JsonValue | undefined) => ((v as JsonObject).spec as { template: { spec: { containers: JsonValue } } }).template.spec.containers;

  it('shares well-formed subtrees instead of rebuilding them', () => {
    const l = live([{ name: 'a', env: [{ name: 'X', value: '1' }] }]);
    const merged = mergeValues(l, body, deployment) as JsonObject;
    expect(merged.status).toBe(l.status);
    expect(merged.metadata).toBe(l.metadata);
    expect((merged.spec as JsonObject).template).toBe((l.spec as JsonObject).template);
    expect(merged).toEqual({ ...l, spec: { ...(l.spec as JsonObject), replicas: 2 } });
  });

  // Lists the merge normalizes are rebuilt as before: a repeated key is grouped at its first
  // place, an item without a key (not an object here: a missing name defaults to "") is dropped.
  it.each([
    ['a repeated key', [{ name: 'a' }, { name: 'b' }, { name: 'a', image: 'x' }], [{ name: 'a' }, { name: 'a', image: 'x' }, { name: 'b' }]],
    ['an item that is not an object', [{ name: 'a' }, 'junk'], [{ name: 'a' }]],
    ['a repeated key deeper down', [{ name: 'a', env: [{ name: 'E', value: '1' }, { name: 'F' }, { name: 'E', value: '2' }] }], [{ name: 'a', env: [{ name: 'E', value: '1' }, { name: 'E', value: '2' }, { name: 'F' }] }]],
  ])('rebuilds a list with %s', (_name, containers, want) => {
    const l = live(containers as JsonValue[]);
    const merged = mergeValues(l, body, deployment);
    expect(containersOf(merged)).toEqual(want);
    expect(containersOf(l)).toEqual(containers);
  });
});

describe('removeItems', () => {
  it('removes members with everything below them and keeps emptied containers', () => {
    const obj: JsonObject = { metadata: { labels: { a: '1' } }, spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    const out = removeItems(
      obj,
      FieldSet.of(
        [f('metadata'), f('labels'), f('a')],
        [f('spec'), f('replicas')],
        [f('spec'), f('template'), f('spec'), f('containers'), keyElement([['name', 'c']])],
      ),
      deployment,
    );
    expect(out).toEqual({ metadata: { labels: {} }, spec: { template: { spec: { containers: [] } } } });
    expect(obj.spec).toHaveProperty('replicas', 2);
  });
});

describe('schema-aware set adjustments', () => {
  it('ensureNamedFieldsAreMembers adds struct fields, not map keys', () => {
    const set = FieldSet.of([f('metadata'), f('labels'), f('app')], [f('spec'), f('template'), f('spec'), f('hostname')]);
    expect(paths(ensureNamedFieldsAreMembers(set, deployment))).toEqual([
      '.metadata',
      '.spec',
      '.metadata.labels',
      '.metadata.labels.app',
      '.spec.template',
      '.spec.template.spec',
      '.spec.template.spec.hostname',
    ]);
  });

  it('gives the whole of a structure that turned atomic to whoever owned part of it', () => {
    // Recorded when the selector was granular: one owned label inside it.
    const set = decodeFieldsV1({ 'f:spec': { 'f:selector': { 'f:matchLabels': { 'f:app': {} } }, 'f:replicas': {} } });
    const live: JsonObject = { spec: { replicas: 1, selector: { matchLabels: { app: 'x' } } } };
    expect(paths(reconcileWithSchema(set, live, deployment)!)).toEqual(['.spec.replicas', '.spec.selector']);
  });

  it('splits a structure that turned granular into its fields, from the live object', () => {
    const set = decodeFieldsV1({ 'f:metadata': { 'f:labels': {} } });
    const live: JsonObject = { metadata: { labels: { a: '1', b: '2' } } };
    expect(paths(reconcileWithSchema(set, live, deployment)!)).toEqual(['.metadata.labels', '.metadata.labels.a', '.metadata.labels.b']);
  });

  it('leaves a set that fits the schema alone', () => {
    const set = decodeFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:selector': {} } });
    expect(reconcileWithSchema(set, { spec: { replicas: 1 } }, deployment)).toBeUndefined();
  });

  it('leaves a granular struct owned whole alone while the live object has nothing in it', () => {
    // As every pod's creator owns spec.securityContext: {} (defaulted, empty).
    const set = decodeFieldsV1({ 'f:spec': { 'f:securityContext': {}, 'f:dnsPolicy': {} } });
    expect(reconcileWithSchema(set, { spec: { securityContext: {}, dnsPolicy: 'ClusterFirst' } }, pod)).toBeUndefined();
    expect(reconcileWithSchema(set, { spec: { dnsPolicy: 'ClusterFirst' } }, pod)).toBeUndefined();
    // Once it holds fields (another writer set them), the owner owns them one by one, as before.
    expect(paths(reconcileWithSchema(set, { spec: { securityContext: { runAsUser: 1 } } }, pod)!)).toEqual(['.spec.dnsPolicy', '.spec.securityContext', '.spec.securityContext.runAsUser']);
  });

  it('gives the same answer when asked again for the same set (remembered verdicts)', () => {
    const fits = decodeFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:paused': {} } });
    expect(reconcileWithSchema(fits, { spec: { replicas: 1 } }, deployment)).toBeUndefined();
    expect(reconcileWithSchema(fits, { spec: { replicas: 2 } }, deployment)).toBeUndefined();
    // A set that needs changes is never remembered as fitting, and follows the live object.
    const granular = decodeFieldsV1({ 'f:metadata': { 'f:annotations': {} } });
    expect(paths(reconcileWithSchema(granular, { metadata: { annotations: { a: '1' } } }, deployment)!)).toEqual(['.metadata.annotations', '.metadata.annotations.a']);
    expect(paths(reconcileWithSchema(granular, { metadata: { annotations: { b: '2' } } }, deployment)!)).toEqual(['.metadata.annotations', '.metadata.annotations.b']);
  });
});

describe('reconcileWithSchema remembered verdicts that looked at the live object', () => {
  // The set's verdict was first taken on a live object whose structs were empty; later live
  // objects (empty again, missing, or filled) must get the answer a never-seen set gets.
  // (Only structs reached through field names are checked this way; under a list item the
  // live object is always walked.)
  const fields = { 'f:spec': { 'f:securityContext': {}, 'f:dnsPolicy': {}, 'f:containers': { 'k:{"name":"a"}': { 'f:name': {} } } } };
  const lives: Array<[string, JsonValue]> = [
    ['empty structs', { spec: { securityContext: {}, containers: [{ name: 'a', securityContext: {} }] } }],
    ['no structs', { spec: { containers: [{ name: 'a' }] } }],
    ['pod struct filled', { spec: { securityContext: { runAsUser: 1 }, containers: [{ name: 'a' }] } }],
    ['empty again', { spec: { securityContext: {}, containers: [{ name: 'a', securityContext: {} }] } }],
    ['other fields filled', { spec: { securityContext: {}, dnsPolicy: 'None', containers: [{ name: 'a', securityContext: { privileged: true } }] } }],
    ['filled with an empty struct', { spec: { securityContext: { seLinuxOptions: {} }, containers: [] } }],
    ['no spec', {}],
  ];
  const remembered = decodeFieldsV1(fields);
  it.each(lives)('%s', (name, live) => {
    // An element type decoding ignores, named per case, makes the text new: the text cache
    // misses and the set is one reconcileWithSchema never saw.
    const fresh = decodeFieldsV1({ ...fields, [`x:${name}`]: {} });
    expect(fresh).not.toBe(remembered);
    const want = reconcileWithSchema(fresh, live, pod);
    const got = reconcileWithSchema(remembered, live, pod);
    expect(got === undefined ? undefined : paths(got)).toEqual(want === undefined ? undefined : paths(want));
  });
});

describe('path helpers', () => {
  it('spells key paths', () => {
    const p: Path = [f('spec'), f('template'), f('spec'), f('containers'), keyElement([['name', 'web']]), f('image')];
    expect(pathString(p)).toBe('.spec.template.spec.containers[name="web"].image');
  });
});
