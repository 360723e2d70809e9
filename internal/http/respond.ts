// internal/http/respond owns writing errors (the one place an error becomes HTTP: a Status
// object, as JSON), success Statuses, and the `Warning:` header format. Objects and lists go
// through internal/http/representations. Imports: apierrors, log, context.

import type { Context } from 'hono';
import { errors, isStatusError, type Status, type StatusError } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import type { Env } from './context.js';

/** Formats a warning as upstream sends it: `299 - "text"` (the text quoted as Go's %q does). */
export const warningHeader = (text: string): string => `299 - ${JSON.stringify(text)}`;

/** `{"kind":"Status",...,"status":"Success"}` as deletes of most kinds answer. */
export function successStatus(details: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

const GO_BOOL: Record<string, boolean> = { 1: true, t: true, T: true, TRUE: true, true: true, True: true, 0: false, f: false, F: false, FALSE: false, false: false, False: false };

/**
 * Whether JSON output is indented, as upstream's isPrettyPrint decides: a non-empty `pretty`
 * query parameter (parsed as Go's strconv.ParseBool; anything else is false) wins, otherwise
 * clients that are people (User-Agent curl, Wget or Mozilla/5.0) get indented JSON.
 */
export function wantsPretty(c: Context<Env> | undefined): boolean {
  if (!c) return false;
  // The parsed query when the chain got that far; errors from earlier filters parse the URL.
  const query = (c.get('query') as URLSearchParams | undefined) ?? new URL(c.req.url).searchParams;
  const p = query.get('pretty');
  if (p) return GO_BOOL[p] ?? false;
  const ua = c.req.header('user-agent') ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/** Writes a Status error. Every client reads JSON errors, whatever it asked for. */
export function errorResponse(c: Context<Env> | undefined, err: StatusError): Response {
  const status: Status = err.status;
  // A plain record, as successful responses have (representations' respond): the node adapter
  // writes it as it is, where a Headers object is built, iterated and converted per response.
  // The names in the order a Headers object gave them (sorted), and the warnings on one line
  // joined by ", " as it joined them, so the response is what it was.
  const headers: Record<string, string> = { 'cache-control': 'no-cache, private', 'content-type': 'application/json' };
  if (status.details?.retryAfterSeconds !== undefined) headers['retry-after'] = String(status.details.retryAfterSeconds);
  const warnings = c?.get('warnings');
  if (warnings?.length) headers.warning = warnings.join(', ');
  const body = goOrder(status);
  // Go's JSON encoder ends a compact value with a newline; the indented form has none.
  return new Response(wantsPretty(c) ? JSON.stringify(body, null, 2) : `${JSON.stringify(body)}\n`, { status: status.code, headers });
}

/**
 * The Status in the field order of upstream's Go structs (clients that compare bodies byte for
 * byte see the same text), whatever order the error was built in.
 */
function goOrder(s: Status): Status {
  const out: Status = { kind: s.kind, apiVersion: s.apiVersion, metadata: s.metadata, status: s.status, message: s.message, ...(s.reason ? { reason: s.reason } : {}), code: s.code };
  if (s.details) {
    const d = s.details;
    const details: NonNullable<Status['details']> = {};
    if (d.name !== undefined) details.name = d.name;
    if (d.group !== undefined) details.group = d.group;
    if (d.kind !== undefined) details.kind = d.kind;
    if (d.uid !== undefined) details.uid = d.uid;
    if (d.causes !== undefined) details.causes = d.causes.map((c) => ({ ...(c.reason !== undefined ? { reason: c.reason } : {}), ...(c.message !== undefined ? { message: c.message } : {}), ...(c.field !== undefined ? { field: c.field } : {}) }));
    if (d.retryAfterSeconds !== undefined) details.retryAfterSeconds = d.retryAfterSeconds;
    // `code` follows `details` in the Go struct.
    delete (out as Partial<Status>).code;
    out.details = details;
    out.code = s.code;
  }
  return out;
}

/** Maps anything thrown to a Status response; unexpected errors are logged and answered 500. */
export function toErrorResponse(c: Context<Env> | undefined, e: unknown, log: Logger): Response {
  if (isStatusError(e)) return errorResponse(c, e);
  log.error('unhandled error in request', { error: e instanceof Error ? e : String(e), path: c?.req.path });
  return errorResponse(c, errors.internal(e instanceof Error ? e.message : String(e)));
}
