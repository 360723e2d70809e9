import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../apierrors/field-errors.js';
import { createNaming } from '../naming/naming.js';
import { SchemaIndex } from '../schema/openapi-index.js';
import { CUSTOM_ROOT_SCHEMA, customSchemaCompiler, SchemaCompiler } from './schema-compile.js';
import { fillFromSchema } from '../defaults/schema-fill.js';
import {
  base64DecodedLength,
  findUnknownFields,
  isBase64,
  isRFC3339,
  pruneUnknownFields,
  unknownFieldWarning,
  validateAgainstSchema,
} from './schema.js';

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const POD = 'io.k8s.api.core.v1.Pod';

const deployment = (): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            ports: [{ containerPort: 80, protocol: 'TCP' }],
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: 1 } },
          },
        ],
      },
    },
  },
});

const msgs = (schema: string, obj: unknown) => validateAgainstSchema(schema, obj).map(formatFieldError);

describe('validateAgainstSchema', () => {
  it('accepts a well-formed deployment', () => {
    expect(msgs(DEPLOYMENT, deployment())).toEqual([]);
  });

  it.each([
    ['replicas as string', (d: any) => (d.spec.replicas = 'two'), 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
    ['replicas fractional', (d: any) => (d.spec.replicas = 1.5), 'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"'],
    ['replicas beyond int32', (d: any) => (d.spec.replicas = 2 ** 31), 'spec.replicas: Invalid value: 2147483648: spec.replicas in body must be of type int32: "2147483648"'],
    ['missing selector', (d: any) => delete d.spec.selector, 'spec.selector: Required value'],
    ['null selector', (d: any) => (d.spec.selector = null), 'spec.selector: Required value'],
    ['labels not a map', (d: any) => (d.metadata.labels = ['a']), 'metadata.labels: Invalid value: "array": metadata.labels in body must be of type object: "array"'],
    ['label value not a string', (d: any) => (d.metadata.labels = { a: 1 }), 'metadata.labels[a]: Invalid value: "integer": metadata.labels[a] in body must be of type string: "integer"'],
    ['bad quantity', (d: any) => (d.spec.template.spec.containers[0].resources.requests.cpu = '1 core'), "spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: \"1 core\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    ['int-or-string as bool', (d: any) => (d.spec.strategy.rollingUpdate.maxSurge = true), 'spec.strategy.rollingUpdate.maxSurge: Invalid value: "boolean": spec.strategy.rollingUpdate.maxSurge in body must be of type integer,string: "boolean"'],
    ['bad timestamp', (d: any) => (d.metadata.creationTimestamp = 'yesterday'), 'metadata.creationTimestamp: Invalid value: "yesterday": metadata.creationTimestamp in body must be of type date-time: "yesterday"'],
    ['containers not a list', (d: any) => (d.spec.template.spec.containers = { name: 'x' }), 'spec.template.spec.containers: Invalid value: "object"'],
    ['missing containers', (d: any) => delete d.spec.template.spec.containers, 'spec.template.spec.containers: Required value'],
  ])('%s', (_name, mutate, expected) => {
    const d = deployment();
    mutate(d);
    expect(msgs(DEPLOYMENT, d).join('\n')).toContain(expected);
  });

  it('reports one error per field path and keeps going', () => {
    const d = deployment() as any;
    d.spec.replicas = 'x';
    d.spec.paused = 'no';
    d.spec.template.spec.containers[0].ports[0].containerPort = '80';
    expect(msgs(DEPLOYMENT, d).map((m) => m.split(':')[0]).sort()).toEqual([
      'spec.paused',
      'spec.replicas',
      'spec.template.spec.containers[0].ports[0].containerPort',
    ]);
  });

  it('checks base64 bytes in secrets', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { ok: 'aGVsbG8=', bad: 'hello!' } };
    expect(msgs('io.k8s.api.core.v1.Secret', secret)).toEqual(['data[bad]: Invalid value: "hello!": data[bad] in body must be of type byte: "hello!"']);
  });

  it('enforces list-map uniqueness except where upstream tolerates duplicates', () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      spec: { podCIDRs: ['10.0.0.0/24', '10.0.0.0/24'] },
      status: { addresses: [{ type: 'Hostname', address: 'a' }, { type: 'Hostname', address: 'b' }] },
    };
    expect(msgs('io.k8s.api.core.v1.Node', node)).toEqual(['spec.podCIDRs[1]: Duplicate value: "10.0.0.0/24"']);
    const cm = {
      metadata: { name: 'x' },
      status: { conditions: [] },
    };
    expect(msgs('io.k8s.api.core.v1.ConfigMap', cm)).toEqual([]);
  });

  // Speed belongs to `make bench`; a wall-clock bound here failed on loaded machines.
  it('validates a 2 KB pod the same way every time once compiled', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: (deployment() as any).metadata, spec: (deployment() as any).spec.template.spec };
    pod.spec.containers.push({ ...pod.spec.containers[0], name: 'sidecar', env: Array.from({ length: 20 }, (_, i) => ({ name: `VAR_${i}`, value: 'x'.repeat(40) })) });
    expect(JSON.stringify(pod).length).toBeGreaterThan(1800);
    const first = validateAgainstSchema(POD, pod);
    for (let i = 0; i < 20; i++) expect(validateAgainstSchema(POD, pod)).toEqual(first);
    const bad = structuredClone(pod);
    bad.spec.containers[1].env[3].value = 7;
    expect(validateAgainstSchema(POD, bad)).not.toEqual(first);
  });
});

