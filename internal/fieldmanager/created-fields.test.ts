import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../patch/json-value.js';
import { builtinTypeNode, customResourceTypeNode } from '../patch/type-node.js';
import { rng } from '../testserver/seeded-random.js';
import { createdFieldsV1 } from './created-fields.js';
import { FieldManager, fieldPaths, type FieldManagerConfig } from './field-manager.js';
import { smdTypeOf, type SmdType } from './smd-type.js';

// A create's managed fields written in one walk must be byte for byte what the general path
// (diff against nothing or the zero value, set algebra, encoding) writes: both managers below
// differ only in createWalk.

const TIME = new Date(Date.UTC(2026, 10, 29, 10, 0, 0));

type Config = Omit<FieldManagerConfig, 'createWalk'>;

const CUSTOM_SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      // As a value struct of a typed kind: a zero value with a required struct below it.
      default: {},
      required: ['req'],
      properties: {
        req: { type: 'object', properties: { inner: { type: 'object', default: {}, properties: { x: { type: 'string' } } }, y: { type: 'string' } } },
        size: { type: 'integer' },
        color: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'proto'],
          items: { type: 'object', properties: { name: { type: 'string' }, proto: { type: 'string' }, port: { type: 'integer' }, opts: { type: 'object', additionalProperties: { type: 'string' } } } },
        },
        extra: { type: 'object', additionalProperties: { type: 'string' } },
        atomicMap: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'string' } } },
        items: { type: 'array', items: { type: 'object', properties: { v: { type: 'string' } } } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        nested: { type: 'object', properties: { deeper: { type: 'object', properties: { leaf: { type: 'string' }, list: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'integer' }, v: { type: 'string' } } } } } } } },
        any: {},
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' }, count: { type: 'integer' } } },
  },
};

const builtin = (schemaName: string, kind: string, status = true): Config => ({
  schema: builtinTypeNode(schemaName)!,
  kind,
  objectModel: 'typed',
  ...(status ? { ignoredFields: fieldPaths(['status']) } : {}),
});

const CONFIGS: Record<string, Config> = {
  Pod: builtin('io.k8s.api.core.v1.Pod', 'Pod'),
  Deployment: builtin('io.k8s.api.apps.v1.Deployment', 'Deployment'),
  StatefulSet: builtin('io.k8s.api.apps.v1.StatefulSet', 'StatefulSet'),
  Service: builtin('io.k8s.api.core.v1.Service', 'Service'),
  CronJob: builtin('io.k8s.api.batch.v1.CronJob', 'CronJob'),
  ConfigMap: builtin('io.k8s.api.core.v1.ConfigMap', 'ConfigMap', false),
  'Node (status kept)': builtin('io.k8s.api.core.v1.Node', 'Node', false),
  Widget: {
    schema: customResourceTypeNode(CUSTOM_SCHEMA as Parameters<typeof customResourceTypeNode>[0]),
    kind: 'Widget',
    objectModel: 'unstructured',
    ignoredFields: fieldPaths(['status']),
  },
  'Widget (typed)': { schema: customResourceTypeNode(CUSTOM_SCHEMA as Parameters<typeof customResourceTypeNode>[0]), kind: 'Widget', objectModel: 'typed' },
  schemaless: { schema: undefined, objectModel: 'unstructured' },
};

const managers = new Map<string, [FieldManager, FieldManager, Config]>();
function pair(name: string): [FieldManager, FieldManager, Config] {
  let p = managers.get(name);
  if (!p) {
    const c = CONFIGS[name]!;
    p = [new FieldManager({ ...c, createWalk: true }), new FieldManager({ ...c, createWalk: false }), c];
    managers.set(name, p);
  }
  return p;
}

