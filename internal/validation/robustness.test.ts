// Bad input never crashes: every served kind goes through defaulting, validation (create and
// update) and unknown-field handling with hostile shapes, and comes out with errors, not throws.
import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../apierrors/field-errors.js';
import { applyDefaults, prepareForCreate } from '../defaults/defaults.js';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { cloneJson } from './plain-json.js';
import { findUnknownFields, pruneUnknownFields } from './schema.js';
import { validateObject } from './validate-object.js';

const naming = createNaming('cluster');
const catalog = new ApiCatalog(naming);
const resources = [...catalog.all()].filter((r) => r.schemaName);

const hostile: unknown[] = [
  null,
  42,
  'text',
  [],
  {},
  { metadata: null, spec: null, status: null },
  { metadata: [], spec: 'x', data: 7 },
  { metadata: { name: 5, labels: 'x', annotations: [1], finalizers: 'f', ownerReferences: {}, managedFields: [null, 3] }, spec: [] },
  {
    metadata: { name: 'x', namespace: 'default' },
    spec: {
      containers: [null, 'c', { name: 1, image: [], ports: {}, env: 'e', resources: { limits: { cpu: {} } } }],
      template: { metadata: { labels: [] }, spec: { containers: {}, volumes: [1] } },
      selector: 'all',
      ports: [{ port: 'x', targetPort: {} }],
      rules: [null],
      versions: [{ schema: { openAPIV3Schema: { properties: { a: 'b' } } } }],
      jobTemplate: { spec: { template: 3 } },
    },
    data: { '': 1 },
    roleRef: 'r',
    subjects: [3],
  },
];

describe('robustness', () => {
  it('has resources to check', () => expect(resources.length).toBeGreaterThan(50));

  for (const resource of resources) {
    it(`${resource.group || 'core'}/${resource.version}/${resource.kind} survives hostile input`, () => {
      for (const input of hostile) {
        const obj = applyDefaults(resource, cloneJson(input), naming);
        prepareForCreate(resource, cloneJson(obj), naming);
        const create = validateObject(resource, obj, { naming });
        const update = validateObject(resource, obj, { old: cloneJson(input), naming });
        create.concat(update).forEach(formatFieldError);
        findUnknownFields(resource.schemaName!, obj, { naming });
        pruneUnknownFields(resource.schemaName!, cloneJson(obj), { naming });
      }
    });
  }

  it('reports a missing field once even when several layers notice it', () => {
    const deployments = catalog.resource('apps', 'v1', 'deployments')!;
    const obj = applyDefaults(deployments, { metadata: { name: 'd', namespace: 'n' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } });
    const messages = validateObject(deployments, obj).map(formatFieldError);
    expect(messages.filter((m) => m === 'spec.selector: Required value')).toHaveLength(1);
  });
});
