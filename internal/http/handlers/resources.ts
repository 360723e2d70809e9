// internal/http/handlers/resources owns dispatching a resource request to its verb handler
// (or, for the review kinds, to the review handler), and marking requests to deprecated versions
// (the one place: Warning, audit annotations and metric all come from ResourceInfo.deprecation).
// Imports: http handlers, schema/catalog (types).

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { handleBinding } from './binding.js';
import { handleCreate } from './create.js';
import { handleDelete } from './delete.js';
import { handleDeleteCollection } from './delete-collection.js';
import { handleEviction } from './eviction.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import { handlePatch } from './patch.js';
import { resolveResourceRequest } from './resource-request.js';
import { warningHeader } from '../respond.js';
import { handleReview, reviewKindOf } from './reviews.js';
import { handleTokenRequest } from './token-request.js';
import { handleUpdate } from './update.js';
import { handleWatch } from './watch.js';

export type VerbHandler = (c: Context<Env>, deps: HttpDeps, rr: ReturnType<typeof resolveResourceRequest>) => Promise<Response>;

/** Extra verb handlers (patch, connect, …) registered by later features. */
export const extraVerbHandlers = new Map<string, VerbHandler>();

/** Sub-resources that stream to or from a node agent, which this server does not run yet. */
const NODE_AGENT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy', 'log']);
/** Sub-resources that are a partial write of the object, handled by the registry. */
const PARTIAL_WRITE_SUBRESOURCES = new Set(['status', 'scale', 'finalize', 'ephemeralcontainers', 'resize', 'approval']);

/**
 * Spec §9.2 item 6, once per request: a request to a deprecated version gets its Warning, the
 * audit annotations (deprecated, removed-release when one is planned) and sets
 * apiserver_requested_deprecated_apis — all from the version's ResourceInfo.deprecation.
 */
function markDeprecated(c: Context<Env>, deps: HttpDeps, r: ResourceInfo, subresource: string): void {
  const d = r.deprecation;
  if (!d) return;
  // An explicitly empty deprecationWarning asks for no Warning; the version is still deprecated.
  if (d.warning) c.get('warnings').push(warningHeader(d.warning));
  c.get('audit')?.deprecated(d.removedRelease || undefined);
  deps.metrics?.deprecatedApiRequested({ group: r.group, version: r.version, resource: r.resource, subresource, removedRelease: d.removedRelease });
}

export async function handleResource(c: Context<Env>, deps: HttpDeps): Promise<Response> {
  // The review kinds are questions answered on POST, not stored objects: they never reach the
  // registry (reviews.ts routes them as upstream's create-only storage is routed).
  const info = c.get('info');
  let served = deps.catalog.resource(info.apiGroup, info.apiVersion, info.resource);
  if (deps.catchUp && (!served || (info.subresource && !served.subresources.has(info.subresource)))) {
    // A definition acknowledged through another replica may not be served here yet: a client
    // that waited for Established there must not be told 404 here.
    await deps.catchUp.wait();
    served = deps.catalog.resource(info.apiGroup, info.apiVersion, info.resource);
  }
  const review = served && reviewKindOf(served);
  if (served && review) {
    markDeprecated(c, deps, served, '');
    return handleReview(c, deps, served, review);
  }
  const rr = resolveResourceRequest(c, deps);
  const sub = rr.subresource?.name;
  // After resolving, so only a served subresource name reaches the metric's labels.
  markDeprecated(c, deps, rr.resource, sub ?? '');
  const isBinding = (sub === 'binding' || (!sub && rr.resource.resource === 'bindings' && rr.resource.group === '')) && rr.info.verb === 'create';
  if (isBinding) return handleBinding(c, deps, rr);
  if (sub === 'token' && rr.resource.resource === 'serviceaccounts' && rr.resource.group === '' && rr.info.verb === 'create') return handleTokenRequest(c, deps, rr);
  if (sub === 'eviction' && rr.resource.resource === 'pods' && rr.resource.group === '' && rr.info.verb === 'create') return handleEviction(c, deps, rr);
  if (sub && NODE_AGENT_SUBRESOURCES.has(sub)) {
    throw errors.serviceUnavailable(`${rr.resource.resource}/${sub} needs a node agent connection, which this server does not provide yet`);
  }
  if (sub && !PARTIAL_WRITE_SUBRESOURCES.has(sub)) {
    throw errors.methodNotSupported({ group: rr.resource.group, name: `${rr.resource.resource}/${sub}` }, c.req.method);
  }
  switch (rr.info.verb) {
    case 'get':
      return handleGet(c, deps, rr);
    case 'list':
      return handleList(c, deps, rr);
    case 'watch':
      return handleWatch(c, deps, rr);
    case 'create':
      return handleCreate(c, deps, rr);
    case 'update':
      return handleUpdate(c, deps, rr);
    case 'patch':
      return handlePatch(c, deps, rr);
    case 'delete':
      return handleDelete(c, deps, rr);
    case 'deletecollection':
      return handleDeleteCollection(c, deps, rr);
    default: {
      const extra = extraVerbHandlers.get(rr.info.verb);
      if (extra) return extra(c, deps, rr);
      throw errors.methodNotSupported({ group: rr.resource.group, name: rr.resource.resource }, c.req.method);
    }
  }
}
