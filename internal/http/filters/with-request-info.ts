// internal/http/filters/with-request-info owns the first step of every request: parse what it
// is about once (verb, group, version, namespace, resource, name) for every later stage.
// The path is read as the client sent it: the adapter's URL resolves dot segments, so
// `/api/v1/namespaces/ns/configmaps/..` would otherwise address the namespace itself (a
// DELETE of a config map named ".." deleted the namespace); upstream sees the name ".." and
// refuses it. The `timeout` query parameter is checked here too, as upstream's
// WithRequestDeadline does before authentication: one that is not a Go duration is a 400
// (watches excepted, which upstream does not parse it for).
// Imports: apierrors, http/context, http/request-info, http/go-duration, http/respond.

import type { MiddlewareHandler } from 'hono';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import { parseGoDuration } from '../go-duration.js';
import { parseRequestInfo } from '../request-info.js';
import { errorResponse } from '../respond.js';

/**
 * The request target's path exactly as received and its query, or undefined when the adapter
 * does not expose an origin-form target. Read from the target itself: a WHATWG URL per request
 * costs more than everything else this filter does.
 */
function rawTarget(c: Parameters<MiddlewareHandler<Env>>[0]): { path: string; query: URLSearchParams } | undefined {
  const target = (c.env?.incoming as { url?: unknown } | undefined)?.url;
  if (typeof target !== 'string' || !target.startsWith('/')) return undefined;
  const q = target.indexOf('?');
  if (q < 0) return { path: target, query: new URLSearchParams() };
  // A fragment is no part of the query (clients do not send one; the URL parser drops it).
  const hash = target.indexOf('#', q);
  return { path: target.slice(0, q), query: new URLSearchParams(hash < 0 ? target.slice(q + 1) : target.slice(q + 1, hash)) };
}

export function withRequestInfo(): MiddlewareHandler<Env> {
  // Not async: every request passes here, and a promise turn of its own buys nothing.
  return (c, next) => {
    let target = rawTarget(c);
    if (!target) {
      const url = new URL(c.req.url);
      target = { path: url.pathname, query: url.searchParams };
    }
    const query = target.query;
    c.set('query', query);
    c.set('warnings', []);
    const info = parseRequestInfo(c.req.method, target.path, query);
    c.set('info', info);
    const timeout = query.get('timeout');
    if (timeout && info.verb !== 'watch') {
      const parsed = parseGoDuration(timeout);
      if (!parsed.ok) return Promise.resolve(errorResponse(c, errors.badRequest(`invalid timeout specified in the request URL - ${parsed.error}`)));
    }
    return next();
  };
}
