// Request labels as upstream's metrics report them: the route verb (POST, PUT, APPLY, CONNECT…),
// scope, dry_run, component; and which requests are long-running or mutating.
import { describe, expect, it } from 'vitest';
import { isLongRunning, requestKind, requestLabels, type RequestFacts } from './request-labels.js';

const facts = (f: Partial<RequestFacts>): RequestFacts => ({
  isResourceRequest: true,
  verb: 'get',
  path: '/api/v1/pods',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: '',
  resource: 'pods',
  subresource: '',
  name: '',
  ...f,
});

describe('request labels', () => {
  it.each<[string, Partial<RequestFacts>, string, string | undefined, string, Record<string, string>]>([
    ['list across namespaces', { verb: 'list' }, 'GET', undefined, '', { verb: 'LIST', scope: 'cluster' }],
    ['list in a namespace', { verb: 'list', namespace: 'a' }, 'GET', undefined, '', { verb: 'LIST', scope: 'namespace' }],
    ['get', { verb: 'get', namespace: 'a', name: 'p' }, 'GET', undefined, '', { verb: 'GET', scope: 'resource' }],
    ['watch', { verb: 'watch', namespace: 'a' }, 'GET', undefined, 'watch=true', { verb: 'WATCH', scope: 'namespace' }],
    ['create (scope resource, as upstream)', { verb: 'create', namespace: 'a' }, 'POST', 'application/json', '', { verb: 'POST', scope: 'resource' }],
    ['dry-run create', { verb: 'create', namespace: 'a' }, 'POST', 'application/json', 'dryRun=All', { verb: 'POST', dry_run: 'All' }],
    ['invalid dryRun value', { verb: 'create', namespace: 'a' }, 'POST', 'application/json', 'dryRun=Some', { dry_run: 'invalid' }],
    ['update', { verb: 'update', namespace: 'a', name: 'p' }, 'PUT', 'application/json', '', { verb: 'PUT' }],
    ['patch', { verb: 'patch', namespace: 'a', name: 'p' }, 'PATCH', 'application/merge-patch+json', '', { verb: 'PATCH' }],
    ['server-side apply', { verb: 'patch', namespace: 'a', name: 'p' }, 'PATCH', 'application/apply-patch+yaml', '', { verb: 'APPLY' }],
    ['delete collection', { verb: 'deletecollection', namespace: 'a' }, 'DELETE', undefined, '', { verb: 'DELETECOLLECTION', scope: 'namespace' }],
    ['exec', { verb: 'create', namespace: 'a', name: 'p', subresource: 'exec' }, 'POST', undefined, '', { verb: 'CONNECT', subresource: 'exec' }],
    ['status', { verb: 'update', namespace: 'a', name: 'p', subresource: 'status' }, 'PUT', 'application/json', '', { verb: 'PUT', subresource: 'status', component: 'apiserver' }],
  ])('%s', (_what, f, method, contentType, query, expected) => {
    expect(requestLabels(facts(f), method, contentType, new URLSearchParams(query))).toMatchObject(expected);
  });

  it.each([
    ['/livez', '/livez'],
    ['/readyz/etcd', '/readyz/etcd'],
    ['/version', ''],
    ['/apis', ''],
  ])('non-resource %s: subresource %j, no component', (path, subresource) => {
    expect(requestLabels(facts({ isResourceRequest: false, verb: 'get', path, resource: '', apiVersion: '' }), 'GET', undefined, new URLSearchParams())).toEqual({
      verb: 'GET',
      dry_run: '',
      group: '',
      version: '',
      resource: '',
      subresource,
      scope: '',
      component: '',
    });
  });

  it.each<[Partial<RequestFacts>, boolean, 'readOnly' | 'mutating']>([
    [{ verb: 'watch' }, true, 'readOnly'],
    [{ verb: 'get', subresource: 'log', name: 'p' }, true, 'readOnly'],
    [{ verb: 'create', subresource: 'exec', name: 'p' }, true, 'mutating'],
    [{ verb: 'list' }, false, 'readOnly'],
    [{ verb: 'create' }, false, 'mutating'],
    [{ isResourceRequest: false, verb: 'post', path: '/x' }, false, 'mutating'],
  ])('%j: long-running %s, %s', (f, longRunning, kind) => {
    expect(isLongRunning(facts(f))).toBe(longRunning);
    expect(requestKind(facts(f))).toBe(kind);
  });
});