describe('unknown fields', () => {
  it('finds undeclared fields with upstream-like paths', () => {
    const d = deployment() as any;
    d.spec.foo = 1;
    d.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
    d.metadata.labels.extra = 'fine';
    d.status = { bogus: true };
    // Document order: spec.foo was added after spec.template.
    expect(findUnknownFields(DEPLOYMENT, d)).toEqual(['.spec.template.spec.containers[0].imagePullPolicyy', '.spec.foo', '.status.bogus']);
    expect(unknownFieldWarning('.spec.foo')).toBe('unknown field "spec.foo"');
  });

  it('never looks inside free-form values (RawExtension, managedFields fieldsV1)', () => {
    const rev = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'r', managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }] },
      revision: 1,
      data: { anything: { goes: true } },
    };
    expect(findUnknownFields('io.k8s.api.apps.v1.ControllerRevision', rev)).toEqual([]);
  });

  it('prunes what it finds and reports it', () => {
    const d = deployment() as any;
    d.spec.foo = 1;
    d.spec.template.spec.containers[0].bar = {};
    expect(pruneUnknownFields(DEPLOYMENT, d)).toEqual(['.spec.template.spec.containers[0].bar', '.spec.foo']);
    expect(d).toEqual(deployment());
  });

  it('renames x-kubernetes- properties of CRD schemas to the naming prefix', () => {
    const crd = {
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', 'x-cluster-preserve-unknown-fields': true } },
              },
            },
          },
        ],
      },
    };
    const name = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition';
    expect(findUnknownFields(name, crd, { naming: createNaming('cluster') })).toEqual([]);
    expect(findUnknownFields(name, crd, { naming: createNaming('kubernetes') })).toEqual([
      '.spec.versions[0].schema.openAPIV3Schema.properties.spec.x-cluster-preserve-unknown-fields',
    ]);
  });

  it('honours preserve-unknown-fields and embedded resources in custom schemas', () => {
    const index = new SchemaIndex(() => ({
      'example.Widget': {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              size: { type: 'integer', enum: [1, 2, 3] },
              free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: {} } } },
            },
          },
        },
      },
    }));
    const compiler = new SchemaCompiler(index, { builtin: false });
    const obj = { spec: { size: 4, free: { x: 1 }, template: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {}, junk: 1 }, nope: 1 } };
    expect(findUnknownFields('example.Widget', obj, { compiler })).toEqual(['.spec.template.junk', '.spec.nope']);
    expect(validateAgainstSchema('example.Widget', obj, { compiler }).map(formatFieldError)).toEqual([
      'spec.size: Unsupported value: 4: supported values: "1", "2", "3"',
    ]);
  });
});

