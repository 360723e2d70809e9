// Cache validation of discovery and OpenAPI documents (ETag, If-None-Match, stale hashes) against a real server.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '../../testserver/test-server.js';
import { decodeOpenApiV2, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_LEGACY } from '../../openapi/openapi-v2-proto.js';

const AGGREGATED = 'application/json;g=apidiscovery.cluster.io;v=v2;as=APIGroupDiscoveryList';

let t: TestServer;
let appsDoc: string;
beforeAll(async () => {
  t = await startTestServer();
  const index = (await t.admin.get('/openapi/v3')).json<{ paths: Record<string, { serverRelativeURL: string }> }>();
  appsDoc = index.paths['apis/apps/v1']!.serverRelativeURL;
});
afterAll(() => t.stop());

describe('cacheable documents', () => {
  it.each([
    ['aggregated discovery /apis', '/apis', AGGREGATED, 'public'],
    ['aggregated discovery /api', '/api', AGGREGATED, 'public'],
    ['the OpenAPI v3 index', '/openapi/v3', undefined, undefined],
    ['an OpenAPI v3 document by hash', 'APPS', undefined, 'public, immutable'],
    ['an OpenAPI v3 document without hash', '/openapi/v3/apis/apps/v1', undefined, 'no-cache, private'],
    ['the OpenAPI v2 document', '/openapi/v2', undefined, undefined],
    ['the OpenAPI v2 document in protobuf', '/openapi/v2', OPENAPI_V2_PROTOBUF_LEGACY, undefined],
  ])('%s carries an ETag and answers a matching If-None-Match with 304', async (_name, rawPath, accept, cacheControl) => {
    const path = rawPath === 'APPS' ? appsDoc : rawPath;
    const headers: Record<string, string> = accept ? { accept } : {};
    const first = await t.admin.get(path, headers);
    expect(first.status).toBe(200);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    if (cacheControl) expect(first.headers['cache-control']).toBe(cacheControl);
    const again = await t.admin.get(path, { ...headers, 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text()).toBe('');
    expect(again.headers.etag).toBe(etag);
    const other = await t.admin.get(path, { ...headers, 'if-none-match': '"0"' });
    expect(other.status).toBe(200);
  });

  it('tags an OpenAPI v3 document with the hash its index names', async () => {
    const res = await t.admin.get(appsDoc);
    expect(res.headers.etag).toBe(`"${appsDoc.split('hash=')[1]}"`);
    expect(res.headers.vary).toBe('Accept');
  });

  it('redirects an OpenAPI v3 request with a stale hash to the current one, as upstream', async () => {
    const res = await t.admin.get('/openapi/v3/apis/apps/v1?hash=0123');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe(appsDoc);
  });

  it.each([
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'gzip'],
    [undefined, undefined],
  ])('serves the OpenAPI v2 document with Accept-Encoding %j compressed as %j', async (acceptEncoding, encoding) => {
    const res = await t.admin.get('/openapi/v2', acceptEncoding ? { 'accept-encoding': acceptEncoding } : {});
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(encoding);
    if (encoding) expect(JSON.parse(gunzipSync(res.body).toString()).swagger).toBe('2.0');
  });

  it.each([OPENAPI_V2_PROTOBUF_LEGACY, OPENAPI_V2_PROTOBUF])('serves the OpenAPI v2 document as gnostic protobuf for Accept %s, with the JSON form\'s content', async (accept) => {
    const res = await t.admin.get('/openapi/v2', { accept });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(OPENAPI_V2_PROTOBUF);
    const json = (await t.admin.get('/openapi/v2')).json<{ swagger: string; definitions: Record<string, unknown>; paths: Record<string, unknown> }>();
    expect(res.headers.etag).not.toBe((await t.admin.get('/openapi/v2')).headers.etag);
    const doc = decodeOpenApiV2(res.body) as { swagger: string; definitions: { additional_properties: Array<{ name: string; value: Record<string, any> }> }; paths: { path: Array<{ name: string }> } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded messages are free-form
    expect(doc.swagger).toBe('2.0');
    expect(doc.definitions.additional_properties.map((d) => d.name)).toEqual(Object.keys(json.definitions));
    expect(doc.paths.path.map((p) => p.name)).toEqual(Object.keys(json.paths));
    const deployment = doc.definitions.additional_properties.find((d) => d.name === 'io.k8s.api.apps.v1.Deployment')!.value;
    const gvk = deployment.vendor_extension.find((e: { name: string }) => e.name === 'x-kubernetes-group-version-kind');
    expect(JSON.parse(gvk.value.yaml)).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    expect(deployment.properties.additional_properties.find((p: { name: string }) => p.name === 'spec').value._ref).toBe('#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
    // A gzip-accepting client gets it compressed too.
    const zipped = await t.admin.get('/openapi/v2', { accept, 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(res.body)).toBe(true);
  });

  it('answers 406 to an OpenAPI v2 request for neither JSON nor protobuf', async () => {
    expect((await t.admin.get('/openapi/v2', { accept: 'application/yaml' })).status).toBe(406);
  });

  it('answers 406 when the OpenAPI v3 document is asked for only in a form it is not served in', async () => {
    expect((await t.admin.get(appsDoc, { accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf' })).status).toBe(406);
    expect((await t.admin.get(appsDoc, { accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf, application/json' })).status).toBe(200);
  });
});

describe('raw JSON documents', () => {
  it('answers /version indented, with the emulated and minimum compatibility versions, as upstream 1.33+', async () => {
    const res = await t.admin.get('/version');
    expect(res.text()).toMatch(/^\{\n {2}"major": "1",\n {2}"minor": "35",\n/);
    expect(res.json()).toMatchObject({ emulationMajor: '1', emulationMinor: '35', minCompatibilityMajor: '1', minCompatibilityMinor: '34', gitVersion: 'v1.35.0' });
  });

  it('lists the root paths indented, each health check among them', async () => {
    const res = await t.admin.get('/');
    expect(res.text()).toMatch(/^\{\n {2}"paths": \[\n {4}"\/api",\n/);
    const paths = res.json<{ paths: string[] }>().paths;
    expect(paths).toEqual([...paths].sort());
    expect(paths).toEqual(expect.arrayContaining(['/apis/', '/healthz/ping', '/livez/log', '/readyz/shutdown', '/openapi/v3/', '/version']));
  });
});