/** Whether the walk wrote the object's fields itself (rather than leaving it to the general path). */
function walked(kind: string, obj: JsonObject): boolean {
  const c = CONFIGS[kind]!;
  const ignored = typeof c.ignoredFields === 'function' ? c.ignoredFields(undefined) : c.ignoredFields;
  const meta = obj.metadata;
  const plain = meta !== null && typeof meta === 'object' && !Array.isArray(meta) && 'managedFields' in meta ? { ...obj, metadata: Object.fromEntries(Object.entries(meta).filter(([k]) => k !== 'managedFields')) } : obj;
  return createdFieldsV1(plain as JsonObject, smdTypeOf(c.schema), c.objectModel === 'typed', ignored, undefined) !== undefined;
}

/** Both paths' answers to one create, as stored text. */
function both(kind: string, obj: JsonObject, manager = 'creator'): [string, string] {
  const [walk, general] = pair(kind);
  const opts = { manager, apiVersion: 'v1', time: TIME };
  const a = walk.update(undefined, structuredClone(obj), opts);
  const b = general.update(undefined, structuredClone(obj), opts);
  return [JSON.stringify(a), JSON.stringify(b)];
}

const pod = (spec: JsonObject, meta: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u', creationTimestamp: '2026-11-29T10:00:00Z', generation: 1, ...meta },
  spec,
  ...extra,
});
const container = (name: string, extra: JsonObject = {}): JsonObject => ({ name, image: 'img', ...extra });
const widget = (spec: JsonValue, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'ex.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { a: 'b' } }, spec, ...extra });
const deployment = (spec: JsonObject): JsonObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec });

