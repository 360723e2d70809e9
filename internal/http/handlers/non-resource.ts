// internal/http/handlers/non-resource owns the paths that are not resources: /version, the
// health endpoints, discovery (/api, /apis, group and group-version documents, aggregated
// discovery) and /openapi. Imports: http, apierrors, health (types).

import type { Context } from 'hono';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { negotiate, type Offer } from '../negotiation.js';
import { groupNotFound } from './resource-request.js';
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_LEGACY } from '../../openapi/openapi-v2-proto.js';
import { wantsPretty } from '../respond.js';

/** A discovery document; indented for people (?pretty, curl), as upstream's negotiated writer. */
const json = (c: Context<Env>, value: unknown): Response =>
  new Response(wantsPretty(c) ? JSON.stringify(value, null, 2) : JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json' } });

/** Upstream's WriteRawJSON (/version, the root path list): always indented with two spaces. */
const rawJson = (value: unknown): Response =>
  new Response(JSON.stringify(value, null, 2), { status: 200, headers: { 'content-type': 'application/json' } });

const text = (body: string, status: number): Response =>
  new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } });

function serverAddress(c: Context<Env>): string {
  return c.req.header('host') ?? new URL(c.req.url).host;
}

type DiscoveryFormat = { kind: 'legacy' } | { kind: 'aggregated'; version: 'v2' | 'v2beta1'; group: string };

/**
 * Legacy or aggregated discovery, from Accept. Aggregated discovery is a representation, asked
 * for in the naming's group or in upstream's `apidiscovery.k8s.io` (stock kubectl hard-codes it):
 * both are answered, in the group asked for.
 */
function discoveryFormat(c: Context<Env>, deps: HttpDeps): DiscoveryFormat {
  const groups = new Set([deps.discovery.aggregatedGroup, 'apidiscovery.k8s.io']);
  const aggregated = (version: 'v2' | 'v2beta1'): Offer<DiscoveryFormat> => ({
    mediaType: 'application/json',
    value: { kind: 'aggregated', version, group: deps.discovery.aggregatedGroup },
    accepts: (r) => r.params.as === 'APIGroupDiscoveryList' && groups.has(r.params.g ?? '') && r.params.v === version,
  });
  const { offer, range } = negotiate<DiscoveryFormat>(c.req.header('accept'), [
    aggregated('v2'),
    aggregated('v2beta1'),
    { mediaType: 'application/json', value: { kind: 'legacy' } },
  ]);
  return offer.value.kind === 'aggregated' ? { ...offer.value, group: range.params.g! } : offer.value;
}

const etags = new WeakMap<Buffer, string>();
const gzipped = new WeakMap<Buffer, Buffer>();

/** The v2 document compressed once per build of it. */
function gzippedOpenApiV2(doc: Buffer): Buffer {
  let z = gzipped.get(doc);
  if (!z) gzipped.set(doc, (z = gzipSync(doc)));
  return z;
}

/** The quoted upper-case hex SHA-512 of `body`, as upstream's discovery and OpenAPI handlers tag them. */
export function etagOf(body: Buffer): string {
  let tag = etags.get(body);
  if (!tag) {
    tag = `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`;
    etags.set(body, tag);
  }
  return tag;
}

/**
 * A cacheable document: tagged with its ETag, and a 304 without a body when the client already
 * holds it (`If-None-Match`), as upstream serves aggregated discovery and OpenAPI documents.
 */
export function cacheable(c: Context<Env>, body: Buffer, headers: Record<string, string>): Response {
  const etag = etagOf(body);
  const all: Record<string, string> = { ...headers, etag };
  if (c.req.header('if-none-match') === etag) {
    delete all['content-type'];
    return new Response(null, { status: 304, headers: all });
  }
  return new Response(body, { status: 200, headers: all });
}

function aggregatedResponse(c: Context<Env>, deps: HttpDeps, prefix: 'api' | 'apis', version: 'v2' | 'v2beta1', group: string): Response {
  const body = { ...deps.discovery.aggregated(prefix, version), apiVersion: `${group}/${version}` };
  return cacheable(c, Buffer.from(JSON.stringify(body)), {
    'content-type': `application/json;g=${group};v=${version};as=APIGroupDiscoveryList`,
    vary: 'Accept',
    'cache-control': 'public',
  });
}

