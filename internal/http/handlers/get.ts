// internal/http/handlers/get owns GET on one object (and its status or scale sub-resource),
// with the get column of the resourceVersion table (unset = most recent, 0 = any, n = not
// older than n). Imports: http, registry, scale.

import type { Context } from 'hono';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { getReadMode } from '../list-options.js';
import { chooseRepresentation, writeEntry, writeObject } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';
import { SCALE_TABLE } from '../../printers/index.js';
import { SCALE_SCHEMA, scaleOf } from './scale.js';

export async function handleGet(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const isScale = rr.subresource?.name === 'scale';
  // A built-in scale sub-resource answers Tables of its Scale (upstream's ScaleREST converts
  // with printScale) and PartialObjectMetadata; a custom resource's scale stays plain.
  const builtinScale = isScale && !rr.resource.custom;
  const rep = chooseRepresentation(c, deps, rr.resource, isScale && !builtinScale ? 'write' : 'object');
  // The common case writes the cache's serving bytes as they are (JSON), or its memoised
  // encoding in another format.
  if (!isScale && rep.view === 'full' && rr.registry.servesStoredShape(rr.resource)) {
    const entry = await rr.registry.getEntryFor(rr.resource, rr.namespace, rr.info.name, getReadMode(rr.query));
    return writeEntry(c, deps, rep, rr.resource, entry);
  }
  const obj = await rr.registry.get(rr.resource, rr.namespace, rr.info.name, getReadMode(rr.query));
  if (isScale) return writeObject(c, deps, rep, rr.resource, scaleOf(rr.resource, obj, deps.naming), 200, SCALE_SCHEMA, SCALE_TABLE);
  return writeObject(c, deps, rep, rr.resource, obj);
}