// [case, kind, object, the walk writes it itself]
const CASES: Array<[string, string, JsonObject, boolean]> = [
  ['a pod with containers, ports, env, resources', 'Pod', pod({ containers: [container('a', { ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 8080, protocol: 'TCP' }], env: [{ name: 'X', value: '1' }], resources: { requests: { cpu: '1' } } })] }), true],
  ['labels, annotations, finalizers, owner references', 'Pod', pod({ containers: [container('a')] }, { labels: { z: '1', a: '2', 'é': '3', B: '4' }, annotations: { x: '' }, finalizers: ['f2', 'f1', 'f1'], ownerReferences: [{ uid: 'o1', apiVersion: 'v1', kind: 'X', name: 'x' }] }), true],
  ['status is ignored', 'Pod', pod({ containers: [container('a')] }, {}, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }), true],
  ['only identity fields: no entry', 'ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', uid: 'u', resourceVersion: '5' } }, true],
  ['an empty object', 'ConfigMap', {}, true],
  ['config map data with empty values', 'ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { b: '', a: 'x', '0': 'y', '10': 'z', '9': 'w' } }, true],
  ['config map with empty data and null binaryData', 'ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {}, binaryData: null }, true],
  ['containers in reverse order, duplicated names', 'Pod', pod({ containers: [container('b'), container('a'), container('b', { image: 'other' })] }), true],
  ['a container without a name', 'Pod', pod({ containers: [{ image: 'x' }, container('a')] }), false],
  ['null container, null volumes, empty init containers', 'Pod', pod({ containers: [null, container('a')], volumes: null, initContainers: [] }), true],
  ['empty structs and null structs', 'Pod', pod({ containers: [container('a', { resources: {}, securityContext: null, lifecycle: {} })], securityContext: {}, affinity: null, dnsConfig: { options: [] } }), true],
  ['tolerations (atomic list) and node selector', 'Pod', pod({ containers: [container('a')], tolerations: [{ operator: 'Exists' }, { operator: 'Exists' }], nodeSelector: {} }), true],
  ['a deployment with template, strategy, selector', 'Deployment', deployment({ replicas: 2, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [container('c', { env: [{ name: 'A' }, { name: 'A', value: '2' }] })] } }, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } }), true],
  ['a deployment with an empty spec', 'Deployment', deployment({}), true],
  ['a deployment with a null template', 'Deployment', deployment({ template: null, selector: null }), true],
  ['a deployment with a wrong-typed template', 'Deployment', deployment({ template: 'x' }), false],
  ['a deployment with wrong-typed containers', 'Deployment', deployment({ template: { spec: { containers: { name: 'x' } } } }), false],
  ['a statefulset with claim templates', 'StatefulSet', { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { serviceName: 's', selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [container('c')] } }, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } }, true],
  ['a service with ports keyed by port and protocol', 'Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 443, protocol: 'TCP', targetPort: 8443 }, { port: 80, protocol: 'TCP' }, { port: 80, protocol: 'UDP' }], selector: { a: 'b' }, clusterIPs: ['10.0.0.1'] } }, true],
  ['a service port without protocol', 'Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 443 }] } }, false],
  ['a cron job', 'CronJob', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { containers: [container('c')], restartPolicy: 'Never' } } } } } }, true],
  ['a node keeps its status', 'Node (status kept)', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, spec: { podCIDRs: ['10.0.0.0/24'] }, status: { addresses: [{ type: 'InternalIP', address: '1.2.3.4' }], capacity: { cpu: '2' }, conditions: [] } }, true],
  ['custom: list-map with two keys, set, map, nested', 'Widget', widget({ size: 3, tags: ['b', 'a', 'b'], ports: [{ name: 'p', proto: 'TCP', port: 1, opts: { x: 'y' } }, { name: 'p', proto: 'UDP' }, { name: 'a', proto: 'TCP' }], extra: { k: 'v', e: '' }, nested: { deeper: { leaf: 'x', list: [{ k: 2 }, { k: 10, v: 'x' }, { k: 2 }] } } }), true],
  ['custom: atomic map, atomic list, free-form, untyped', 'Widget', widget({ atomicMap: { a: 'x' }, items: [{ v: '1' }], free: { x: { y: [1, { z: 2 }] }, n: null }, any: { a: [1] } }), true],
  ['custom: empty and null values', 'Widget', widget({ tags: [], ports: null, extra: {}, nested: {}, free: {} }), true],
  ['custom: a spec that is not an object', 'Widget', widget('text'), true],
  ['custom: a list-map item missing a key', 'Widget', widget({ ports: [{ name: 'p' }] }), false],
  ['custom: status ignored, undeclared fields skipped', 'Widget', widget({ unknown: 1 }, { status: { ready: true }, other: { a: 1 } }), true],
  ['custom typed: zero values do not apply', 'Widget (typed)', widget({ size: 3, nested: { deeper: {} } }, { status: { count: 1 } }), true],
  ['custom typed: a required struct given empty', 'Widget (typed)', widget({ req: {} }), true],
  ['custom typed: a required struct given null or with fields', 'Widget (typed)', widget({ req: null, tags: null }), true],
  ['custom typed: a required struct with fields', 'Widget (typed)', widget({ req: { y: 'a', inner: { x: '' } } }), true],
  ['schemaless: everything is a field, lists atomic', 'schemaless', { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'x' }, spec: { a: [1, 2], b: { c: null, d: {} } }, top: 'x' }, true],
  ['requested managed fields reset', 'Pod', pod({ containers: [container('a')] }, { managedFields: [{}] }), true],
  ['requested managed fields empty', 'Pod', pod({ containers: [container('a')] }, { managedFields: [] }), true],
];

