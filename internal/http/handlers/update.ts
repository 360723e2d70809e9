// internal/http/handlers/update owns PUT on an object and on its status, finalize and scale
// sub-resources: 200 with the stored object, 201 when the PUT created it.
// Imports: http, registry, write-body, scale.

import type { Context } from 'hono';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { chooseRepresentation, writeObject, writeStored } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';
import { applyScale, SCALE_SCHEMA, scaleOf } from './scale.js';
import { readWriteBody } from './write-body.js';

export async function handleUpdate(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const sub = rr.subresource;
  if (sub?.name === 'scale') {
    const scale = await readWriteBody(c, deps, rr, { apiVersion: `${sub.group}/${sub.version}`, kind: sub.kind });
    const current = await rr.registry.get(rr.resource, rr.namespace, rr.info.name, { kind: 'consistent' });
    const next = applyScale(rr.resource, current, scale);
    const { object } = await rr.registry.update(rr.resource, rr.ctx, rr.info.name, next, 'scale');
    return writeObject(c, deps, rep, rr.resource, scaleOf(rr.resource, object, deps.naming), 200, SCALE_SCHEMA);
  }
  const obj = await readWriteBody(c, deps, rr, { apiVersion: rr.resource.apiVersion, kind: rr.resource.kind });
  // The decoded body is ours alone: the registry may write into it instead of copying it.
  const { object, created } = await rr.registry.update(rr.resource, rr.ctx, rr.info.name, obj, sub?.name ?? '', { handedOver: true });
  return writeStored(c, deps, rep, rr.resource, rr.registry, rr.namespace, object, created ? 201 : 200, rr.ctx.dryRun);
}
