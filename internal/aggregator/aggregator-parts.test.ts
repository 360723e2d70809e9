// The aggregation layer's pure parts: APIService validation as upstream words it, the
// forwarded headers, built-in priorities, the Available condition's transitions and the OpenAPI
// v2 merge.
import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../apierrors/field-errors.js';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { validateAPIService } from './apiservice-validation.js';
import { builtinPriority, localApiServices } from './autoregister.js';
import { withAvailability } from './availability.js';
import { mergeV2 } from './openapi.js';
import { forwardedHeaders } from './proxy.js';

const naming = createNaming('kubernetes');
const ctx = { resource: {} as ResourceInfo, naming };
const validate = (spec: Record<string, unknown>, name = `${String(spec.version)}.${String(spec.group)}`) =>
  validateAPIService({ metadata: { name }, spec }, undefined, ctx).map(formatFieldError);
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n').toString('base64');

describe('APIService validation', () => {
  const remote = { group: 'metrics.example.com', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 10, service: { namespace: 'kube-system', name: 'metrics', port: 443 }, caBundle: CA };

  it('accepts a local and a remote APIService', () => {
    expect(validate({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 })).toEqual([]);
    expect(validate({ group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 }, 'v1.')).toEqual([]);
    expect(validate(remote)).toEqual([]);
  });

  it('refuses names, groups and versions as upstream does', () => {
    expect(validate(remote, 'v1.metrics.example.com')).toEqual(['metadata.name: Invalid value: "v1.metrics.example.com": must be `spec.version+"."+spec.group`: "v1beta1.metrics.example.com"']);
    expect(validate({ ...remote, group: '' }, 'v1beta1.')).toEqual(['spec.group: Required value: only v1 may have an empty group and it better be legacy kube']);
    expect(validate({ ...remote, group: 'Bad_Group' })[0]).toMatch(/^spec\.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain/);
    expect(validate({ ...remote, version: '1x' })[0]).toMatch(/^spec\.version: Invalid value: "1x": a DNS-1035 label/);
  });

  it('bounds the priorities', () => {
    expect(validate({ ...remote, groupPriorityMinimum: 20001, versionPriority: 0 })).toEqual([
      'spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000',
      'spec.versionPriority: Invalid value: 0: must be positive and less than 1000',
    ]);
  });

  it('keeps TLS settings off local APIServices and apart from each other', () => {
    expect(validate({ group: 'x.io', version: 'v1', groupPriorityMinimum: 1, versionPriority: 1, caBundle: CA, insecureSkipTLSVerify: true })).toEqual([
      `spec.caBundle: Invalid value: "${Buffer.from(CA, 'base64').length} bytes": local APIServices may not have a caBundle`,
      'spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify',
    ]);
    expect(validate({ ...remote, insecureSkipTLSVerify: true })).toEqual(['spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present']);
    expect(validate({ ...remote, service: { port: 70000 } })).toEqual([
      'spec.service.namespace: Required value',
      'spec.service.name: Required value',
      'spec.service.port: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
  });
});

describe('forwarded headers', () => {
  it('drops credentials, hop-by-hop and identity headers, and adds the caller identity', () => {
    const h = forwardedHeaders(
      {
        accept: 'application/json',
        authorization: 'Bearer secret',
        'impersonate-user': 'root',
        'x-remote-user': 'forged',
        'x-remote-group': 'system:masters',
        connection: 'keep-alive',
        host: 'clusterd',
        ':path': '/apis/x',
        'user-agent': 'kubectl',
      },
      { name: 'jane', groups: ['dev', 'system:authenticated'], extra: { 'acme.com/project': ['apollo', 'gemini'], scopes: ['a'] } },
    );
    expect(h).toEqual({
      accept: 'application/json',
      'user-agent': 'kubectl',
      'X-Remote-User': 'jane',
      'X-Remote-Group': ['dev', 'system:authenticated'],
      'X-Remote-Extra-acme.com%2Fproject': ['apollo', 'gemini'],
      'X-Remote-Extra-scopes': ['a'],
    });
  });
});

describe('local APIServices', () => {
  it('gives upstream priorities, by stability where upstream names none', () => {
    expect(builtinPriority('', 'v1')).toEqual({ groupPriorityMinimum: 18000, versionPriority: 1 });
    expect(builtinPriority('autoscaling', 'v2')).toEqual({ groupPriorityMinimum: 17500, versionPriority: 30 });
    expect(builtinPriority('storage.k8s.io', 'v1beta1')).toEqual({ groupPriorityMinimum: 16800, versionPriority: 9 });
    expect(builtinPriority('resource.k8s.io', 'v1alpha3')).toEqual({ groupPriorityMinimum: 16200, versionPriority: 1 });
  });

  it('names one per built-in group/version in the naming', () => {
    const cluster = createNaming('cluster');
    const all = localApiServices(new ApiCatalog(cluster), cluster);
    expect(all.get('v1.')).toMatchObject({ apiVersion: 'apiregistration.cluster.io/v1', spec: { group: '', version: 'v1', service: null }, metadata: { labels: { 'kube-aggregator.cluster.io/automanaged': 'onstart' } } });
    expect(all.get('v1.rbac.authorization.cluster.io')).toMatchObject({ spec: { group: 'rbac.authorization.cluster.io', groupPriorityMinimum: 17000, versionPriority: 15 } });
    expect([...all.keys()].some((n) => n.endsWith('.k8s.io'))).toBe(false);
  });
});

describe('the Available condition', () => {
  const now = new Date('2026-01-02T03:04:05.678Z');
  it('keeps the transition time while the status holds, and reports no change when nothing changed', () => {
    const first = withAvailability({ metadata: { name: 'v1.x' } }, { status: 'False', reason: 'ServiceNotFound', message: 'm1' }, now)!;
    expect((first.status as { conditions: unknown[] }).conditions).toEqual([{ type: 'Available', status: 'False', lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'ServiceNotFound', message: 'm1' }]);
    expect(withAvailability(first, { status: 'False', reason: 'ServiceNotFound', message: 'm1' }, new Date())).toBeUndefined();
    const later = new Date('2026-01-02T04:00:00Z');
    const reason = withAvailability(first, { status: 'False', reason: 'MissingEndpoints', message: 'm2' }, later)!;
    expect((reason.status as { conditions: Array<{ lastTransitionTime: string }> }).conditions[0]!.lastTransitionTime).toBe('2026-01-02T03:04:05Z');
    const flipped = withAvailability(reason, { status: 'True', reason: 'Passed', message: 'all checks passed' }, later)!;
    expect((flipped.status as { conditions: Array<{ lastTransitionTime: string }> }).conditions[0]!.lastTransitionTime).toBe('2026-01-02T04:00:00Z');
  });
});

describe('OpenAPI v2 merge', () => {
  it("adds an extension's paths under its group/version and its definitions; ours win", () => {
    const base = { swagger: '2.0', paths: { '/api/v1/pods': { get: {} } }, definitions: { 'io.k8s.Pod': { type: 'object' } } };
    const doc = {
      apiService: 'v1.x.io',
      group: 'x.io',
      version: 'v1',
      groupPriorityMinimum: 1,
      versionPriority: 1,
      resources: [],
      stale: false,
      openapiV3: undefined,
      openapiV2: { paths: { '/apis/x.io/v1/things': { get: {} }, '/api/v1/pods': { get: { hijacked: true } }, '/apis/other/v1/x': {} }, definitions: { 'io.x.Thing': { type: 'object' }, 'io.k8s.Pod': { hijacked: true } } },
    };
    expect(mergeV2(base, [doc])).toEqual({
      swagger: '2.0',
      paths: { '/api/v1/pods': { get: {} }, '/apis/x.io/v1/things': { get: {} } },
      definitions: { 'io.k8s.Pod': { type: 'object' }, 'io.x.Thing': { type: 'object' } },
    });
  });
});