describe('a create written in one walk', () => {
  it.each(CASES)('%s', (_name, kind, obj, walks) => {
    const [a, b] = both(kind, obj);
    expect(a).toBe(b);
    expect(walked(kind, obj)).toBe(walks);
  });

  it('writes the general path entry for an empty manager name and any apiVersion', () => {
    const [walk, general] = pair('Pod');
    const obj = pod({ containers: [container('a')] });
    for (const opts of [{ manager: '', apiVersion: 'v1', time: TIME }, { manager: 'm"\\x', apiVersion: '', time: '2026-11-29T10:00:00.5Z' }]) {
      expect(JSON.stringify(walk.update(undefined, structuredClone(obj), opts))).toBe(JSON.stringify(general.update(undefined, structuredClone(obj), opts)));
    }
  });

  it('leaves requested managed fields, live objects and subresources to the general path', () => {
    const [walk, general] = pair('Pod');
    const entry = { manager: 'x', operation: 'Update', apiVersion: 'v1', time: '2026-11-29T09:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:a': {} } } } };
    const obj = pod({ containers: [container('a')] }, { labels: { a: '1' }, managedFields: [entry] });
    const opts = { manager: 'creator', apiVersion: 'v1', time: TIME };
    expect(JSON.stringify(walk.update(undefined, structuredClone(obj), opts))).toBe(JSON.stringify(general.update(undefined, structuredClone(obj), opts)));
    const status = { ...opts, subresource: 'status' };
    expect(JSON.stringify(walk.update(undefined, structuredClone(obj), status))).toBe(JSON.stringify(general.update(undefined, structuredClone(obj), status)));
  });

  // Objects generated from each kind's schema, with the shapes that trip walks up: repeated
  // and missing list keys, null items, empty and null values, wrong types, undeclared keys.
  it.each(Object.keys(CONFIGS).map((kind, i) => [kind, i]))('matches the general path on 300 generated %s objects', (kind, seed) => {
    const t = smdTypeOf(CONFIGS[kind]!.schema);
    const random = rng(1000 + seed);
    let walkedCount = 0;
    let count = 0;
    for (let i = 0; i < 300; i++) {
      const obj = generate(t, 0, random) as JsonObject;
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) continue;
      count++;
      const [a, b] = both(kind, obj);
      if (a !== b) expect({ i, obj, a }).toEqual({ i, obj, a: b });
      if (walked(kind, obj)) walkedCount++;
    }
    // Most generated objects are written by the walk itself, so the comparison tests it.
    expect(count).toBeGreaterThan(100);
    expect(walkedCount).toBeGreaterThan(count / 2);
  });
});

const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

/** A random value of type `t`: fields picked at random, a few values of the wrong shape. */
function generate(t: SmdType, depth: number, random: () => number): JsonValue {
  const r = random();
  if (r < 0.03) return null;
  if (r < 0.04 && depth > 0) return pick(random, ['x', 1, [], {}]);
  const kinds = [t.map ? 'map' : '', t.list ? 'list' : '', t.scalar ? 'scalar' : ''].filter(Boolean);
  const kind = pick(random, kinds.length > 0 ? kinds : ['scalar']);
  if (kind === 'scalar' || depth > 7) return pick(random, ['a', 'b', '', 1, 80, 2.5, true, false]);
  if (kind === 'list') {
    const list = t.list!;
    const n = pick(random, [0, 1, 1, 2, 3]);
    const out: JsonValue[] = [];
    for (let i = 0; i < n; i++) {
      if (list.keys.length > 0) {
        const item = generate(list.element(), depth + 1, random);
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
          for (const k of list.keys) if (random() < 0.97) item[k] = pick(random, k === 'name' ? ['a', 'b'] : ['TCP', 'UDP', 1, 2, 'x']);
        }
        out.push(item);
      } else if (list.associative) out.push(pick(random, ['a', 'b', 'c', 1]));
      else out.push(generate(list.element(), depth + 1, random));
    }
    return out;
  }
  const map = t.map!;
  const out: JsonObject = {};
  const names = map.fieldNames();
  const n = Math.min(names.length, pick(random, [0, 1, 2, 3, 5, 8]));
  for (let i = 0; i < n; i++) {
    const name = pick(random, names);
    const ft = map.field(name);
    if (ft) out[name] = generate(ft, depth + 1, random);
  }
  const elem = map.element();
  if (elem && random() < 0.5) for (const k of ['k1', 'a', 'Z']) if (random() < 0.5) out[k] = generate(elem, depth + 1, random);
  if (random() < 0.05) out.undeclared = 'x';
  return out;
}
