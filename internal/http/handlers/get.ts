// internal/http/handlers/get owns GET on one object (and its status or scale sub-resource),
// with the get column of the resourceVersion table (unset = most recent, 0 = any, n = not
// older than n). Imports: http, registry, scale.

import type { Context } from 'hono';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { getReadMode } from '../list-options.js';
import { chooseEncoder, objectResponse } from '../respond.js';
import type { ResourceRequest } from './resource-request.js';
import { scaleOf } from './scale.js';

export async function handleGet(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const encoder = chooseEncoder(c, deps.encoders);
  const obj = await rr.registry.get(rr.resource, rr.namespace, rr.info.name, getReadMode(rr.query));
  if (rr.subresource?.name === 'scale') return objectResponse(c, encoder, scaleOf(rr.resource, obj, deps.naming));
  return objectResponse(c, encoder, obj);
}
