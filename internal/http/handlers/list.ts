// internal/http/handlers/list owns GET on a collection: the list column of the
// resourceVersion table, limit/continue chunking with one revision across chunks, selectors,
// and writing the list in the negotiated encoding (cached bytes for JSON).
// Imports: http, registry, list-options, selection.

import type { Context } from 'hono';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { encodeContinue, listParams } from '../list-options.js';
import { chooseRepresentation, writeList } from '../representations.js';
import type { Item } from '../serializers.js';
import type { ResourceRequest } from './resource-request.js';
import { ExpiredContinueError } from '../../registry/generic-registry.js';
import { selectionFor } from './selection.js';

export async function handleList(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'list');
  const params = listParams(rr.query);
  const selection = selectionFor(rr.resource, rr.query);
  let result;
  try {
    result = await rr.registry.list({
      mode: params.mode,
      namespace: rr.namespace,
      filter: selection.filter,
      hasSelector: selection.hasSelector,
      limit: params.limit,
      continueFrom: params.continueFrom,
    });
  } catch (e) {
    // An expired token answers 410 with a token for the (inconsistent) rest of the list.
    if (e instanceof ExpiredContinueError) e.status.metadata = { continue: encodeContinue({ revision: -1, afterKey: e.afterKey }) };
    throw e;
  }
  let items: Item[];
  if (rr.registry.servesStoredShape(rr.resource)) items = result.entries.map((entry) => ({ entry }));
  else {
    // One conversion for the page: a conversion webhook gets one ConversionReview for it.
    const objs = rr.registry.toVersionAll(rr.resource, result.entries.map((entry) => JSON.parse(entry.bytes.toString('utf8')) as Record<string, unknown>));
    items = (objs instanceof Promise ? await objs : objs).map((object) => ({ object }));
  }
  const meta: { resourceVersion: string; continue?: string; remainingItemCount?: number } = { resourceVersion: String(result.revision) };
  if (result.continueAfterKey !== undefined) meta.continue = encodeContinue({ revision: result.revision, afterKey: result.continueAfterKey });
  if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
  return writeList(c, deps, rep, rr.resource, meta, items);
}
