// internal/http/handlers/resources owns dispatching a resource request to its verb handler.
// Imports: http handlers.

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { handleCreate } from './create.js';
import { handleDelete } from './delete.js';
import { handleDeleteCollection } from './delete-collection.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import { handlePatch } from './patch.js';
import { resolveResourceRequest } from './resource-request.js';
import { handleUpdate } from './update.js';
import { handleWatch } from './watch.js';

export type VerbHandler = (c: Context<Env>, deps: HttpDeps, rr: ReturnType<typeof resolveResourceRequest>) => Promise<Response>;

/** Extra verb handlers (patch, connect, …) registered by later features. */
export const extraVerbHandlers = new Map<string, VerbHandler>();

export async function handleResource(c: Context<Env>, deps: HttpDeps): Promise<Response> {
  const rr = resolveResourceRequest(c, deps);
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
