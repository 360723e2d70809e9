import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../apierrors/field-errors.js';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { finalizerWarnings, nameValidatorFor, validateFieldManager, validateObjectMetaCreate, validateObjectMetaUpdate } from './object-meta.js';

const catalog = new ApiCatalog(createNaming('cluster'));
const res = (group: string, resource: string) => {
  const r = [...catalog.all()].find((x) => x.group === group && x.resource === resource);
  if (!r) throw new Error(`no ${group}/${resource}`);
  return r;
};
const pods = res('', 'pods');
const namespaces = res('', 'namespaces');
const messages = (errs: ReturnType<typeof validateObjectMetaCreate>) => errs.map(formatFieldError);

describe('nameValidatorFor', () => {
  it.each([
    ['', 'pods', 'my.pod', true],
    ['', 'pods', 'My_Pod', false],
    ['', 'namespaces', 'a.b', false],
    ['', 'namespaces', 'team-a', true],
    ['', 'services', '1web', false],
    ['', 'services', 'web-1', true],
    ['rbac.authorization.cluster.io', 'clusterroles', 'system:controller:foo', true],
    ['rbac.authorization.cluster.io', 'roles', 'a/b', false],
    ['apps', 'deployments', 'web.v2', true],
    ['networking.cluster.io', 'ipaddresses', '10.0.0.1', true],
    ['networking.cluster.io', 'ipaddresses', 'ten', false],
  ])('%s/%s %j → valid %s', (group, resource, name, ok) => {
    expect(nameValidatorFor(res(group, resource))(name, false).length === 0).toBe(ok);
  });

  it('checks generateName prefixes with their trailing dash', () => {
    expect(nameValidatorFor(pods)('web-', true)).toEqual([]);
    expect(nameValidatorFor(namespaces)('Web-', true)).not.toEqual([]);
  });
});