describe('formats', () => {
  it.each([
    ['2024-02-29T10:00:00Z', true],
    ['2023-02-29T10:00:00Z', false],
    ['2024-01-01T00:00:00.123456+02:00', true],
    ['2024-01-01 00:00:00Z', false],
    ['', false],
  ])('date-time %j → %s', (v, ok) => expect(isRFC3339(v)).toBe(ok));

  it('answers the same for remembered timestamps, before and after the memo fills', () => {
    const valid = Array.from({ length: 600 }, (_, i) => new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString().replace('.000Z', 'Z'));
    for (let round = 0; round < 2; round++) {
      for (const t of valid) expect(isRFC3339(t)).toBe(true);
      expect(isRFC3339('2023-02-29T10:00:00Z')).toBe(false);
      expect(isRFC3339(`${valid[0]!} `)).toBe(false);
    }
  });

  it.each([
    ['', true],
    ['aGVsbG8=', true],
    ['aGVs\nbG8=', true],
    ['aGVsbG8', false],
    ['a===', false],
  ])('base64 %j → %s', (v, ok) => expect(isBase64(v)).toBe(ok));

  it('computes decoded sizes', () => {
    expect(base64DecodedLength('aGVsbG8=')).toBe(5);
    expect(base64DecodedLength('')).toBe(0);
  });
});

describe('custom resource schemas', () => {
  const openAPIV3Schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', default: 1 },
          mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
          note: { type: 'string', nullable: true },
          port: { 'x-kubernetes-int-or-string': true },
          extra: { type: 'object', 'x-cluster-preserve-unknown-fields': true },
          tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          closed: { type: 'object' },
        },
      },
    },
  };
  const compiler = customSchemaCompiler(openAPIV3Schema as never, createNaming('cluster'));
  const opts = { compiler };

  it('validates, allows the resource envelope, reads markers in either spelling', () => {
    const cr = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 'big', mode: 'medium', note: null, port: 'http', extra: { anything: 1 }, tags: ['a', 'a'], closed: { x: 1 }, bogus: true },
    };
    expect(validateAgainstSchema(CUSTOM_ROOT_SCHEMA, cr, opts).map(formatFieldError)).toEqual([
      'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
      'spec.mode: Unsupported value: "medium": supported values: "fast", "slow"',
      'spec.tags[1]: Duplicate value: "a"',
    ]);
    expect(findUnknownFields(CUSTOM_ROOT_SCHEMA, cr, opts)).toEqual(['.spec.closed.x', '.spec.bogus']);
  });

  it('rejects null in non-nullable custom fields', () => {
    expect(validateAgainstSchema(CUSTOM_ROOT_SCHEMA, { spec: { size: null } }, opts).map(formatFieldError)).toEqual([
      'spec.size: Required value',
      'spec.size: Invalid value: "null": spec.size in body must be of type integer: "null"',
    ]);
  });

  it('fills schema defaults, replacing nulls that have a default', () => {
    const cr: any = { spec: { size: null, note: null } };
    fillFromSchema(cr, compiler.named(CUSTOM_ROOT_SCHEMA)!);
    expect(cr).toEqual({ spec: { size: 1, mode: 'fast', note: null } });
  });
});

describe('validateAgainstSchema: error paths at every nesting', () => {
  it.each([
    ['a required field inside a list item', (d: any) => delete d.spec.template.spec.containers[0].name, ['spec.template.spec.containers[0].name: Required value']],
    ['a second list item', (d: any) => d.spec.template.spec.containers.push({ name: 'b', image: 'x', ports: [{ containerPort: 'eighty' }] }), ['spec.template.spec.containers[1].ports[0].containerPort: Invalid value: "string": spec.template.spec.containers[1].ports[0].containerPort in body must be of type integer: "string"']],
    ['a map value under a list item', (d: any) => (d.spec.template.spec.containers[0].resources.limits = { cpu: 1, memory: [] }), ['spec.template.spec.containers[0].resources.limits[memory]: Invalid value: "array": spec.template.spec.containers[0].resources.limits[memory] in body must be of type string,number: "array"']],
    ['a date-time inside metadata', (d: any) => (d.metadata.creationTimestamp = 'yesterday'), ['metadata.creationTimestamp: Invalid value: "yesterday": metadata.creationTimestamp in body must be of type date-time: "yesterday"']],
    ['errors in document order after a nested one', (d: any) => { d.spec.template.spec.containers[0].image = 5; d.spec.paused = 'no'; }, ['spec.template.spec.containers[0].image: Invalid value: "integer": spec.template.spec.containers[0].image in body must be of type string: "integer"', 'spec.paused: Invalid value: "string": spec.paused in body must be of type boolean: "string"']],
  ])('%s', (_what, mutate, expected) => {
    const d = deployment();
    mutate(d);
    expect(msgs(DEPLOYMENT, d)).toEqual(expected);
  });
});