/** Answers a non-resource request, or undefined when the path is not one of ours. */
export async function handleNonResource(c: Context<Env>, deps: HttpDeps): Promise<Response | undefined> {
  const info = c.get('info');
  const path = info.path.replace(/\/+$/, '') || '/';
  const method = c.req.method;
  const health = /^\/(livez|readyz|healthz)(?:\/(.+))?$/.exec(path);
  if (health) {
    if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotSupported();
    const r = await deps.health.respond(health[1] as 'livez' | 'readyz' | 'healthz', health[2], c.get('query'));
    if (!r) throw errors.pathNotFound();
    return text(r.body, r.status);
  }
  if (method !== 'GET' && method !== 'HEAD') {
    if (path === '/version' || path === '/api' || path === '/apis' || path.startsWith('/api/') || path.startsWith('/apis/') || path.startsWith('/openapi')) {
      throw errors.methodNotSupported();
    }
    return undefined;
  }
  if (path === '/version') return rawJson(deps.version);
  // Discovery and OpenAPI describe what this replica serves, which follows definitions and
  // APIServices written through any replica: catch up first, so a client that waited for a
  // definition to be Established elsewhere finds it here (a content-addressed OpenAPI document
  // asked for by its hash does not change).
  if (deps.catchUp && (path === '/api' || path === '/apis' || path.startsWith('/api/') || path.startsWith('/apis/') || (path.startsWith('/openapi/') && !c.get('query').has('hash')))) {
    await deps.catchUp.wait();
  }
  if (path === '/metrics' && deps.metrics) {
    return new Response(await deps.metrics.text(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
  }
  if (path === '/api') {
    const f = discoveryFormat(c, deps);
    return f.kind === 'aggregated' ? aggregatedResponse(c, deps, 'api', f.version, f.group) : json(c, deps.discovery.apiVersions(serverAddress(c)));
  }
  if (path === '/apis') {
    const f = discoveryFormat(c, deps);
    return f.kind === 'aggregated' ? aggregatedResponse(c, deps, 'apis', f.version, f.group) : json(c, deps.discovery.apiGroupList());
  }
  if (info.apiPrefix === 'apis' && !info.isResourceRequest && info.parts.length === 0 && !info.apiVersion) {
    const group = deps.discovery.apiGroup(info.apiGroup);
    if (!group) throw groupNotFound(deps, info.apiGroup);
    return json(c, group);
  }
  if (info.apiPrefix !== '' && !info.isResourceRequest && info.apiVersion) {
    const list = deps.discovery.apiResourceList(info.apiGroup, info.apiVersion);
    if (!list) throw groupNotFound(deps, info.apiGroup);
    return json(c, list);
  }
  if (path === '/openapi/v2') {
    // JSON, or the gnostic protobuf form that client-go's OpenAPISchema() asks for alone.
    const offers: Array<Offer<'json' | 'protobuf'>> = [{ mediaType: 'application/json', value: 'json' }];
    if (deps.openapi.v2Protobuf) offers.push({ mediaType: OPENAPI_V2_PROTOBUF, value: 'protobuf' }, { mediaType: OPENAPI_V2_PROTOBUF_LEGACY, value: 'protobuf' });
    const format = negotiate(c.req.header('accept'), offers).offer.value;
    const doc = format === 'protobuf' ? deps.openapi.v2Protobuf!() : deps.openapi.v2();
    const res = cacheable(c, doc, { 'content-type': format === 'protobuf' ? OPENAPI_V2_PROTOBUF : 'application/json', vary: 'Accept' });
    // kube-openapi wraps the v2 handler in a gzip handler (1400-byte minimum): the 1.5 MB
    // document goes out compressed to clients that accept it.
    if (res.status !== 200 || !/\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) return res;
    const headers = new Headers(res.headers);
    headers.set('content-encoding', 'gzip');
    headers.set('vary', 'Accept, Accept-Encoding');
    return new Response(gzippedOpenApiV2(doc), { status: 200, headers });
  }
  if (path === '/openapi/v3') return cacheable(c, deps.openapi.v3Index(), { 'content-type': 'application/json' });
  if (path.startsWith('/openapi/v3/')) {
    const gv = path.slice('/openapi/v3/'.length).replace(/^\/+|\/+$/g, '');
    const doc = deps.openapi.v3(gv);
    if (!doc) throw errors.pathNotFound();
    // Only JSON is served (upstream also offers the gnostic protobuf form): anything else is a 406.
    negotiate(c.req.header('accept'), [{ mediaType: 'application/json', value: 'json' }]);
    const etag = etagOf(doc);
    const hash = c.get('query').get('hash');
    if (hash) {
      // A hash that is not the document's (it changed since the client read the index) is
      // redirected to the current one, as upstream does, rather than served as immutable.
      if (`"${hash}"` !== etag) {
        return new Response(null, { status: 301, headers: { location: `/openapi/v3/${gv}?hash=${etag.slice(1, -1)}` } });
      }
      return cacheable(c, doc, {
        'content-type': 'application/json',
        vary: 'Accept',
        'cache-control': 'public, immutable',
        expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString(),
      });
    }
    return cacheable(c, doc, { 'content-type': 'application/json', vary: 'Accept', 'cache-control': 'no-cache, private' });
  }
  if (path === '/') {
    // Upstream lists every registered path: the health checks one by one, /metrics, /openapi/v3/.
    const paths = ['/api', '/api/v1', '/apis', '/apis/', ...deps.health.paths(), '/openapi/v2', '/openapi/v3', '/openapi/v3/', '/version'];
    if (deps.metrics) paths.push('/metrics');
    for (const g of deps.catalog.groups()) if (g.name) paths.push(`/apis/${g.name}`, ...g.versions.map((v) => `/apis/${g.name}/${v}`));
    return rawJson({ paths: paths.sort() });
  }
  return undefined;
}
