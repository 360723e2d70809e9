import { describe, it, expect } from 'vitest';
import { parseRequestInfo } from './request-info.js';

describe('parseRequestInfo', () => {
  const cases: Array<[method: string, url: string, expected: Partial<ReturnType<typeof parseRequestInfo>>]> = [
    ['GET', '/api/v1/namespaces', { isResourceRequest: true, verb: 'list', resource: 'namespaces', namespace: '' }],
    ['GET', '/api/v1/namespaces/default', { verb: 'get', resource: 'namespaces', name: 'default', namespace: 'default' }],
    ['PUT', '/api/v1/namespaces/ns1/finalize', { verb: 'update', resource: 'namespaces', name: 'ns1', subresource: 'finalize' }],
    ['GET', '/api/v1/namespaces/ns1/pods', { verb: 'list', namespace: 'ns1', resource: 'pods', apiGroup: '', apiVersion: 'v1' }],
    ['GET', '/api/v1/namespaces/ns1/pods?watch=true', { verb: 'watch', namespace: 'ns1', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/ns1/pods?watch=false', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/ns1/pods/p1', { verb: 'get', name: 'p1' }],
    ['GET', '/api/v1/namespaces/ns1/pods/p1?watch=1', { verb: 'watch', name: 'p1' }],
    ['GET', '/api/v1/watch/namespaces/ns1/pods', { verb: 'watch', namespace: 'ns1', resource: 'pods' }],
    ['GET', '/api/v1/pods', { verb: 'list', namespace: '', resource: 'pods' }],
    ['POST', '/api/v1/namespaces/ns1/pods', { verb: 'create', resource: 'pods' }],
    ['PUT', '/api/v1/namespaces/ns1/pods/p1/status', { verb: 'update', name: 'p1', subresource: 'status' }],
    ['PATCH', '/apis/apps/v1/namespaces/ns1/deployments/d/scale', { verb: 'patch', apiGroup: 'apps', subresource: 'scale' }],
    ['DELETE', '/apis/apps/v1/namespaces/ns1/deployments/d', { verb: 'delete', name: 'd' }],
    ['DELETE', '/apis/apps/v1/namespaces/ns1/deployments', { verb: 'deletecollection' }],
    ['GET', '/apis/rbac.authorization.cluster.io/v1/clusterroles', { verb: 'list', apiGroup: 'rbac.authorization.cluster.io', resource: 'clusterroles' }],
    ['GET', '/apis', { isResourceRequest: false, verb: 'get', apiPrefix: 'apis' }],
    ['GET', '/apis/apps', { isResourceRequest: false, apiGroup: 'apps' }],
    ['GET', '/apis/apps/v1', { isResourceRequest: false, apiGroup: 'apps', apiVersion: 'v1' }],
    ['GET', '/api', { isResourceRequest: false, apiPrefix: 'api' }],
    ['GET', '/api/v1', { isResourceRequest: false, apiVersion: 'v1' }],
    ['GET', '/healthz', { isResourceRequest: false, verb: 'get', path: '/healthz' }],
    ['POST', '/version', { isResourceRequest: false, verb: 'post' }],
    // Segments are decoded one by one; empty segments (doubled or trailing slashes) are skipped.
    ['GET', '/api/v1/namespaces/ns1/configmaps/a%3Ab', { verb: 'get', namespace: 'ns1', resource: 'configmaps', name: 'a:b' }],
    ['GET', '/api//v1/namespaces//ns1/pods/', { verb: 'list', namespace: 'ns1', resource: 'pods', name: '' }],
    ['GET', '/api/v1/namespaces/ns1/configmaps/%zz', { name: '%zz' }],
  ];
  it.each(cases)('%s %s', (method, url, expected) => {
    const u = new URL(url, 'https://x');
    expect(parseRequestInfo(method, u.pathname, u.searchParams)).toMatchObject(expected);
  });
});
