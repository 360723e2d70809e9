// internal/http/handlers/create owns POST on a collection: decode, check, create through the
// registry (admission, validation, store), answer 200 with the created object (spec §4.4
// item 5). Imports: http, write-body.

import type { Context } from 'hono';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { chooseRepresentation, writeObject, writeStored } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';
import { readWriteBody } from './write-body.js';

export async function handleCreate(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const obj = await readWriteBody(c, deps, rr, { apiVersion: rr.resource.apiVersion, kind: rr.resource.kind });
  const created = await rr.registry.create(rr.resource, rr.ctx, obj, { postedBody: true });
  return writeStored(c, deps, rep, rr.resource, rr.registry, rr.namespace, created, 200, rr.ctx.dryRun);
}
