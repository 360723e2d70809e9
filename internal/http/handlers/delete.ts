// internal/http/handlers/delete owns DELETE on an object: DeleteOptions from the body or the
// query, then 200 with a Success Status (or the object, for kinds that return it) when the
// object is gone, or 200 with the terminating object while finalizers or a grace period hold
// it (202 when orphanDependents=false was asked, as upstream).
// Imports: http, registry.

import type { Context } from 'hono';
import { requestBody, type Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { decodeObjectBody } from '../body.js';
import { readDeleteOptions, type DeleteOptions } from '../../registry/delete-options.js';
import { successStatus } from '../respond.js';
import { chooseRepresentation, META_SCHEMA, writeObject } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';

export async function readDeleteRequest(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<DeleteOptions> {
  const bytes = await requestBody(c);
  const body = bytes.length > 0 ? decodeObjectBody(bytes, c.req.header('content-type'), deps.decoders, `${META_SCHEMA}DeleteOptions`).value : undefined;
  return readDeleteOptions(body, rr.query);
}

export async function handleDelete(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const options = await readDeleteRequest(c, deps, rr);
  const ctx = { ...rr.ctx, dryRun: rr.ctx.dryRun || options.dryRun };
  const { object, deleted } = await rr.registry.delete(rr.resource, ctx, rr.info.name, options);
  if (!deleted) return writeObject(c, deps, rep, rr.resource, object, options.orphanDependents === false ? 202 : 200);
  if (rr.registry.strategy.returnDeletedObject) return writeObject(c, deps, rep, rr.resource, object, 200);
  const meta = (object.metadata ?? {}) as Record<string, unknown>;
  const details: Record<string, unknown> = { name: rr.info.name };
  if (rr.resource.group) details.group = rr.resource.group;
  details.kind = rr.resource.resource;
  if (meta.uid) details.uid = meta.uid;
  return writeObject(c, deps, rep, rr.resource, successStatus(details), 200, `${META_SCHEMA}Status`);
}
