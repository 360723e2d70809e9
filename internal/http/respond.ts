// internal/http/respond owns writing responses: Status errors (the one place an error becomes
// HTTP), negotiated objects and lists, success Statuses, and the `Warning:` header. Handlers
// build values; this module turns them into bytes and headers.
// Imports: apierrors, encoders, negotiation, context.

import type { Context } from 'hono';
import { errors, isStatusError, type Status, type StatusError } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import type { Env } from './context.js';
import { jsonEncoder, type Encoder, type Item, type ListMeta } from './encoders.js';
import { negotiate } from './negotiation.js';

/** Formats a warning as upstream sends it: `299 - "text"`. */
export const warningHeader = (text: string): string => `299 - ${JSON.stringify(text)}`;

function baseHeaders(c: Context<Env>, contentType: string): Headers {
  const h = new Headers({ 'content-type': contentType, 'cache-control': 'no-cache, private' });
  for (const w of c.get('warnings') ?? []) h.append('warning', w);
  return h;
}

export function chooseEncoder(c: Context<Env>, encoders: readonly Encoder[]): Encoder {
  return negotiate(c.req.header('accept'), encoders.map((e) => ({ mediaType: e.mediaType, value: e }))).offer.value;
}

export function objectResponse(c: Context<Env>, encoder: Encoder, obj: Record<string, unknown>, status = 200): Response {
  return new Response(encoder.object(obj), { status, headers: baseHeaders(c, encoder.contentType) });
}

export function listResponse(
  c: Context<Env>,
  encoder: Encoder,
  kind: string,
  apiVersion: string,
  meta: ListMeta,
  items: readonly Item[],
): Response {
  return new Response(encoder.list(kind, apiVersion, meta, items), { status: 200, headers: baseHeaders(c, encoder.contentType) });
}

/** `{"kind":"Status",...,"status":"Success"}` as deletes of most kinds answer. */
export function successStatus(details: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/** Writes a Status error: JSON unless the client accepts only another encoder we have. */
export function errorResponse(c: Context<Env> | undefined, err: StatusError, encoders: readonly Encoder[] = [jsonEncoder]): Response {
  const status: Status = err.status;
  let encoder: Encoder = jsonEncoder;
  if (c) {
    try {
      encoder = chooseEncoder(c, encoders);
    } catch {
      encoder = jsonEncoder;
    }
  }
  const headers = c ? baseHeaders(c, encoder.contentType) : new Headers({ 'content-type': 'application/json' });
  if (status.details?.retryAfterSeconds !== undefined) headers.set('retry-after', String(status.details.retryAfterSeconds));
  return new Response(encoder.object(status as unknown as Record<string, unknown>), { status: status.code, headers });
}

/** Maps anything thrown to a Status response; unexpected errors are logged and answered 500. */
export function toErrorResponse(c: Context<Env> | undefined, e: unknown, log: Logger, encoders?: readonly Encoder[]): Response {
  if (isStatusError(e)) return errorResponse(c, e, encoders);
  log.error('unhandled error in request', { error: e instanceof Error ? e : String(e), path: c?.req.path });
  return errorResponse(c, errors.internal(e instanceof Error ? e.message : String(e)), encoders);
}
