// internal/http/filters/with-metrics owns counting every request and timing it to its
// response (for watches and streamed lists: to their first byte), with the labels upstream
// uses, and the requests-in-flight gauge. It runs right after request info, so refused
// requests (401, 403, 429) count too. Imports: metrics, http/context.

import type { MiddlewareHandler } from 'hono';
import type { ServerMetrics } from '../../metrics/metrics.js';
import type { Env } from '../context.js';

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function withMetrics(metrics: ServerMetrics): MiddlewareHandler<Env> {
  return async (c, next) => {
    const started = performance.now();
    const info = c.get('info');
    const kind = info.isResourceRequest && MUTATING.has(info.verb) ? 'mutating' : 'readOnly';
    metrics.inflight.inc({ request_kind: kind });
    try {
      await next();
    } finally {
      metrics.inflight.dec({ request_kind: kind });
      const scope = !info.isResourceRequest ? '' : info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster';
      metrics.observe(
        {
          verb: info.isResourceRequest ? info.verb.toUpperCase() : c.req.method,
          group: info.apiGroup,
          version: info.apiVersion,
          resource: info.resource,
          subresource: info.subresource,
          scope,
          code: String(c.res?.status ?? 500),
        },
        (performance.now() - started) / 1000,
      );
    }
  };
}