describe('validateObjectMetaCreate', () => {
  const ctx = { resource: pods };

  it('accepts a plain namespaced object', () => {
    expect(validateObjectMetaCreate({ name: 'web', namespace: 'default', labels: { app: 'web' } }, ctx)).toEqual([]);
  });

  it.each([
    [{ namespace: 'default' }, 'metadata.name: Required value: name or generateName is required'],
    [{ name: 'web' }, 'metadata.namespace: Required value'],
    [{ name: 'web', namespace: 'Default' }, 'metadata.namespace: Invalid value: "Default": a lowercase RFC 1123 label'],
    [{ name: 'Web', namespace: 'default' }, 'metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain'],
    [{ name: 'a', generateName: 'Bad-', namespace: 'd' }, 'metadata.generateName: Invalid value: "Bad-"'],
    [{ name: 'a', namespace: 'd', labels: { 'bad key': 'x' } }, 'metadata.labels: Invalid value: "bad key": name part must consist'],
    [{ name: 'a', namespace: 'd', labels: { k: '-v' } }, 'metadata.labels: Invalid value: "-v": a valid label must be'],
    [{ name: 'a', namespace: 'd', annotations: { 'a/b/c': 'x' } }, 'metadata.annotations: Invalid value: "a/b/c"'],
    [{ name: 'a', namespace: 'd', annotations: { big: 'x'.repeat(256 * 1024) } }, 'metadata.annotations: Too long: may not be more than 262144 bytes'],
    [{ name: 'a', namespace: 'd', finalizers: ['my-finalizer'] }, 'metadata.finalizers[0]: Invalid value: "my-finalizer": name is neither a standard finalizer name nor is it fully qualified'],
    [{ name: 'a', namespace: 'd', finalizers: ['orphan', 'foregroundDeletion'] }, 'finalizer orphan and foregroundDeletion cannot be both set'],
    [{ name: 'a', namespace: 'd', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' }] }, 'metadata.ownerReferences.uid: Invalid value: "": must not be empty'],
    [{ name: 'a', namespace: 'd', ownerReferences: [{ apiVersion: 'apps/', kind: 'X', name: 'n', uid: 'u' }] }, 'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty'],
    [
      {
        name: 'a',
        namespace: 'd',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'A', name: 'x', uid: '1', controller: true },
          { apiVersion: 'v1', kind: 'B', name: 'y', uid: '2', controller: true },
        ],
      },
      'Only one reference can have Controller set to true. Found "true" in references for A/x and B/y',
    ],
    [{ name: 'a', namespace: 'd', managedFields: [{ manager: 'm', operation: 'Patch' }] }, 'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`'],
    [{ name: 'a', namespace: 'd', generation: -1 }, 'metadata.generation: Invalid value: -1'],
  ])('%j → %s', (meta, expected) => {
    expect(messages(validateObjectMetaCreate(meta, ctx)).join('\n')).toContain(expected);
  });

  it('forbids a namespace on cluster-scoped kinds', () => {
    expect(messages(validateObjectMetaCreate({ name: 'n', namespace: 'x' }, { resource: namespaces }))).toEqual([
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
  });

  it('accepts standard and qualified finalizers, both namespace-finalizer spellings', () => {
    const meta = { name: 'a', namespace: 'd', finalizers: ['kubernetes', 'cluster', 'orphan', 'example.com/cleanup'] };
    expect(validateObjectMetaCreate(meta, { resource: pods, naming: createNaming('cluster') })).toEqual([]);
  });

  it('only warns about unqualified finalizers on custom resources', () => {
    const meta = { name: 'a', namespace: 'd', finalizers: ['mine'] };
    expect(validateObjectMetaCreate(meta, { resource: pods, custom: true })).toEqual([]);
    expect(finalizerWarnings(meta)).toEqual([
      'metadata.finalizers[0]: "mine": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers',
    ]);
  });
});

describe('validateObjectMetaUpdate', () => {
  const ctx = { resource: pods };
  const old = { name: 'a', namespace: 'd', uid: 'u1', creationTimestamp: '2024-01-01T00:00:00Z', generation: 2 };

  it('accepts unchanged identity and a different timestamp spelling of the same instant', () => {
    expect(validateObjectMetaUpdate({ ...old, creationTimestamp: '2024-01-01T00:00:00.000Z', labels: { a: 'b' } }, old, ctx)).toEqual([]);
  });

  it.each([
    [{ ...old, name: 'b' }, 'metadata.name: Invalid value: "b": field is immutable'],
    [{ ...old, namespace: 'e' }, 'metadata.namespace: Invalid value: "e": field is immutable'],
    [{ ...old, uid: 'u2' }, 'metadata.uid: Invalid value: "u2": field is immutable'],
    [{ ...old, creationTimestamp: '2025-01-01T00:00:00Z' }, 'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable'],
    [{ ...old, deletionTimestamp: '2025-01-01T00:00:00Z' }, 'metadata.deletionTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable'],
    [{ ...old, deletionGracePeriodSeconds: 0 }, 'metadata.deletionGracePeriodSeconds: Invalid value: 0: field is immutable'],
    [{ ...old, generation: 1 }, 'metadata.generation: Invalid value: 1: must not be decremented'],
  ])('%j → %s', (meta, expected) => {
    expect(messages(validateObjectMetaUpdate(meta, old, ctx))).toContain(expected);
  });

  it('refuses new finalizers once deletion started, allows removing them', () => {
    const deleting = { ...old, deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['example.com/a'] };
    expect(messages(validateObjectMetaUpdate({ ...deleting, finalizers: ['example.com/a', 'example.com/b'] }, deleting, ctx))).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}',
    ]);
    expect(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting, ctx)).toEqual([]);
  });
});

describe('validateFieldManager', () => {
  it.each([
    ['kubectl-client-side-apply', []],
    ['with space ~!', []],
    ['', []],
    ['déjà-vu', []],
    ['tab\there', ['f: Invalid value: "tab\\there": invalid character U+0009 (at position 3)']],
    ['nul\u0000', ['f: Invalid value: "nul\\u0000": invalid character U+0000 (at position 3)']],
    ['é\u007f', ['f: Invalid value: "é\u007f": invalid character U+007F (at position 2)']],
    ['x'.repeat(129), ['f: Too long: may not be more than 128 bytes']],
  ])('%j', (manager, expected) => {
    expect(validateFieldManager(manager, 'f').map(formatFieldError)).toEqual(expected);
  });
});
