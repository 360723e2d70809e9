// internal/http/filters/with-request-info owns the first step of every request: parse what it
// is about once (verb, group, version, namespace, resource, name) for every later stage.
// Imports: http/context, http/request-info.

import type { MiddlewareHandler } from 'hono';
import type { Env } from '../context.js';
import { parseRequestInfo } from '../request-info.js';

export function withRequestInfo(): MiddlewareHandler<Env> {
  return async (c, next) => {
    const url = new URL(c.req.url);
    c.set('query', url.searchParams);
    c.set('warnings', []);
    c.set('info', parseRequestInfo(c.req.method, url.pathname, url.searchParams));
    await next();
  };
}
