// internal/http/handlers/delete-collection owns DELETE on a collection: the objects the
// selectors pick (in the URL's namespace) are deleted one by one with the same options; the
// answer is the list of what was deleted. Imports: http, registry, selection, delete.

import type { Context } from 'hono';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { listParams } from '../list-options.js';
import { chooseRepresentation, writeList } from '../representations.js';
import { readDeleteRequest } from './delete.js';
import type { ResourceRequest } from './resource-request.js';
import { selectionFor } from './selection.js';

export async function handleDeleteCollection(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const options = await readDeleteRequest(c, deps, rr);
  const selection = selectionFor(rr.resource, rr.query);
  const params = listParams(rr.query);
  const ctx = { ...rr.ctx, dryRun: rr.ctx.dryRun || options.dryRun };
  const { revision, items } = await rr.registry.deleteCollection(
    rr.resource,
    ctx,
    { mode: params.mode, namespace: rr.namespace, filter: selection.filter, hasSelector: selection.hasSelector, limit: 0 },
    options,
  );
  return writeList(c, deps, rep, rr.resource, { resourceVersion: String(revision) }, items.map((object) => ({ object })));
}
