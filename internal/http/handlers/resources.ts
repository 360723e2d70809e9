// internal/http/handlers/resources owns dispatching a resource request to its verb handler
// (or, for the review kinds, to the review handler).
// Imports: http handlers.

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { handleBinding } from './binding.js';
import { handleCreate } from './create.js';
import { handleDelete } from './delete.js';
import { handleDeleteCollection } from './delete-collection.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import { handlePatch } from './patch.js';
import { resolveResourceRequest } from './resource-request.js';
import { warningHeader } from '../respond.js';
import { handleReview, reviewKindOf } from './reviews.js';
import { handleUpdate } from './update.js';
import { handleWatch } from './watch.js';

export type VerbHandler = (c: Context<Env>, deps: HttpDeps, rr: ReturnType<typeof resolveResourceRequest>) => Promise<Response>;

/** Extra verb handlers (patch, connect, …) registered by later features. */
export const extraVerbHandlers = new Map<string, VerbHandler>();

/** Sub-resources that stream to or from a node agent, which this server does not run yet. */
const NODE_AGENT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy', 'log']);
/** Sub-resources that are a partial write of the object, handled by the registry. */
const PARTIAL_WRITE_SUBRESOURCES = new Set(['status', 'scale', 'finalize', 'ephemeralcontainers', 'resize', 'approval']);

export async function handleResource(c: Context<Env>, deps: HttpDeps): Promise<Response> {
  // The review kinds are questions answered on POST, not stored objects: they never reach the
  // registry (reviews.ts routes them as upstream's create-only storage is routed).
  const info = c.get('info');
  const served = deps.catalog.resource(info.apiGroup, info.apiVersion, info.resource);
  const review = served && reviewKindOf(served);
  if (served && review) return handleReview(c, deps, served, review);
  const rr = resolveResourceRequest(c, deps);
  const sub = rr.subresource?.name;
  const deprecation = rr.resource.deprecation;
  if (deprecation) {
    // Spec §9.2 item 6: a deprecated version's requests get its Warning and set the metric.
    c.get('warnings').push(warningHeader(deprecation.warning));
    deps.metrics?.deprecatedApiRequested({ group: rr.resource.group, version: rr.resource.version, resource: rr.resource.resource, subresource: sub ?? '', removedRelease: deprecation.removedRelease });
  }
  const isBinding = (sub === 'binding' || (!sub && rr.resource.resource === 'bindings' && rr.resource.group === '')) && rr.info.verb === 'create';
  if (isBinding) return handleBinding(c, deps, rr);
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
